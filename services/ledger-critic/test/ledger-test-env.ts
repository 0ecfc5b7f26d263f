import { Registry } from 'prom-client';
import { QUEUES } from '@vouch/contracts';
import { createLogger, createPool, parseConfig, runMigrations, type Pool } from '@vouch/platform';
import { QueueJobs, TEST_DATABASE_URL, startServiceUnderTest, useTestSchema, type ServiceUnderTest } from '@vouch/testing';
import { ledgerCriticEnvSchema, type LedgerCriticEnv } from '../src/config.js';
import type { LedgerCache } from '../src/ledger-cache.js';
import { createLedgerCommands, type LedgerCommands } from '../src/ledger-handlers.js';
import { MIGRATIONS_DIR, startLedgerCritic, type RunningLedgerCritic } from '../src/ledger-critic-service.js';
import { createLlmCritic } from '../src/llm-critic.js';
import { createLedgerMetrics, type LedgerMetrics } from '../src/metrics.js';

/** A migrated ledger schema of its own, on the test Postgres. */
export interface LedgerDatabase {
  schema: string;
  pool: Pool;
  cleanup(): Promise<void>;
}

export async function useLedgerDatabase(label: string): Promise<LedgerDatabase> {
  const { schema, cleanup } = await useTestSchema(label);
  await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema, dir: MIGRATIONS_DIR });
  const pool = createPool({ url: TEST_DATABASE_URL, schema, max: 12 });
  return {
    schema,
    pool,
    async cleanup() {
      await pool.end();
      await cleanup();
    },
  };
}

/** The ledger commands on a database, with metrics on a registry of their own. */
export function commandsOn(
  pool: Pool,
  opts: { ollamaHost?: string; model?: string; timeoutMs?: number; cycleBudget?: number; cache?: LedgerCache } = {},
): { commands: LedgerCommands; metrics: LedgerMetrics; registry: Registry } {
  const registry = new Registry();
  const metrics = createLedgerMetrics(registry);
  const critic = createLlmCritic({ host: opts.ollamaHost, model: opts.model ?? 'qwen2.5:7b-instruct', timeoutMs: opts.timeoutMs ?? 5_000, metrics });
  return { commands: createLedgerCommands({ pool, metrics, critic, cycleBudget: opts.cycleBudget ?? 3, ...(opts.cache ? { cache: opts.cache } : {}) }), metrics, registry };
}

/** The ledger-critic running in this process on its own prefix (or a shared one) and schema. */
export type LedgerServiceUnderTest = ServiceUnderTest<LedgerCriticEnv, RunningLedgerCritic>;

export async function startLedgerServiceUnderTest(label: string, vars: Record<string, string> = {}, shared?: { prefix: string }): Promise<LedgerServiceUnderTest> {
  return startServiceUnderTest({
    label,
    vars,
    shared,
    parse: (v) => parseConfig(ledgerCriticEnvSchema, v),
    async start(env) {
      const service = await startLedgerCritic(env, { logger: createLogger({ service: 'ledger-critic', level: 'silent' }) });
      await service.serviceWorker.worker.waitUntilReady();
      return service;
    },
  });
}

export { JobFailed } from '@vouch/testing';

/** Adds ledger jobs as the gateway does (an envelope with the tenant) and waits for them. */
export class LedgerJobs extends QueueJobs {
  constructor(prefix: string) {
    super(prefix, QUEUES.ledgerCritic);
  }
}
