import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResultTooLargeError, jsonBytes } from '@vouch/contracts';
import type { BoardEvidence } from '@vouch/contracts';
import { publicCard, type CardState } from '../src/domain/replay-board.js';
import { cardWithinBytes, showBoardPage, type ShowHead } from '../src/domain/show-board.js';

// board.show's pages by bytes (show-board.ts): whatever the cards hold and whatever the budget,
// paging with `next` from the start shows every card and every evidence item exactly once, in
// order, and a page passes its budget only by the one item a page must take to move on.

const AT = '2025-03-01T10:00:00.000Z';

const head: ShowHead = {
  board: {
    boardId: 'b-1',
    title: 'Read every meter',
    goal: 'Read them',
    scope: { kind: 'run', ref: 'run-1' },
    owner: 'planner',
    visibility: 'admin',
    status: 'open',
    policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 120 },
    version: 3,
    counts: { ready: 1 },
    createdAt: AT,
    updatedAt: AT,
  },
  text: 'Board b-1 "Read every meter" open, v3',
  decisions: [],
};

function cardWith(id: string, evidence: BoardEvidence[]): CardState {
  return {
    id,
    key: null,
    title: `card ${id}`,
    description: '',
    lane: 'worker',
    assignee: null,
    status: 'ready',
    blockReason: null,
    priority: 'normal',
    dependsOn: [],
    evidenceRequirements: [],
    deadline: null,
    evidence,
    attempt: 0,
    failures: 0,
    submittedBy: null,
    submission: null,
    lastReview: null,
    createdAt: AT,
    statusSince: AT,
    claim: null,
    blocks: {},
  };
}

/** Cards whose evidence summaries are the given lengths; evidence ids run across the board. */
function board(sizes: number[][]): CardState[] {
  let n = 0;
  return sizes.map((lengths, c) => cardWith(`c-${c + 1}`, lengths.map((len) => ({ id: `e-${++n}`, kind: 'message', summary: `"é${'x'.repeat(len)}`, covers: [], attachedBy: 'w', at: AT }))));
}

const bareBytes = jsonBytes({ ...head, cards: [], totalCards: 0, next: { offset: 0, evidenceOffset: Number.MAX_SAFE_INTEGER }, truncated: false });

describe('board.show pages by bytes', () => {
  it('shows every card and evidence item exactly once, each page within its budget but for one forced item', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 3_000 }), { maxLength: 12 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 8_000 }),
        (sizes, limit, spare) => {
          const cards = board(sizes);
          const maxBytes = bareBytes + spare;
          const seen = new Map<string, string[]>();
          let position = { offset: 0, evidenceOffset: 0 };
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThan(200);
            const page = showBoardPage(head, cards, { ...position, limit }, maxBytes);
            // A page always moves on: it holds a card unless none is left.
            if (cards.length > 0) expect(page.cards.length).toBeGreaterThan(0);
            expect(page.cards.length).toBeLessThanOrEqual(limit);
            const forced = page.cards.length === 1 && page.cards[0]!.evidence.length <= 1;
            if (!forced) expect(jsonBytes(page)).toBeLessThanOrEqual(maxBytes);
            for (const card of page.cards) {
              const ids = seen.get(card.id) ?? [];
              expect(card.evidenceOffset).toBe(ids.length);
              expect(card.evidenceTotal).toBe(cards.find((c) => c.id === card.id)!.evidence.length);
              expect(card).not.toHaveProperty('claim');
              seen.set(card.id, [...ids, ...card.evidence.map((e) => e.id)]);
            }
            if (page.next === null) break;
            position = page.next;
          }
          expect([...seen.keys()]).toEqual(cards.map((c) => c.id));
          for (const card of cards) expect(seen.get(card.id)).toEqual(card.evidence.map((e) => e.id));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps cards whole and the page untruncated when they fit', () => {
    const cards = board([[10, 10], [], [5]]);
    const page = showBoardPage(head, cards, { offset: 0, limit: 2, evidenceOffset: 0 });
    expect(page.cards.map((c) => [c.id, c.evidence.length, c.evidenceOffset, c.evidenceTotal])).toEqual([
      ['c-1', 2, 0, 2],
      ['c-2', 0, 0, 0],
    ]);
    expect(page).toMatchObject({ totalCards: 3, truncated: false, next: { offset: 2, evidenceOffset: 0 } });
    expect(showBoardPage(head, cards, { offset: 2, limit: 2, evidenceOffset: 0 })).toMatchObject({ truncated: false, next: null });
    expect(showBoardPage(head, cards, { offset: 1, limit: 0, evidenceOffset: 0 })).toMatchObject({ cards: [], truncated: false, next: { offset: 1, evidenceOffset: 0 } });
    expect(showBoardPage(head, cards, { offset: 3, limit: 5, evidenceOffset: 0 })).toMatchObject({ cards: [], truncated: false, next: null });
  });

  it('refuses with a 413 naming the limit when the summary, text and decisions alone pass it', () => {
    expect(() => showBoardPage(head, [], { offset: 0, limit: 1, evidenceOffset: 0 }, bareBytes - 1)).toThrow(ResultTooLargeError);
    expect(() => showBoardPage(head, [], { offset: 0, limit: 1, evidenceOffset: 0 }, bareBytes - 1)).toThrow(`past the ${bareBytes - 1}-byte limit on one answer`);
  });
});

describe('a write answers with its card within bytes', () => {
  it('keeps the newest evidence that fits, whole when it all fits, never past the budget', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3_000 }), { maxLength: 20 }), fc.integer({ min: 0, max: 30_000 }), (lengths, spare) => {
        const card = publicCard(board([lengths])[0]!);
        const maxBytes = jsonBytes({ ...card, evidence: [], evidenceOffset: lengths.length, evidenceTotal: lengths.length }) + spare;
        const shown = cardWithinBytes(card, maxBytes);
        expect(jsonBytes(shown)).toBeLessThanOrEqual(maxBytes);
        expect(shown.evidenceTotal).toBe(card.evidence.length);
        // The latest items, contiguous to the last one.
        expect(shown.evidence).toEqual(card.evidence.slice(shown.evidenceOffset));
        // Not one more would have fitted.
        if (shown.evidenceOffset > 0) expect(jsonBytes({ ...shown, evidence: card.evidence.slice(shown.evidenceOffset - 1) })).toBeGreaterThan(maxBytes);
        if (jsonBytes({ ...card, evidenceOffset: 0, evidenceTotal: card.evidence.length }) <= maxBytes) expect(shown.evidenceOffset).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
