import type { CritiqueOutcome } from '@vouch/contracts';
import { createLogger, parseConfig } from '@vouch/platform';
import { MALFORMED_CONTENT, OLLAMA_FAILURE_MODES, startOllamaFailureRig, startServiceUnderTest, type OllamaFailureMode, type OllamaFailureRig, type ServiceUnderTest } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerCriticEnvSchema, type LedgerCriticEnv } from '../src/config.js';
import { startLedgerCritic, type RunningLedgerCritic } from '../src/ledger-critic-service.js';
import { ok } from './drive-ledger.js';
import { LedgerJobs } from './ledger-test-env.js';

const MODEL = 'qwen2.5:7b-instruct';
const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const EVIDENCE = [
  ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB'),
  ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders'),
];

/** What the critique says of the LLM critic, in full, for each way Ollama fails. */
const NOTE: Record<OllamaFailureMode, string> = {
  refused: 'its answer was not used: the critic model could not be reached (check that Ollama runs at OLLAMA_HOST)',
  timeout: 'its answer was not used: the critic model did not answer within 1000 ms (LEDGER_CRITIC_TIMEOUT_MS)',
  http_500: 'its answer was not used: the critic model answered with an error (HTTP 500)',
  malformed_content: `its answer was not used: the critic model answered with text that is not JSON: ${MALFORMED_CONTENT}`,
  malformed_body: "its answer was not used: the critic model's answer could not be read (it is not Ollama's JSON)",
  model_missing: `its answer was not used: the critic model ${MODEL} is not installed on the Ollama server (pull it there, or name an installed model in LEDGER_CRITIC_MODEL)`,
};

/**
 * Issue 16: whichever way Ollama fails, the critique a caller reads names the
 * stage that did not count and why, and holds no address, port, driver
 * message, stack or Ollama error text; those go to the service's log.
 */
describe('ledger.proposeCompletion answers when the LLM critic fails (Ollama test server, real worker, Redis and Postgres)', () => {
  let rig: OllamaFailureRig;
  let svc: ServiceUnderTest<LedgerCriticEnv, RunningLedgerCritic>;
  let jobs: LedgerJobs;
  const log: string[] = [];

  beforeAll(async () => {
    rig = await startOllamaFailureRig({ models: [{ name: MODEL, capabilities: ['completion', 'tools'] }] });
    svc = await startServiceUnderTest({
      label: 'ledger_llm_failures',
      vars: { OLLAMA_HOST: rig.url, LEDGER_CRITIC_MODEL: MODEL, LEDGER_CRITIC_TIMEOUT_MS: '1000' },
      parse: (v) => parseConfig(ledgerCriticEnvSchema, v),
      async start(env) {
        const logger = createLogger({ service: 'ledger-critic', level: 'warn', destination: { write: (line: string) => void log.push(line) } });
        const service = await startLedgerCritic(env, { logger });
        await service.serviceWorker.worker.waitUntilReady();
        return service;
      },
    });
    jobs = new LedgerJobs(svc.prefix);
    await jobs.ready();
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
    await rig?.close();
  });

  it.each(OLLAMA_FAILURE_MODES)('%s: the rule verdict stands, and the answer says why in public words only', async (mode) => {
    const runId = `ollama-${mode}`;
    await jobs.run('ledger.open', 'acme', { runId, goal: GOAL });
    await jobs.run('ledger.recordEvidence', 'acme', { runId, items: EVIDENCE });
    rig.ollama.reset();
    log.length = 0;
    const undo = await rig.fail(mode, { model: MODEL });
    let outcome: CritiqueOutcome;
    try {
      outcome = await jobs.run<CritiqueOutcome>('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    } finally {
      await undo();
    }
    expect(outcome).toMatchObject({ decision: 'approve', status: 'approved', completed: true });
    expect(outcome.critics.llm).toEqual({ ran: true, model: MODEL, note: NOTE[mode] });
    expect(rig.internalsIn(JSON.stringify(outcome))).toEqual([]);
    // The details are for the operator: the log names the address the critic used.
    if (mode !== 'malformed_content') expect(log.join('')).toContain(`"ollama":"${rig.url}"`);
  });

  it('the log keeps what the answer leaves out: the refused address and the driver code', async () => {
    const runId = 'ollama-refused-log';
    await jobs.run('ledger.open', 'acme', { runId, goal: GOAL });
    log.length = 0;
    const undo = await rig.fail('refused', { model: MODEL });
    try {
      await jobs.run('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    } finally {
      await undo();
    }
    const line = log.find((l) => l.includes('LLM critic call failed'));
    expect(line).toBeDefined();
    expect(line).toContain('"failure":"unreachable"');
    expect(line).toContain('ECONNREFUSED');
  });
});
