import { RESULT_PAGE_BYTES, ResultTooLargeError, countWithinBytes, jsonBytes, type BoardDecision, type BoardSummary, type Card, type ShownCard } from '@vouch/contracts';
import { publicCard, type CardState } from './replay-board.js';

/** Where a board.show page starts: the card at `offset`, from its evidence item `evidenceOffset`. */
export interface ShowPosition {
  offset: number;
  limit: number;
  evidenceOffset: number;
}

/** What board.show says about the board whatever the page: the parts it does not page. */
export interface ShowHead {
  board: BoardSummary;
  text: string;
  decisions: BoardDecision[];
}

export interface ShowPage extends ShowHead {
  cards: ShownCard[];
  totalCards: number;
  next: { offset: number; evidenceOffset: number } | null;
  truncated: boolean;
}

/**
 * One page of board.show: up to `limit` cards from `offset`, most urgent
 * first, and never more than `maxBytes` of JSON in all, so the answer fits
 * under the cap on one job result however much evidence the cards hold.
 *
 * A card is shown whole when it fits beside the cards before it; one that
 * does not starts the next page. A card that does not fit even as the first
 * of a page comes in parts: as much of its evidence as fits (at least one
 * item, so paging moves on), and `next` continues it from the following item.
 * A card that ends a page short of `limit` marks the page `truncated`.
 */
export function showBoardPage(head: ShowHead, ordered: readonly CardState[], position: ShowPosition, maxBytes: number = RESULT_PAGE_BYTES): ShowPage {
  const totalCards = ordered.length;
  // Measured with the longest cursor the input allows, so whatever `next` turns out to be fits.
  const bareBytes = jsonBytes({ ...head, cards: [], totalCards, next: { offset: totalCards, evidenceOffset: Number.MAX_SAFE_INTEGER }, truncated: false });
  if (bareBytes > maxBytes) {
    // Not reached within the contract's limits (the text, 50 decisions and the summary stay far below); kept so that an answer is never a 500.
    throw new ResultTooLargeError(`board "${head.board.boardId}": its summary, text and decisions alone take ${bareBytes} bytes as JSON, past the ${maxBytes}-byte limit on one answer`, {
      boardId: head.board.boardId,
      bytes: bareBytes,
      maxBytes,
    });
  }
  let room = maxBytes - bareBytes;
  const cards: ShownCard[] = [];
  let index = position.offset;
  let from = position.evidenceOffset;
  let truncated = false;
  while (index < totalCards && cards.length < position.limit) {
    const card = publicCard(ordered[index]!);
    const start = Math.min(from, card.evidence.length);
    const whole: ShownCard = { ...card, evidence: card.evidence.slice(start), evidenceOffset: start, evidenceTotal: card.evidence.length };
    const comma = cards.length > 0 ? 1 : 0;
    const bytes = jsonBytes(whole) + comma;
    if (bytes <= room) {
      cards.push(whole);
      room -= bytes;
      index++;
      from = 0;
      continue;
    }
    truncated = true;
    // Not the first card of the page: it may fit whole on the next one.
    if (cards.length > 0) break;
    const bare = jsonBytes({ ...whole, evidence: [] });
    const count = countWithinBytes(whole.evidence, room - bare, 1);
    cards.push({ ...whole, evidence: whole.evidence.slice(0, count) });
    if (start + count < card.evidence.length) {
      from = start + count;
    } else {
      index++;
      from = 0;
    }
    break;
  }
  const next = index < totalCards ? { offset: index, evidenceOffset: from } : null;
  return { ...head, cards, totalCards, next, truncated };
}

/** What a write's answer holds beside its card (ids, version, a review's reasons): room kept out of the card's bytes. */
export const WRITE_ANSWER_ROOM = 64 * 1024;

/**
 * A card as a write answers with it (claim, change, submit, review): whole
 * when it fits in `maxBytes` of JSON; otherwise with as many of its latest
 * evidence items as fit (the ones a submission just attached come last), and
 * `evidenceOffset` saying where they start, so the answer stays under the cap
 * on one job result. board.show pages the earlier ones.
 */
export function cardWithinBytes(card: Card, maxBytes: number = RESULT_PAGE_BYTES - WRITE_ANSWER_ROOM): ShownCard {
  const total = card.evidence.length;
  const whole: ShownCard = { ...card, evidenceOffset: 0, evidenceTotal: total };
  if (jsonBytes(whole) <= maxBytes) return whole;
  // Measured with the largest offset, so whatever it turns out to be fits.
  const bare = jsonBytes({ ...whole, evidence: [], evidenceOffset: total });
  const newestFirst = [...card.evidence].reverse();
  const count = countWithinBytes(newestFirst, maxBytes - bare);
  return { ...whole, evidence: card.evidence.slice(total - count), evidenceOffset: total - count };
}
