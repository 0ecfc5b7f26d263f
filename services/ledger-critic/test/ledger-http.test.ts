import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { parseLedgerEvent } from '../src/domain/ledger-events.js';
import { replayLedger } from '../src/domain/replay-ledger.js';
import { readEvents } from '../src/ledger-store.js';
import { failed, ok } from './drive-ledger.js';
import { startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const RUN = 'agent-run-7f3a';
const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';

describe('the ledger over HTTP through the real gateway', () => {
  let gw: GatewayUnderTest;
  let svc: LedgerServiceUnderTest;
  let key: string;
  let readOnly: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('ledger_http');
    svc = await startLedgerServiceUnderTest('ledger_http', {}, { prefix: gw.prefix });
    key = await gw.createKey('acme');
    readOnly = await gw.createKey('acme', 'ledger:read,jobs:read');
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  const call = async (path: string, init: { key?: string; json?: unknown; method?: string } = {}) => {
    const res = await gw.fetch(path, { key: init.key ?? key, ...(init.json !== undefined ? { json: init.json } : {}), ...(init.method ? { method: init.method } : {}) });
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Json };
  };

  it('opens, records, proposes (202), reads the critique job and renders the ledger', async () => {
    const opened = await call('/v1/ledgers', { json: { runId: RUN, goal: GOAL } });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ runId: RUN, status: 'open', version: 1, alreadyOpened: false, evidence: [] });

    const recorded = await call(`/v1/ledgers/${RUN}/evidence`, {
      json: {
        items: [
          failed('tool_result', 'pg_dump', 'orders-db: connection refused on the first try'),
          ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB', { rawRef: 'blob://dump-logs/7f3a.txt' }),
          ok('file_change', 'pg_dump', 'wrote orders-2025-03-01.sql.gz (2.3 GB)'),
        ],
      },
    });
    expect(recorded).toMatchObject({ status: 200, body: { runId: RUN, version: 2, evidenceCount: 3, recorded: [{ id: 'ev-1' }, { id: 'ev-2' }, { id: 'ev-3' }] } });

    const accepted = await call(`/v1/ledgers/${RUN}/completion`, { json: { summary: SUMMARY } });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ operation: 'ledger.proposeCompletion', statusUrl: `/v1/jobs/${accepted.body.jobId}` });
    const done = await call(`${accepted.body.statusUrl}?wait=10`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ state: 'completed', attemptsMade: 1 });
    const outcome = done.body.result;
    expect(outcome).toMatchObject({ runId: RUN, cycle: 1, decision: 'request_changes', status: 'request_changes', completed: false });
    expect(outcome.critics.llm).toEqual({ ran: false, note: 'no LLM critic configured (Ollama): the rule critic decided alone' });
    expect(outcome.missingEvidence.map((m: { claimText: string }) => m.claimText)).toEqual(['Restored it into orders-restore-test', 'verified 48,210 rows']);

    await call(`/v1/ledgers/${RUN}/evidence`, { json: { items: [ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders')] } });
    const second = await call(`/v1/ledgers/${RUN}/completion`, { json: { summary: SUMMARY } });
    const approved = await call(`${second.body.statusUrl}?wait=10`);
    expect(approved.body.result).toMatchObject({ cycle: 2, decision: 'approve', status: 'approved', completed: true });

    const packet = await call(`/v1/ledgers/${RUN}/packet`, { key: readOnly });
    expect(packet.status).toBe(200);
    expect(packet.body.packet.priorCritique.evidenceSince.map((e: { id: string }) => e.id)).toEqual(['ev-4']);

    const admin = await call(`/v1/ledgers/${RUN}/render?form=admin`, { key: readOnly });
    expect(admin).toMatchObject({ status: 200, body: { runId: RUN, form: 'admin', status: 'approved', completed: true } });
    expect(admin.body.text).toContain('ev-4');
    const pub = await call(`/v1/ledgers/${RUN}/render?form=public`, { key: readOnly });
    expect(pub.body.text).not.toContain('blob://');
    expect(pub.body.text).not.toContain('ev-');
  });

  it('answers bad input with a clear 4xx and changes nothing', async () => {
    const other = 'agent-run-open';
    await call('/v1/ledgers', { json: { runId: other, goal: 'Collect readings' } });
    const before = await call(`/v1/ledgers/${other}`);
    const eventsBefore = await readEvents(svc.service.pool, { tenant: 'acme', runId: other });

    const unknown = await call('/v1/ledgers/no-such-run/evidence', { json: { items: [ok('tool_result', 'shell', 'x')] } });
    expect(unknown.status).toBe(404);
    expect(unknown.type).toContain('application/problem+json');
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', detail: 'no ledger for run "no-such-run": open one with ledger.open first' });

    const oversized = await call(`/v1/ledgers/${other}/evidence`, { json: { items: [{ kind: 'tool_result', summary: 'x'.repeat(4001) }] } });
    expect(oversized.status).toBe(400);
    expect(oversized.body.fields).toEqual([{ path: 'items.0.summary', message: 'summary is at most 4000 characters: keep a compact summary and put the full output behind rawRef' }]);

    const wrongKind = await call(`/v1/ledgers/${other}/evidence`, { json: { items: [{ kind: 'screenshot', summary: 'x' }] } });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.fields[0]).toMatchObject({ path: 'items.0.kind' });

    const closed = await call(`/v1/ledgers/${RUN}/evidence`, { json: { items: [ok('tool_result', 'shell', 'late')] } });
    expect(closed.status).toBe(409);
    expect(closed.body).toMatchObject({ code: 'CONFLICT', details: { status: 'approved' } });
    expect(closed.body.detail).toContain('open a new ledger under a new run id');

    const reopened = await call('/v1/ledgers', { json: { runId: other, goal: 'A different goal' } });
    expect(reopened.status).toBe(409);

    const noScope = await call(`/v1/ledgers/${other}/evidence`, { key: readOnly, json: { items: [ok('tool_result', 'shell', 'x')] } });
    expect(noScope.status).toBe(403);

    const noReview = await call(`/v1/ledgers/${other}/packet`);
    expect(noReview.status).toBe(404);
    expect(noReview.body.detail).toContain('has no review yet');

    expect(await call(`/v1/ledgers/${other}`)).toEqual(before);
    expect(await readEvents(svc.service.pool, { tenant: 'acme', runId: other })).toEqual(eventsBefore);
  });

  it('records the agent of the caller\'s key on its evidence and its completion, never a name from the body; events without it replay the same', async () => {
    const run = 'agent-run-actors';
    const agent = await gw.agentKey('acme', 'agent-7');
    await call('/v1/ledgers', { key: agent, json: { runId: run, goal: GOAL } });
    await call(`/v1/ledgers/${run}/evidence`, { key: agent, json: { items: [ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB')] } });
    const accepted = await call(`/v1/ledgers/${run}/completion`, { key: agent, json: { summary: SUMMARY } });
    expect((await call(`${accepted.body.statusUrl}?wait=10`)).body.state).toBe('completed');
    const forged = await call(`/v1/ledgers/${run}/evidence`, { key: agent, json: { by: 'someone-else', items: [ok('tool_result', 'shell', 'x')] } });
    expect(forged.status).toBe(400);

    const events = await readEvents(svc.service.pool, { tenant: 'acme', runId: run });
    expect(events.map((e) => [e.type, 'by' in e ? e.by : undefined])).toEqual([
      ['ledger_opened', undefined],
      ['evidence_recorded', 'agent-7'],
      ['completion_proposed', 'agent-7'],
      ['critique_recorded', undefined],
      ['status_changed', undefined],
    ]);
    // Events from before actors came from keys carry no agent: they read and replay to the same ledger.
    const unattributed = events.map((e) => parseLedgerEvent(JSON.parse(JSON.stringify({ ...e, by: undefined }))));
    expect(unattributed.some((e) => 'by' in e)).toBe(false);
    expect(JSON.stringify(replayLedger(unattributed))).toBe(JSON.stringify(replayLedger(events)));
  });

  it("does not show one tenant's ledger to another", async () => {
    const globex = await gw.createKey('globex');
    const foreign = await call(`/v1/ledgers/${RUN}`, { key: globex });
    expect(foreign.status).toBe(404);
  });
});
