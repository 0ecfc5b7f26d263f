import type { CritiqueOutcome } from '@vouch/contracts';
import { closedPort, metricValue, startOllamaTestServer, type OllamaTestServer } from '@vouch/testing';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { llmVerdictJsonSchema } from '../src/domain/llm-verdict.js';
import { loadLedger } from '../src/ledger-store.js';
import { createLlmCritic } from '../src/llm-critic.js';
import { createLedgerMetrics } from '../src/metrics.js';
import { ok } from './drive-ledger.js';
import { commandsOn, useLedgerDatabase, type LedgerDatabase } from './ledger-test-env.js';

const MODEL = 'qwen2.5:7b-instruct';
const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const DUMP = ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB');
const RESTORE = ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders');
const PROMPT = { system: 'You review completion claims.', user: '# Review 1 of 3\n...' };

let ollama: OllamaTestServer;

beforeAll(async () => {
  ollama = await startOllamaTestServer({ models: [{ name: MODEL, capabilities: ['completion', 'tools'], size: 4_700_000_000 }] });
});
afterAll(async () => {
  await ollama?.close();
});
beforeEach(() => ollama.reset());

describe('the LLM critic against the Ollama test server', () => {
  const critic = (timeoutMs = 2_000, host: string | undefined = ollama.url) => {
    const registry = new Registry();
    return { critic: createLlmCritic({ host, model: MODEL, timeoutMs, metrics: createLedgerMetrics(registry) }), registry };
  };

  it('asks the configured model once for a structured verdict and reads it', async () => {
    ollama.replyOnce({ json: { decision: 'request_changes', reasons: ['the restore is not shown'], missingEvidence: [{ claimId: 'c1-2', need: 'the restore log' }] } });
    const { critic: c, registry } = critic();
    expect(await c.review(PROMPT)).toEqual({
      ran: true,
      model: MODEL,
      verdict: { decision: 'request_changes', reasons: ['the restore is not shown'], missingEvidence: [{ claimId: 'c1-2', need: 'the restore log' }] },
    });
    expect(ollama.calls).toHaveLength(1);
    const call = ollama.calls[0]!;
    expect(call).toMatchObject({ endpoint: 'chat', model: MODEL, stream: false, options: { temperature: 0 } });
    expect(call.format).toEqual(llmVerdictJsonSchema());
    expect(call.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', PROMPT.system],
      ['user', PROMPT.user],
    ]);
    expect(await metricValue(registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'ok' })).toBe(1);
  });

  it('gives up at its timeout and says so', async () => {
    ollama.replyOnce({ json: { decision: 'approve', reasons: [], missingEvidence: [] }, delayMs: 3_000 });
    const { critic: c, registry } = critic(300);
    const started = Date.now();
    expect(await c.review(PROMPT)).toEqual({ ran: true, model: MODEL, error: 'the critic model did not answer within 300 ms (LEDGER_CRITIC_TIMEOUT_MS)' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await metricValue(registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'timeout' })).toBe(1);
  });

  it("reports Ollama's own error, and an answer that does not fit the verdict schema", async () => {
    ollama.replyOnce({ error: { status: 500, message: 'an error was encountered while running the model' } }, { json: { decision: 'maybe', reasons: [] } });
    const { critic: c, registry } = critic();
    expect(await c.review(PROMPT)).toEqual({ ran: true, model: MODEL, error: 'the critic model answered with an error (HTTP 500)' });
    const invalid = await c.review(PROMPT);
    expect(invalid).toMatchObject({ ran: true, model: MODEL });
    expect('error' in invalid && invalid.error).toMatch(/^the critic model's JSON does not fit the verdict schema: decision: /);
    expect(await metricValue(registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'error' })).toBe(1);
    expect(await metricValue(registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'invalid' })).toBe(1);
  });

  it('says it could not reach the model, naming the variable to check and not the host', async () => {
    const { critic: c, registry } = critic(2_000, `http://127.0.0.1:${await closedPort()}`);
    expect(await c.review(PROMPT)).toEqual({ ran: true, model: MODEL, error: 'the critic model could not be reached (check that Ollama runs at OLLAMA_HOST)' });
    expect(await metricValue(registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'error' })).toBe(1);
  });
});

describe('reviews with the LLM critic (Ollama test server, real Postgres)', () => {
  let db: LedgerDatabase;
  let runs = 0;
  beforeAll(async () => {
    db = await useLedgerDatabase('ledger_llm');
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  /** Opens a ledger with this evidence and proposes SUMMARY once. */
  const review = async (evidence: typeof DUMP[], opts: { timeoutMs?: number } = {}) => {
    const runId = `llm-${++runs}`;
    const { commands, registry } = commandsOn(db.pool, { ollamaHost: ollama.url, model: MODEL, timeoutMs: opts.timeoutMs ?? 2_000 });
    const tenant = 'acme';
    await commands.open({ tenant, jobId: `${runId}-open` }, { runId, goal: GOAL, policy: 'full' });
    await commands.recordEvidence({ tenant, jobId: `${runId}-ev` }, { runId, items: evidence });
    const outcome: CritiqueOutcome = await commands.proposeCompletion({ tenant, jobId: `${runId}-review` }, { runId, summary: SUMMARY, openItems: [] });
    return { outcome, registry, runId, commands };
  };

  it('cannot approve past the rule floor', async () => {
    ollama.reply({ json: { decision: 'approve', reasons: ['the backup looks complete'], missingEvidence: [] } });
    const { outcome, runId } = await review([DUMP]);
    expect(ollama.calls).toHaveLength(1);
    expect(ollama.calls[0]!.prompt).toContain('Decision: request_changes. You may keep or tighten it, never loosen it.');
    expect(outcome).toMatchObject({ decision: 'request_changes', status: 'request_changes', completed: false });
    expect(outcome.critics).toEqual({
      rule: { decision: 'request_changes', reasons: expect.any(Array) },
      llm: { ran: true, model: MODEL, decision: 'approve', reasons: ['the backup looks complete'] },
    });
    expect(outcome.reasons).toContain('the LLM critic would approve, but the rule floor (request_changes) holds');
    expect(await loadLedger(db.pool, { tenant: 'acme', runId })).toMatchObject({ status: 'request_changes', completed: false });
  });

  it('may tighten an approving floor, and its missing evidence is asked for', async () => {
    ollama.reply({ json: { decision: 'request_changes', reasons: ['no checksum of the dump'], missingEvidence: [{ need: 'a checksum of orders-2025-03-01.sql.gz' }] } });
    const { outcome, registry } = await review([DUMP, RESTORE]);
    expect(outcome.critics.rule.decision).toBe('approve');
    expect(outcome).toMatchObject({ decision: 'request_changes', status: 'request_changes', completed: false });
    expect(outcome.reasons).toContain('LLM critic: no checksum of the dump');
    expect(outcome.missingEvidence.map((m) => m.need)).toEqual(['a checksum of orders-2025-03-01.sql.gz']);
    expect(await metricValue(registry, 'vouch_ledger_critiques_total', { decision: 'request_changes' })).toBe(1);
  });

  it('judges each material claim against the evidence, quoting it, and holds a claim it does not find entailed', async () => {
    // The claims of SUMMARY, as the rule critic numbers them: the dump, the restore, the row count.
    ollama.reply((call) => {
      expect(call.prompt).toContain('rests on ev-1: "orders-db dumped to orders-2025-03-01.sql.gz');
      return {
        json: {
          decision: 'approve',
          reasons: [],
          missingEvidence: [],
          claims: [
            { claimId: 'cl-1-1', verdict: 'entails', evidenceId: 'ev-1', quote: 'orders-db dumped to orders-2025-03-01.sql.gz' },
            { claimId: 'cl-1-2', verdict: 'entails', evidenceId: 'ev-2', quote: 'restored orders-2025-03-01.sql.gz into orders-restore-test' },
            { claimId: 'cl-1-3', verdict: 'unrelated' },
          ],
        },
      };
    });
    const { outcome } = await review([DUMP, RESTORE]);
    expect(outcome.critics.rule.decision).toBe('approve');
    expect(outcome).toMatchObject({ decision: 'request_changes', completed: false });
    expect(outcome.reasons).toContain('LLM critic: "verified 48,210 rows": no listed observation states it');
    expect(outcome.critics.llm.claims).toEqual([
      { claimId: 'cl-1-1', verdict: 'entails', evidenceId: 'ev-1', quote: 'orders-db dumped to orders-2025-03-01.sql.gz', quoteFound: true },
      { claimId: 'cl-1-2', verdict: 'entails', evidenceId: 'ev-2', quote: 'restored orders-2025-03-01.sql.gz into orders-restore-test', quoteFound: true },
      { claimId: 'cl-1-3', verdict: 'unrelated', quoteFound: false },
    ]);
  });

  it('does not count an entailment whose quote is not in the observation it cites', async () => {
    ollama.reply({
      json: {
        decision: 'approve',
        reasons: [],
        missingEvidence: [],
        claims: [
          { claimId: 'cl-1-1', verdict: 'entails', evidenceId: 'ev-1', quote: 'orders-db dumped' },
          { claimId: 'cl-1-2', verdict: 'entails', evidenceId: 'ev-2', quote: 'restore verified by checksum' },
          { claimId: 'cl-1-3', verdict: 'entails', evidenceId: 'ev-2', quote: '48210 rows in orders' },
        ],
      },
    });
    const { outcome } = await review([DUMP, RESTORE]);
    expect(outcome).toMatchObject({ decision: 'request_changes', completed: false });
    expect(outcome.reasons).toContain('LLM critic: "Restored it into orders-restore-test": the words quoted for it are not in ev-2');

    // Quotes that are there, and every claim entailed: the approval stands.
    ollama.reply({
      json: {
        decision: 'approve',
        reasons: ['each claim is stated by an observation'],
        missingEvidence: [],
        claims: [
          { claimId: 'cl-1-1', verdict: 'entails', evidenceId: 'ev-1', quote: 'orders-db dumped' },
          { claimId: 'cl-1-2', verdict: 'entails', evidenceId: 'ev-2', quote: 'restored orders-2025-03-01.sql.gz into orders-restore-test' },
          { claimId: 'cl-1-3', verdict: 'entails', evidenceId: 'ev-2', quote: '48210 rows in orders' },
        ],
      },
    });
    expect((await review([DUMP, RESTORE])).outcome).toMatchObject({ decision: 'approve', completed: true });
  });

  it('ends the run as incomplete_verification when it blocks', async () => {
    ollama.reply({ json: { decision: 'blocked', reasons: ['the restore ran against production'], missingEvidence: [] } });
    const { outcome, registry } = await review([DUMP, RESTORE]);
    expect(outcome).toMatchObject({ decision: 'blocked', status: 'incomplete_verification', completed: false });
    expect(await metricValue(registry, 'vouch_ledger_terminal_status_total', { status: 'incomplete_verification' })).toBe(1);
  });

  it('leaves the rule verdict standing, visibly, when Ollama fails or times out', async () => {
    ollama.replyOnce({ error: { status: 500, message: 'an error was encountered while running the model' } });
    const failed = await review([DUMP, RESTORE]);
    expect(failed.outcome).toMatchObject({ decision: 'approve', status: 'approved', completed: true });
    expect(failed.outcome.critics.llm).toEqual({
      ran: true,
      model: MODEL,
      note: 'its answer was not used: the critic model answered with an error (HTTP 500)',
    });

    ollama.replyOnce({ json: { decision: 'blocked', reasons: ['too late'], missingEvidence: [] }, delayMs: 2_000 });
    const late = await review([DUMP], { timeoutMs: 250 });
    expect(late.outcome).toMatchObject({ decision: 'request_changes', status: 'request_changes' });
    expect(late.outcome.critics.llm).toEqual({ ran: true, model: MODEL, note: 'its answer was not used: the critic model did not answer within 250 ms (LEDGER_CRITIC_TIMEOUT_MS)' });
    expect(await metricValue(late.registry, 'vouch_ledger_llm_critic_calls_total', { outcome: 'timeout' })).toBe(1);
  });

  it('decides on the version it read when evidence arrives while the LLM critic runs, and asks the model once', async () => {
    const runId = `llm-${++runs}`;
    const { commands } = commandsOn(db.pool, { ollamaHost: ollama.url, model: MODEL });
    await commands.open({ tenant: 'acme', jobId: `${runId}-open` }, { runId, goal: GOAL, policy: 'full' });
    await commands.recordEvidence({ tenant: 'acme', jobId: `${runId}-ev1` }, { runId, items: [DUMP] });
    ollama.replyOnce(async () => {
      // The agent records the restore while the critic is thinking.
      await commands.recordEvidence({ tenant: 'acme', jobId: `${runId}-ev2` }, { runId, items: [RESTORE] });
      return { json: { decision: 'approve', reasons: ['stale view'], missingEvidence: [] } };
    });
    const outcome = await commands.proposeCompletion({ tenant: 'acme', jobId: `${runId}-review` }, { runId, summary: SUMMARY, openItems: [] });
    expect(ollama.calls).toHaveLength(1);
    // The review saw the dump alone: the restore came after it, for the next cycle.
    expect(outcome).toMatchObject({ cycle: 1, decision: 'request_changes', status: 'request_changes', completed: false });
    const state = await loadLedger(db.pool, { tenant: 'acme', runId });
    expect(state).toMatchObject({ version: 6, evidence: [{ id: 'ev-1' }, { id: 'ev-2' }] });
    expect(state!.critiques[0]).toMatchObject({ baseVersion: 2, evidenceSeqAtCritique: 1 });
  });
});
