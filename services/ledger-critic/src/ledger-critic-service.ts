import { fileURLToPath } from 'node:url';
import { NotFoundError, QUEUES, boardSynthesize, type OpenItem } from '@vouch/contracts';
import { loadLexicon } from '@vouch/judge';
import { createOperationCaller, redactHost, redisTarget, startQueueService, type Logger, type PlatformMetrics, type RunningQueueService } from '@vouch/platform';
import type { LedgerCriticEnv } from './config.js';
import { createLedgerCommands, ledgerHandlers, type LedgerCommands } from './ledger-handlers.js';
import { ledgerStream } from './ledger-store.js';
import { createLlmCritic } from './llm-critic.js';
import { createLedgerMetrics, type LedgerMetrics } from './metrics.js';

export const LEDGER_CRITIC_SERVICE = 'ledger-critic';
export const LEDGER_CRITIC_VERSION = '0.1.0';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

/** Processed-job records outlive every job BullMQ could still re-run (failed jobs are kept a week). */
const PROCESSED_JOB_RETENTION_MS = 8 * 24 * 3_600_000;

export interface LedgerCriticOverrides {
  logger?: Logger;
  metrics?: PlatformMetrics;
  /** BullMQ lock settings; tests shorten them so a killed worker's job is re-run within a second. */
  lockDuration?: number;
  stalledInterval?: number;
}

export interface RunningLedgerCritic extends RunningQueueService {
  ledgerMetrics: LedgerMetrics;
  commands: LedgerCommands;
}

/**
 * Starts the ledger-critic: migrations, the LLM critic (when OLLAMA_HOST is
 * set), one handler per ledger operation on the ledger-critic queue, and the
 * ops server with the ledger metrics on its registry.
 */
export async function startLedgerCritic(env: LedgerCriticEnv, overrides: LedgerCriticOverrides = {}): Promise<RunningLedgerCritic> {
  return startQueueService({
    service: LEDGER_CRITIC_SERVICE,
    version: LEDGER_CRITIC_VERSION,
    queue: QUEUES.ledgerCritic,
    env,
    migrationsDir: MIGRATIONS_DIR,
    ...overrides,
    async setup({ pool, logger, metrics }) {
      const pruned = await ledgerStream.pruneProcessedJobs(pool, PROCESSED_JOB_RETENTION_MS);
      if (pruned) logger.info({ pruned }, 'forgot old processed-job records');
      // The judge's word senses load before the first job, not inside it (lexicon.ts).
      loadLexicon();
      const ledgerMetrics = createLedgerMetrics(metrics.registry);
      const critic = createLlmCritic({ host: env.OLLAMA_HOST, model: env.LEDGER_CRITIC_MODEL, timeoutMs: env.LEDGER_CRITIC_TIMEOUT_MS, metrics: ledgerMetrics, logger });
      logger.info(
        critic.configured
          ? { llmCritic: { host: redactHost(env.OLLAMA_HOST ?? ''), model: critic.model, timeoutMs: env.LEDGER_CRITIC_TIMEOUT_MS } }
          : { llmCritic: 'off: OLLAMA_HOST is unset, the rule critic decides alone' },
        'critics configured',
      );
      // A bound board is read through the board-dispatcher's operation, over the queues, never its tables.
      const calls = createOperationCaller({ redisUrl: redisTarget(env), prefix: env.BULLMQ_PREFIX, name: LEDGER_CRITIC_SERVICE });
      const boardOpenItems = async (tenant: string, boardId: string): Promise<OpenItem[]> => {
        try {
          const synthesis = await calls.call(boardSynthesize, tenant, { boardId }, { timeoutMs: 15_000 });
          return synthesis.unresolved.map((card) => ({ kind: 'board_card' as const, text: `${card.cardId} ${card.title}: ${card.reason}`.slice(0, 1000), ref: card.cardId }));
        } catch (err) {
          // A missing board is an open question, not an outage: it keeps the run from approval. Outages throw, and the review job retries.
          if (err instanceof NotFoundError) return [{ kind: 'board_card', text: `board "${boardId}" bound to this run does not exist: create it, or open the run without boardId` }];
          throw err;
        }
      };
      const commands = createLedgerCommands({ pool, metrics: ledgerMetrics, critic, cycleBudget: env.LEDGER_CYCLE_BUDGET, logger, boardOpenItems });
      return { handlers: ledgerHandlers(commands), ledgerMetrics, commands, calls };
    },
    onStop: ({ calls }) => calls.close(),
  });
}
