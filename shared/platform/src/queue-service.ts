import { Queue } from 'bullmq';
import { operationsForQueue, type OperationDef, type QueueName } from '@vouch/contracts';
import type { CommonEnv } from './config.js';
import type { OperationHandler } from './handlers.js';
import type { ReadinessCheck } from './health.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, type PlatformMetrics } from './metrics.js';
import { startOpsServer, type OpsServer, type Phase } from './ops-server.js';
import { assertPoolSchema, createPool, pendingMigrations, pingPostgres, postgresTargets, runMigrations, type Pool } from './postgres.js';
import { QUEUE_STREAMS } from './event-stream.js';
import { consumerRedisOptions, createConsumerRedis, closeRedis, describeRedisTarget, pingRedis, redisTarget } from './redis.js';
import { startServiceWorker, type ServiceWorker } from './worker.js';

/** Config every queue service has: the common variables plus its port and concurrency. */
export type QueueServiceEnv = CommonEnv & { HTTP_PORT: number; WORKER_CONCURRENCY: number };

/** What a service's setup builds its handlers and parts from. */
export interface ServiceDeps {
  pool: Pool;
  logger: Logger;
  metrics: PlatformMetrics;
  schema: string;
}

/**
 * What a service's setup builds: the handlers of its operations, and beside
 * them whatever else the service keeps (its commands, metrics, pools), which
 * `startQueueService` returns with the running service.
 */
export interface ServiceSetup {
  handlers: readonly OperationHandler[];
}

/** The parts a setup built besides its handlers. */
export type ServiceParts<Setup extends ServiceSetup> = Omit<Setup, 'handlers'>;

export interface QueueServiceSpec<Setup extends ServiceSetup = ServiceSetup> {
  service: string;
  version: string;
  queue: QueueName;
  env: QueueServiceEnv;
  /** Folder of the service's SQL migrations, applied to its schema before the worker starts. */
  migrationsDir: string;
  /** Defaults to the operations the table assigns to `queue`. */
  operations?: readonly OperationDef[];
  /**
   * Builds the service once its migrations are applied: its handlers, and the
   * parts it keeps. A setup that fails releases what it made itself; once it
   * has returned, `onStop` releases it.
   */
  setup(deps: ServiceDeps): Setup | Promise<Setup>;
  lockDuration?: number;
  stalledInterval?: number;
  /**
   * Other workers of the service to close beside the main one, at the same
   * time and within the same grace (the extractor's GPU worker): one closing
   * after the other would let it take jobs while the first drains, and double
   * the time a stop needs.
   */
  onStopping?: (parts: ServiceParts<Setup>) => Promise<void>;
  /**
   * Releases what `setup` made, after the worker stops and before Redis and
   * Postgres close; also when the start fails after `setup` returned.
   */
  onStop?: (parts: ServiceParts<Setup>) => Promise<void>;
  /** Readiness checks of the service's own, besides Redis, Postgres, migrations and the worker (e.g. the extractor's GPU gate). */
  extraChecks?: (parts: ServiceParts<Setup>) => readonly ReadinessCheck[];
  /** Overrides for tests: a logger and a metrics registry of their own. */
  logger?: Logger;
  metrics?: PlatformMetrics;
}

export interface RunningQueueService {
  logger: Logger;
  metrics: PlatformMetrics;
  pool: Pool;
  schema: string;
  ops: OpsServer;
  serviceWorker: ServiceWorker;
  /** Ordered stop: not ready at once, stop taking jobs, let running ones finish within the grace period, then close the queues, Redis, the ops server and Postgres. */
  stop(): Promise<void>;
}

/** How often a service waiting for Redis at start says so. */
const REDIS_WAIT_LOG_MS = 5_000;

/** Awaits `promise`, calling `say` every `everyMs` until it settles. */
async function waitLoudly<T>(promise: Promise<T>, everyMs: number, say: () => void): Promise<T> {
  const timer = setInterval(say, everyMs);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}

/** The default schema of a service: its name with `_` for `-`. */
export function defaultSchema(service: string): string {
  return service.replace(/-/g, '_');
}

/**
 * Starts a queue service in the order docs/architecture.md gives ("A service"): Postgres pool, ops
 * server (live at once, /readyz "starting"), migrations, handler check (refuses
 * to start on a missing or duplicate handler), worker; ready once the worker's
 * Redis connection is up. Returns the running service with its ordered stop
 * and the parts its setup built.
 */
export async function startQueueService<Setup extends ServiceSetup>(spec: QueueServiceSpec<Setup>): Promise<RunningQueueService & ServiceParts<Setup>> {
  const { env } = spec;
  const logger = spec.logger ?? createLogger({ service: spec.service, level: env.LOG_LEVEL });
  const metrics = spec.metrics ?? createMetrics({ service: spec.service, ...(env.METRICS_TENANT_LABELS !== undefined ? { tenantLabels: env.METRICS_TENANT_LABELS } : {}) });
  const schema = env.DB_SCHEMA ?? defaultSchema(spec.service);
  const targets = postgresTargets(env);
  const pool = createPool({
    url: targets.url,
    schema,
    applicationName: spec.service,
    connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: env.PG_STATEMENT_TIMEOUT_MS,
    transactionPooling: targets.transactionPooling,
  });
  const closers: Array<() => Promise<unknown>> = [];
  // The ops server comes first, so /livez answers during every wait below
  // (another replica's migrations, Redis) and /readyz says what the start waits for.
  let phase: Phase = { phase: 'starting', waitingFor: 'migrations' };
  const checks: ReadinessCheck[] = [];
  const ops = await startOpsServer({ port: env.HTTP_PORT, registry: metrics.registry, logger, checks, phase: () => phase }).catch(async (err: unknown) => {
    await pool.end().catch(() => {});
    throw err;
  });
  closers.push(() => ops.close());
  logger.info({ port: ops.port }, 'serving /livez, /readyz and /metrics');
  let parts: ServiceParts<Setup> | undefined;
  try {
    await runMigrations({ databaseUrl: targets.directUrl, variable: targets.directVariable, schema, dir: spec.migrationsDir, logger, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS });
    await assertPoolSchema(pool, schema, { url: targets.url, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS });
    const { handlers, ...built } = await spec.setup({ pool, logger, metrics, schema });
    parts = built;
    const operations = spec.operations ?? operationsForQueue(spec.queue);

    const redis = createConsumerRedis(redisTarget(env), `${spec.service}:health`);
    closers.unshift(() => closeRedis(redis));
    const ownQueue = new Queue(spec.queue, { connection: redis, prefix: env.BULLMQ_PREFIX, streams: QUEUE_STREAMS });
    // Unheard, BullMQ prints a Redis outage to stderr past the logger; the worker logs it, and /readyz shows it.
    ownQueue.on('error', () => {});
    closers.unshift(() => ownQueue.close());
    metrics.watchQueues([ownQueue]);

    phase = { phase: 'starting', waitingFor: 'redis' };
    const serviceWorker = startServiceWorker({
      service: spec.service,
      version: spec.version,
      queue: spec.queue,
      operations,
      handlers,
      connection: consumerRedisOptions(redisTarget(env), `${spec.service}:worker`),
      prefix: env.BULLMQ_PREFIX,
      concurrency: env.WORKER_CONCURRENCY,
      ...(env.TENANT_CONCURRENCY ? { tenantConcurrency: env.TENANT_CONCURRENCY } : {}),
      logger,
      metrics,
      ...(spec.lockDuration ? { lockDuration: spec.lockDuration } : {}),
      ...(spec.stalledInterval ? { stalledInterval: spec.stalledInterval } : {}),
    });
    closers.unshift(() => serviceWorker.close(0));
    // Ready only once the worker's connection is up, so /readyz never reports a
    // service that cannot take jobs yet. Redis being down is not fatal (workers
    // reconnect by design), but the wait is never silent.
    await waitLoudly(serviceWorker.worker.waitUntilReady(), REDIS_WAIT_LOG_MS, () =>
      logger.warn({ redis: describeRedisTarget(redisTarget(env)) }, env.REDIS_SENTINELS ? 'waiting for Redis through REDIS_SENTINELS: check that the sentinels answer and know a primary for REDIS_SENTINEL_NAME; the service takes jobs once it answers' : 'waiting for Redis at REDIS_URL: check that Redis is running there; the service takes jobs once it answers'),
    );
    closers.shift();
    checks.push(
      { name: 'redis', probe: () => pingRedis(redis) },
      { name: 'postgres', probe: () => pingPostgres(pool) },
      { name: 'migrations', probe: async () => (await pendingMigrations(pool, schema, spec.migrationsDir)).length === 0 },
      { name: 'worker', probe: async () => serviceWorker.worker.isRunning() },
      ...(spec.extraChecks?.(built) ?? []),
    );
    phase = { phase: 'running' };
    logger.info({ queue: spec.queue, concurrency: env.WORKER_CONCURRENCY, port: ops.port, schema, operations: operations.map((o) => o.name) }, 'started');

    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        // Not ready from the first moment, so no new work is routed here while running jobs finish.
        phase = { phase: 'stopping' };
        await Promise.all([serviceWorker.close(env.SHUTDOWN_GRACE_MS), spec.onStopping?.(built)]);
        await spec.onStop?.(built);
        for (const close of closers) await close().catch((err: unknown) => logger.warn({ err }, 'close failed'));
        await pool.end();
      })());
    return { ...built, logger, metrics, pool, schema, ops, serviceWorker, stop };
  } catch (err) {
    if (parts) await spec.onStop?.(parts).catch((stopErr: unknown) => logger.warn({ err: stopErr }, 'releasing the service\'s parts after a failed start failed'));
    for (const close of closers) await close().catch(() => {});
    await pool.end().catch(() => {});
    throw err;
  }
}
