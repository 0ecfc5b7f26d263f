import { BadInputError, RESULT_PAGE_BYTES, ResultTooLargeError, jsonBytes, linesWithinBytes, type BlockReason, type BoardEvidenceKind, type BoardVisibility, type CardStatus } from '@vouch/contracts';
import { boardRedaction, redactForPublic } from './redact-public.js';
import { byUrgency } from './render-board.js';
import type { BoardState, CardState } from './replay-board.js';

/**
 * The built-in synthesizer: the board's answer composed only from verified
 * cards (their submission and the evidence behind it), followed by every card
 * that is not verified, named with why. It never presents an unverified card
 * as done, and `complete` is true only when every card that was not cancelled
 * is verified.
 *
 * The text comes in two forms. admin names cards, evidence ids and refs, for
 * the operator. public is for a public chat (the kanban work order's phase 5):
 * each verified item's outcome from its title and its worker's submission,
 * what is not done named in words, and nothing a worker wrote passes without
 * redact-public.ts taking out paths, refs and internal ids. The structured
 * fields name cards by id in both forms: they are for the caller to act on.
 */

export type SynthesisForm = BoardVisibility;

export interface UnresolvedCard {
  cardId: string;
  title: string;
  status: CardStatus;
  reason: string;
}

export interface Synthesis {
  form: SynthesisForm;
  complete: boolean;
  text: string;
  /** Each verified card with its latest evidence ids (at most SYNTHESIS_LIMITS.evidenceIds) and how many it holds. */
  verified: Array<{ cardId: string; title: string; evidenceIds: string[]; evidenceTotal: number }>;
  unresolved: UnresolvedCard[];
  /** True when the text stops before its last card, to keep the answer under the cap on one result. */
  truncated: boolean;
}

/**
 * How big a synthesis may grow. A job result over 1 MiB is refused, and a
 * board may hold 1,000 cards of 200 evidence items each, so the answer is
 * bounded: the admin text names a card's latest evidence only, the text stops
 * at a line boundary once it passes `textBytes` (saying how many cards it left
 * out), and the structured list keeps each card's latest evidence ids.
 */
export const SYNTHESIS_LIMITS = {
  /** Evidence items the admin text names per card, the latest ones, each ref clipped to `refChars`. */
  evidenceNamed: 10,
  refChars: 200,
  /** Evidence ids per card in `verified`, the latest ones. */
  evidenceIds: 50,
  textBytes: 512 * 1024,
} as const;

/** Why a card that is not verified is not, in words an answer can carry. */
export function unresolvedReason(state: BoardState, card: CardState): string {
  switch (card.status) {
    case 'blocked':
      return `blocked (${card.blockReason ?? 'no reason given'})`;
    case 'submitted':
      return 'submitted, not yet verified';
    case 'changes_requested':
      return `changes requested: ${card.lastReview?.missing.join('; ') || 'see the review'}`;
    case 'running':
      return `in progress (${card.claim?.by ?? card.assignee ?? 'unassigned'})`;
    case 'dispatched':
      return `dispatched to ${card.assignee ?? 'nobody'}, not yet started`;
    case 'ready':
      return card.assignee ? `ready, waiting for ${card.assignee}` : 'ready, but nobody is assigned';
    case 'todo': {
      const waiting = card.dependsOn.filter((d) => state.cards[d]?.status !== 'verified');
      return waiting.length ? `waiting on ${waiting.join(', ')}` : 'not started';
    }
    default:
      return card.status;
  }
}

/** The cards that keep a board from being done: everything neither verified nor cancelled, most urgent first. */
export function unresolvedCards(state: BoardState): UnresolvedCard[] {
  return byUrgency(state)
    .filter((c) => c.status !== 'verified' && c.status !== 'cancelled')
    .map((c) => ({ cardId: c.id, title: c.title, status: c.status, reason: unresolvedReason(state, c) }));
}

const BLOCKED_WORDS: Record<BlockReason, string> = {
  awaiting_input: 'waiting for input',
  external_dependency: 'waiting on something outside this work',
  dependency_cancelled: 'something it needed was cancelled',
  repeated_failures: 'it failed repeatedly',
  needs_split: 'it needs to be broken down',
  no_assignee: 'nobody is working on it',
  other: 'blocked',
};

/** Why an item is not done, in words for a public answer: no agent names, no ids, never "done". */
export function publicReason(state: BoardState, card: CardState): string {
  switch (card.status) {
    case 'blocked':
      return card.blockReason ? BLOCKED_WORDS[card.blockReason] : 'blocked';
    case 'submitted':
      return 'waiting for review';
    case 'changes_requested':
      return 'needs more evidence';
    case 'running':
      return 'in progress';
    case 'todo':
      return card.dependsOn.some((d) => state.cards[d]?.status !== 'verified') ? 'waiting on other items' : 'not started';
    default:
      return 'not started';
  }
}

const EVIDENCE_WORDS: Record<BoardEvidenceKind, string> = {
  tool_result: 'tool output',
  file: 'file',
  url: 'web page',
  message: 'message',
  verification_note: 'verification note',
};

function clipRef(ref: string): string {
  return ref.length > SYNTHESIS_LIMITS.refChars ? `${ref.slice(0, SYNTHESIS_LIMITS.refChars - 1)}…` : ref;
}

/** The text up to the card that would pass `maxBytes` as JSON, and a last line naming how many cards it left out. */
function withinBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  return linesWithinBytes(text, maxBytes, (leftOut) => {
    const left = leftOut.filter((l) => l.startsWith('- ')).length;
    return `… ${left} more ${left === 1 ? 'card' : 'cards'} not shown here, to keep this answer under ${maxBytes} bytes: board.show lists every card`;
  });
}

function adminText(state: BoardState, verifiedCards: readonly CardState[], unresolved: readonly UnresolvedCard[], complete: boolean): string {
  const cancelled = state.order.filter((id) => state.cards[id]!.status === 'cancelled').length;
  const lines: string[] = [];
  lines.push(complete ? `${state.title}: done. Every card is verified.` : `${state.title}: not done. ${verifiedCards.length} of ${state.order.length - cancelled} cards are verified.`);
  if (verifiedCards.length) {
    lines.push('', 'Verified:');
    for (const card of verifiedCards) {
      const named = card.evidence.slice(-SYNTHESIS_LIMITS.evidenceNamed).map((e) => (e.ref ? `${e.id} (${clipRef(e.ref)})` : e.id));
      const earlier = card.evidence.length - named.length;
      if (earlier > 0) named.push(`… and ${earlier} earlier: board.show lists them all`);
      lines.push(`- ${card.id} ${card.title}: ${card.submission ?? 'verified'} [evidence ${named.join(', ')}]`);
    }
  }
  if (unresolved.length) {
    lines.push('', 'Not verified (do not present these as done):');
    for (const u of unresolved) lines.push(`- ${u.cardId} ${u.title}: ${u.reason}`);
  }
  return lines.join('\n');
}

function publicText(state: BoardState, verifiedCards: readonly CardState[], unresolved: readonly UnresolvedCard[], complete: boolean): string {
  const redaction = boardRedaction(state);
  const safe = (text: string) => redactForPublic(text, redaction);
  const open = unresolved.map((u) => state.cards[u.cardId]!);
  const counted = verifiedCards.length + open.length;
  const lines: string[] = [];
  lines.push(complete ? `${safe(state.title)}: done, every item verified.` : `${safe(state.title)}: not done yet, ${verifiedCards.length} of ${counted} ${counted === 1 ? 'item' : 'items'} verified.`);
  if (verifiedCards.length) {
    lines.push('', 'Verified:');
    for (const card of verifiedCards) {
      const outcome = card.submission ? safe(card.submission) : '';
      const kinds = [...new Set(card.evidence.map((e) => EVIDENCE_WORDS[e.kind]))];
      lines.push(`- ${safe(card.title)}${outcome ? `: ${outcome}` : ''} (evidence: ${kinds.join(', ')})`);
    }
  }
  if (open.length) {
    lines.push('', `${open.length} ${open.length === 1 ? 'item is' : 'items are'} not done:`);
    for (const card of open) lines.push(`- ${safe(card.title)} (${publicReason(state, card)})`);
  }
  return lines.join('\n');
}

/**
 * The board's answer in `form` (the board's visibility when left out). A
 * public board's answer is public only: its internals stay out of a public
 * chat even when a caller asks for them (board.show is how an admin inspects it).
 */
export function synthesizeBoard(state: BoardState, form: SynthesisForm = state.visibility): Synthesis {
  if (form === 'admin' && state.visibility === 'public') {
    throw new BadInputError(
      `board "${state.boardId}" is public: its answer comes only in the public form, so paths, refs and internal ids stay out of public chats. Leave form out (or pass public); to inspect the board, use board.show`,
      [{ path: 'form', message: 'admin is refused on a public board: leave form out or pass public' }],
    );
  }
  const verifiedCards = state.order.map((id) => state.cards[id]!).filter((c) => c.status === 'verified');
  const unresolved = unresolvedCards(state);
  const complete = verifiedCards.length > 0 && unresolved.length === 0;
  const { text, truncated } = withinBytes(form === 'admin' ? adminText(state, verifiedCards, unresolved, complete) : publicText(state, verifiedCards, unresolved, complete), SYNTHESIS_LIMITS.textBytes);
  const synthesis: Synthesis = {
    form,
    complete,
    text,
    verified: verifiedCards.map((c) => ({ cardId: c.id, title: c.title, evidenceIds: c.evidence.slice(-SYNTHESIS_LIMITS.evidenceIds).map((e) => e.id), evidenceTotal: c.evidence.length })),
    unresolved,
    truncated,
  };
  // Not reached within the contract's limits but with titles of escaped characters on a full board; a 413 then, never a 500.
  const bytes = jsonBytes(synthesis);
  if (bytes > RESULT_PAGE_BYTES) {
    throw new ResultTooLargeError(`board "${state.boardId}": its synthesis takes ${bytes} bytes as JSON, past the ${RESULT_PAGE_BYTES}-byte limit on one answer: read the board a page at a time with board.show`, {
      boardId: state.boardId,
      bytes,
      maxBytes: RESULT_PAGE_BYTES,
    });
  }
  return synthesis;
}
