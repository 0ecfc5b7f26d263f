/**
 * A read never answers 500 for its size. A job result over RESULT_MAX_BYTES
 * (1 MiB) is refused by the worker, so ledger.get fills its page of evidence
 * by bytes as well as by count (RESULT_PAGE_BYTES) and says where the next
 * page starts; a ledger whose parts that are not paged alone pass the budget
 * is refused with a 413 naming the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_PAGE, LEDGER_LIMITS, RESULT_PAGE_BYTES } from '@vouch/contracts';
import { RESULT_MAX_BYTES } from '@vouch/platform';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { ok } from './drive-ledger.js';
import { startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const RUN = 'wide-ledger';
const ITEMS = EVIDENCE_PAGE.max;
/** An observation as large as the contract takes: 500 of them are about 2.6 MB of JSON. */
const item = (i: number) =>
  ok('runtime_observation', 'probe', `reading r-${i}: ${'x'.repeat(LEDGER_LIMITS.summaryChars - 20)}`, { rawRef: `blob://readings/${i}/${'y'.repeat(LEDGER_LIMITS.rawRefChars - 40)}` });

describe('reading a ledger whose evidence passes the cap on one result', () => {
  let gw: GatewayUnderTest;
  let svc: LedgerServiceUnderTest;
  let key: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('ledger_read_size');
    svc = await startLedgerServiceUnderTest('ledger_read_size', {}, { prefix: gw.prefix });
    key = await gw.createKey('acme');
    expect((await gw.fetch('/v1/ledgers', { key, json: { runId: RUN, goal: 'Collect five hundred long readings' } })).status).toBe(200);
    for (let batch = 0; batch < ITEMS / 100; batch++) {
      const items = Array.from({ length: 100 }, (_, i) => item(batch * 100 + i + 1));
      expect((await gw.fetch(`/v1/ledgers/${RUN}/evidence`, { key, json: { items } })).status).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('keeps its page budget under the cap by more than the largest item', () => {
    const largest = JSON.stringify({ ...item(10_000), summary: '\u0001'.repeat(LEDGER_LIMITS.summaryChars), rawRef: '\u0001'.repeat(LEDGER_LIMITS.rawRefChars), id: 'ev-10000', seq: 10_000, observedAt: new Date().toISOString(), recordedAt: new Date().toISOString() });
    expect(RESULT_PAGE_BYTES + Buffer.byteLength(largest)).toBeLessThan(RESULT_MAX_BYTES);
  });

  it('answers evidenceLimit=500 with a page that fits, and a cursor that returns every item once', async () => {
    const seen: number[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const res = await gw.fetch(`/v1/ledgers/${RUN}?evidenceAfter=${after}&evidenceLimit=${ITEMS}`, { key });
      const raw = await res.text();
      expect(res.status, raw.slice(0, 300)).toBe(200);
      expect(Buffer.byteLength(raw)).toBeLessThanOrEqual(RESULT_PAGE_BYTES);
      const body = JSON.parse(raw) as Json;
      pages++;
      const seqs = body.evidence.map((e: { seq: number }) => e.seq);
      expect(seqs.length).toBeGreaterThan(0);
      seen.push(...seqs);
      const last = seqs.at(-1);
      const rest = ITEMS - seen.length;
      expect(body.evidencePage).toEqual({ total: ITEMS, after, limit: ITEMS, nextAfter: rest > 0 ? last : null, truncated: rest > 0 });
      if (body.evidencePage.nextAfter === null) break;
      after = body.evidencePage.nextAfter;
    }
    expect(pages).toBeGreaterThan(2);
    expect(seen).toEqual(Array.from({ length: ITEMS }, (_, i) => i + 1));
  });

  it('fills the default page by count when it fits', async () => {
    const res = await gw.fetch(`/v1/ledgers/${RUN}`, { key });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(body.evidence).toHaveLength(EVIDENCE_PAGE.default);
    expect(body.evidencePage).toEqual({ total: ITEMS, after: 0, limit: EVIDENCE_PAGE.default, nextAfter: EVIDENCE_PAGE.default, truncated: false });
  });

  it('refuses with a 413 naming the limit when the parts that are not paged alone pass it', async () => {
    const run = 'crowded-ledger';
    expect((await gw.fetch('/v1/ledgers', { key, json: { runId: run, goal: 'Finish the migration' } })).status).toBe(200);
    expect((await gw.fetch(`/v1/ledgers/${run}/evidence`, { key, json: { items: [ok('tool_result', 'shell', 'migration 42 applied')] } })).status).toBe(200);
    // Control characters are valid text and take six bytes each as JSON (\u0001): 100 open items of 1,000 fill 600 KB, twice (the proposal and the unresolved items).
    const openItems = Array.from({ length: LEDGER_LIMITS.openItems }, (_, i) => ({ text: `step ${i} ${'\u0001'.repeat(LEDGER_LIMITS.openItemChars - 10)}` }));
    const accepted = await gw.fetch(`/v1/ledgers/${run}/completion`, { key, json: { summary: 'Applied migration 42.', openItems } });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as Json;
    const done = (await (await gw.fetch(`${job.statusUrl}?wait=20`, { key })).json()) as Json;
    expect(done.state).toBe('completed');

    const res = await gw.fetch(`/v1/ledgers/${run}?evidenceLimit=1`, { key });
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(413);
    expect(body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(body.detail).toContain(`${RESULT_PAGE_BYTES}-byte limit`);
    expect(body.details).toMatchObject({ maxBytes: RESULT_PAGE_BYTES });
    expect(body.details.bytes).toBeGreaterThan(RESULT_PAGE_BYTES);
    // The way out it names answers.
    const rendered = await gw.fetch(`/v1/ledgers/${run}/render`, { key });
    expect(rendered.status).toBe(200);
    expect(((await rendered.json()) as Json).text).toContain('[open item] step 99');
  });
});
