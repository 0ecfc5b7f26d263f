import { fileURLToPath } from 'node:url';
import { QUEUES } from '@vouch/contracts';
import { loadLexicon } from '@vouch/judge';
import { closeRedis, createConsumerRedis, postgresTargets, redisTarget, redactHost, startQueueService, type Logger, type PlatformMetrics, type RunningQueueService } from '@vouch/platform';
import { BoardCache } from './board-cache.js';
import { boardHandlers, createBoardCommands, type BoardCommands } from './board-handlers.js';
import { BoardNotifications } from './board-notifications.js';
import { boardStream, cardCounts, diagnosticCounts } from './board-store.js';
import type { BoardDispatcherEnv } from './config.js';
import { readLease } from './dispatcher-lease.js';
import { Dispatcher, defaultHolder, type DispatcherOptions } from './dispatcher.js';
import { createLlmVerifier } from './llm-verifier.js';
import { createBoardMetrics, type BoardMetrics } from './metrics.js';
import { WorkQueues } from './work-queues.js';

export const BOARD_DISPATCHER_SERVICE = 'board-dispatcher';
export const BOARD_DISPATCHER_VERSION = '0.1.0';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

/** Processed-job records outlive every job BullMQ could still re-run (failed jobs are kept a week). */
const PROCESSED_JOB_RETENTION_MS = 8 * 24 * 3_600_000;

export interface BoardDispatcherOverrides {
  logger?: Logger;
  metrics?: PlatformMetrics;
  /** BullMQ lock settings; tests shorten them so a killed worker's job is re-run quickly. */
  lockDuration?: number;
  stalledInterval?: number;
  now?: () => Date;
  dispatcherHooks?: DispatcherOptions['hooks'];
}

export interface RunningBoardDispatcher extends RunningQueueService {
  boardMetrics: BoardMetrics;
  commands: BoardCommands;
  dispatcher: Dispatcher;
  /** The assignees' work queues (tests read how many this process holds). */
  queues: WorkQueues;
}

/**
 * Starts the board-dispatcher: migrations, one handler per board operation
 * on its queue, the ops server with the board metrics, Postgres
 * notifications, the assignees' work queues, and the dispatcher (which
 * dispatches only while this replica holds the lease).
 */
export async function startBoardDispatcher(env: BoardDispatcherEnv, overrides: BoardDispatcherOverrides = {}): Promise<RunningBoardDispatcher> {
  const { dispatcherHooks, now, ...platformOverrides } = overrides;
  const running = await startQueueService({
    service: BOARD_DISPATCHER_SERVICE,
    version: BOARD_DISPATCHER_VERSION,
    queue: QUEUES.boardDispatcher,
    env,
    migrationsDir: MIGRATIONS_DIR,
    ...platformOverrides,
    async setup({ pool, logger, metrics, schema }) {
      const pruned = await boardStream.pruneProcessedJobs(pool, PROCESSED_JOB_RETENTION_MS);
      if (pruned) logger.info({ pruned }, 'forgot old processed-job records');
      // The judge's word senses load before the first review, not inside it (lexicon.ts).
      loadLexicon();
      const boardMetrics = createBoardMetrics(metrics.registry, {
        cards: () => cardCounts(pool),
        diagnostics: () => diagnosticCounts(pool),
        async leaderlessSeconds() {
          const lease = await readLease(pool);
          return Math.max(0, (lease.now.getTime() - lease.expiresAt.getTime()) / 1000);
        },
      });
      const verifier = createLlmVerifier({ host: env.OLLAMA_HOST, model: env.BOARD_VERIFIER_MODEL, timeoutMs: env.BOARD_VERIFIER_TIMEOUT_MS, logger });
      logger.info(
        verifier.configured ? { llmVerifier: { host: redactHost(env.OLLAMA_HOST ?? ''), model: verifier.model } } : { llmVerifier: 'off: OLLAMA_HOST is unset, the rule check verifies alone' },
        'verifier configured',
      );
      // LISTEN needs a session of its own: the server itself when DATABASE_URL is a transaction pooler.
      const notifications = new BoardNotifications({ url: postgresTargets(env).directUrl, schema, logger });
      await notifications.start();
      const cache = new BoardCache();
      const commands = createBoardCommands({
        pool,
        verifier,
        notifications,
        logger,
        cache,
        claimPollMs: env.BOARD_CLAIM_POLL_MS,
        leaseTtlMs: env.BOARD_LEASE_TTL_MS,
        ...(now ? { now } : {}),
      });
      const redis = createConsumerRedis(redisTarget(env), `${BOARD_DISPATCHER_SERVICE}:work`);
      // It reconnects by itself; relay and reconcile report the outage where it matters (and retry).
      redis.on('error', () => {});
      const queues = new WorkQueues({ connection: redis, prefix: env.BULLMQ_PREFIX, idleMs: env.BOARD_WORK_QUEUE_IDLE_MS });
      // Made here, started once the worker takes jobs (below); stopped by the service's ordered stop.
      const dispatcher = new Dispatcher({
        pool,
        queues,
        logger,
        metrics: boardMetrics,
        notifications,
        cache,
        holder: env.BOARD_INSTANCE_ID ?? defaultHolder(),
        leaseTtlMs: env.BOARD_LEASE_TTL_MS,
        dispatchSweepMs: env.BOARD_DISPATCH_SWEEP_MS,
        sweepMs: env.BOARD_SWEEP_MS,
        consumerTtlMs: env.BOARD_CONSUMER_TTL_MS,
        strandedAfterMs: env.BOARD_STRANDED_AFTER_MS,
        diagnosticQuietMs: env.BOARD_DIAGNOSTIC_QUIET_MS,
        ...(now ? { now } : {}),
        ...(dispatcherHooks ? { hooks: dispatcherHooks } : {}),
      });
      return { handlers: boardHandlers(commands), boardMetrics, commands, dispatcher, queues, notifications, redis };
    },
    async onStop({ dispatcher, notifications, queues, redis }) {
      await dispatcher.stop();
      await notifications.stop();
      await queues.close();
      await closeRedis(redis);
    },
  });
  running.dispatcher.start();
  return running;
}
