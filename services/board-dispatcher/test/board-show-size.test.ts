/**
 * board.show never answers 500 for its size. A job result over
 * RESULT_MAX_BYTES (1 MiB) is refused by the worker, so board.show fills its
 * page of cards by bytes as well as by count (RESULT_PAGE_BYTES): a card that
 * does not fit whole starts the next page, and a card too large for any page
 * comes in parts, its evidence continued from `next.evidenceOffset`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOARD_LIMITS, RESULT_PAGE_BYTES } from '@vouch/contracts';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const BOARD = 'run-heavy';
const FULL = BOARD_LIMITS.evidencePerCard;

/** Plain ASCII at the contract's limits: a full card is about 630 KB, two do not fit one answer. */
const plain = (i: number) => ({ kind: 'tool_result', summary: `reading ${i}: ${'x'.repeat(BOARD_LIMITS.evidenceSummaryChars - 20)}`, ref: `call-${i}-${'y'.repeat(BOARD_LIMITS.evidenceRefChars - 20)}` });
/** Quotes escape to two bytes and "é" is two in UTF-8: a full card of these is about 1.2 MB, more than any one answer. */
const dense = (i: number) => ({ kind: 'message', summary: `quote ${i}: ${'"'.repeat(BOARD_LIMITS.evidenceSummaryChars - 20)}`, ref: `msg-${i}-${'é'.repeat(BOARD_LIMITS.evidenceRefChars - 20)}` });

describe('showing a board whose cards pass the cap on one result', () => {
  let gw: GatewayUnderTest;
  let svc: BoardServiceUnderTest;
  let key: string;

  const call = async (path: string, json?: unknown) => {
    const res = await gw.fetch(path, { key, ...(json !== undefined ? { json } : {}) });
    const raw = await res.text();
    return { status: res.status, raw, body: JSON.parse(raw) as Json };
  };

  beforeAll(async () => {
    gw = await startGatewayUnderTest('board_show_size');
    svc = await startBoardServiceUnderTest('board_show_size', {}, { prefix: gw.prefix });
    key = await gw.agentKey('acme', 'planner');
    expect((await call('/v1/boards', { boardId: BOARD, title: 'Read every meter', scope: { kind: 'run', ref: BOARD }, owner: 'planner' })).status).toBe(200);
    // No assignee: nothing dispatches them, so the order board.show pages in stays put.
    const added = await call(`/v1/boards/${BOARD}/cards`, { cards: [{ key: 'plain', title: 'Read the plain meters' }, { key: 'dense', title: 'Read the quoted meters' }] });
    expect(added.body.cards.map((c: { id: string }) => c.id)).toEqual(['c-1', 'c-2']);
    for (const [cardId, make, from] of [['c-1', plain, 0], ['c-2', dense, FULL]] as const) {
      for (let batch = 0; batch < FULL / BOARD_LIMITS.evidencePerCall; batch++) {
        const items = Array.from({ length: BOARD_LIMITS.evidencePerCall }, (_, i) => make(from + batch * BOARD_LIMITS.evidencePerCall + i + 1));
        const attached = await call(`/v1/boards/${BOARD}/cards/${cardId}/evidence`, { items });
        expect(attached.status, attached.raw.slice(0, 300)).toBe(200);
      }
    }
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('answers the default board.show with 200: a page that fits, and a cursor to the rest', async () => {
    const first = await call(`/v1/boards/${BOARD}`);
    expect(first.status, first.raw.slice(0, 300)).toBe(200);
    expect(Buffer.byteLength(first.raw)).toBeLessThanOrEqual(RESULT_PAGE_BYTES);
    expect(first.body.totalCards).toBe(2);
    // c-1 fits whole; c-2 does not fit beside it, so it starts the next page.
    expect(first.body.cards.map((c: Json) => [c.id, c.evidence.length, c.evidenceOffset, c.evidenceTotal])).toEqual([['c-1', FULL, 0, FULL]]);
    expect(first.body).toMatchObject({ truncated: true, next: { offset: 1, evidenceOffset: 0 } });
    expect(first.body.text).toMatch(/^Board run-heavy "Read every meter" open/);
  });

  it('pages through every card and every evidence item exactly once', async () => {
    const seen = new Map<string, string[]>();
    const titles = new Map<string, string>();
    let query = '';
    let pages = 0;
    for (;;) {
      const page = await call(`/v1/boards/${BOARD}${query}`);
      expect(page.status, page.raw.slice(0, 300)).toBe(200);
      expect(Buffer.byteLength(page.raw)).toBeLessThanOrEqual(RESULT_PAGE_BYTES);
      pages++;
      for (const card of page.body.cards) {
        const ids = seen.get(card.id) ?? [];
        // A card in parts continues where the last part stopped.
        expect(card.evidenceOffset).toBe(ids.length);
        expect(card.evidenceTotal).toBe(FULL);
        seen.set(card.id, [...ids, ...card.evidence.map((e: { id: string }) => e.id)]);
        titles.set(card.id, card.title);
      }
      if (page.body.next === null) {
        expect(page.body.truncated).toBe(false);
        break;
      }
      query = `?offset=${page.body.next.offset}&evidenceOffset=${page.body.next.evidenceOffset}`;
    }
    // c-1 whole, then c-2 in two parts.
    expect(pages).toBe(3);
    expect(titles).toEqual(new Map([['c-1', 'Read the plain meters'], ['c-2', 'Read the quoted meters']]));
    expect(seen.get('c-1')).toEqual(Array.from({ length: FULL }, (_, i) => `e-${i + 1}`));
    expect(seen.get('c-2')).toEqual(Array.from({ length: FULL }, (_, i) => `e-${FULL + i + 1}`));
  });

  it('answers a write on a card too large for one answer with its latest evidence, and says where that starts', async () => {
    const changed = await call(`/v1/boards/${BOARD}/cards/c-2/changes`, { priority: 'high', reason: 'the quoted meters are due first' });
    expect(changed.status, changed.raw.slice(0, 300)).toBe(200);
    expect(Buffer.byteLength(changed.raw)).toBeLessThanOrEqual(RESULT_PAGE_BYTES);
    const { card } = changed.body;
    expect(card).toMatchObject({ id: 'c-2', priority: 'high', evidenceTotal: FULL });
    expect(card.evidenceOffset).toBeGreaterThan(0);
    // The newest items, up to the last one, and none before evidenceOffset.
    expect(card.evidence.map((e: { id: string }) => e.id)).toEqual(Array.from({ length: FULL - card.evidenceOffset }, (_, i) => `e-${FULL + card.evidenceOffset + i + 1}`));
    // A card that fits comes whole.
    const small = await call(`/v1/boards/${BOARD}/cards/c-1/changes`, { priority: 'low', reason: 'the plain meters can wait' });
    expect(small.status, small.raw.slice(0, 300)).toBe(200);
    expect(small.body.card).toMatchObject({ id: 'c-1', evidenceOffset: 0, evidenceTotal: FULL });
    expect(small.body.card.evidence).toHaveLength(FULL);
  });

  it('keeps paging by count where the bytes fit', async () => {
    const none = await call(`/v1/boards/${BOARD}?limit=0`);
    expect(none).toMatchObject({ status: 200, body: { cards: [], totalCards: 2, truncated: false, next: { offset: 0, evidenceOffset: 0 } } });
    const past = await call(`/v1/boards/${BOARD}?offset=2`);
    expect(past).toMatchObject({ status: 200, body: { cards: [], totalCards: 2, truncated: false, next: null } });
  });
});
