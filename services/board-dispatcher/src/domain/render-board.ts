import { BOARD_LIMITS, type CardStatus } from '@vouch/contracts';
import { countByStatus, type BoardState, type CardState } from './replay-board.js';
import { priorityRank } from './board-commands.js';
import { coverageOf } from './verify-card.js';

/**
 * board.show's text: what a model needs to act on the board, in at most
 * BOARD_LIMITS.showChars characters whatever the board's size. One header
 * line with counts, then one line per card, most urgent first, until the
 * budget is spent; the cards left out are summed up by status in the last
 * line. Finished cards (verified, cancelled) come last, so a long board
 * spends its budget on the work still open.
 */

/** How much a status needs attention: work waiting on a decision first, finished work last. */
const STATUS_URGENCY: Record<CardStatus, number> = {
  changes_requested: 0,
  blocked: 1,
  submitted: 2,
  running: 3,
  dispatched: 4,
  ready: 5,
  todo: 6,
  verified: 7,
  cancelled: 8,
};

/** Cards ordered most urgent first: open before finished, then priority, deadline, status, age. */
export function byUrgency(state: BoardState): CardState[] {
  const index = new Map(state.order.map((id, i) => [id, i]));
  const finished = (c: CardState) => (c.status === 'verified' || c.status === 'cancelled' ? 1 : 0);
  return state.order
    .map((id) => state.cards[id]!)
    .sort(
      (a, b) =>
        finished(a) - finished(b) ||
        priorityRank(a.priority) - priorityRank(b.priority) ||
        (a.deadline ?? '\uffff').localeCompare(b.deadline ?? '\uffff') ||
        STATUS_URGENCY[a.status] - STATUS_URGENCY[b.status] ||
        index.get(a.id)! - index.get(b.id)!,
    );
}

const PRIORITY_MARK: Record<string, string> = { urgent: '!!', high: '!', normal: '', low: '~' };

function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

/** One card as one line: id, status, priority, assignee, title, and what it waits on or lacks. */
export function cardLine(state: BoardState, card: CardState, titleChars = 48): string {
  const parts = [`${card.id} ${card.status}${card.status === 'blocked' && card.blockReason ? `(${card.blockReason})` : ''}${PRIORITY_MARK[card.priority]}`];
  if (card.assignee) parts.push(`@${card.assignee}`);
  parts.push(clip(card.title, titleChars));
  const waiting = card.dependsOn.filter((d) => state.cards[d]?.status !== 'verified');
  if (waiting.length && !(card.status === 'verified' || card.status === 'cancelled')) parts.push(`⟵${waiting.join(',')}`);
  if (card.evidenceRequirements.length) {
    const covered = coverageOf(card).filter((c) => c.evidenceIds.length > 0).length;
    parts.push(`ev ${covered}/${card.evidenceRequirements.length}`);
  } else if (card.evidence.length) parts.push(`ev ${card.evidence.length}`);
  if (card.status === 'changes_requested' && card.lastReview) parts.push(`missing: ${clip(card.lastReview.missing.join('; '), 60)}`);
  if (card.deadline && card.status !== 'verified' && card.status !== 'cancelled') parts.push(`due ${card.deadline.slice(0, 16)}`);
  return parts.join(' ');
}

export function renderBoardText(state: BoardState, maxChars: number = BOARD_LIMITS.showChars): string {
  const counts = countByStatus(state);
  const countText = Object.entries(counts)
    .sort(([a], [b]) => STATUS_URGENCY[a as CardStatus] - STATUS_URGENCY[b as CardStatus])
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const header = `Board ${clip(state.boardId, 60)} "${clip(state.title, 80)}" ${state.status}, v${state.version}: ${state.order.length} cards${countText ? ` (${countText})` : ''}`;
  const cards = byUrgency(state);
  // Shorter titles when the board is long, so more cards fit before the summary line.
  const titleChars = cards.length > 60 ? 24 : cards.length > 25 ? 36 : 48;
  const lines = [header];
  let used = header.length;
  // Room kept for the closing summary line.
  const reserve = 160;
  let shown = 0;
  for (const card of cards) {
    const line = cardLine(state, card, titleChars);
    if (used + 1 + line.length > maxChars - reserve) break;
    lines.push(line);
    used += 1 + line.length;
    shown += 1;
  }
  if (shown < cards.length) {
    const rest: Record<string, number> = {};
    for (const card of cards.slice(shown)) rest[card.status] = (rest[card.status] ?? 0) + 1;
    const restText = Object.entries(rest)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    lines.push(clip(`+${cards.length - shown} more (${restText}): page through them with board.show offset/limit`, reserve - 1));
  }
  const text = lines.join('\n');
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}
