import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  QueueHub,
  assertPoolSchema,
  closeRedis,
  createConsumerRedis,
  createLogger,
  createMetrics,
  createPool,
  createProducerRedis,
  redisTarget,
  defaultSchema,
  pendingMigrations,
  pingPostgres,
  pingRedis,
  postgresTargets,
  runMigrations,
  type Logger,
  type PlatformMetrics,
  type Pool,
} from '@vouch/platform';
import { sweepIdempotencyKeys } from './idempotency.js';
import type { OperationDef } from '@vouch/contracts';
import { ApiKeyCache } from './api-key-cache.js';
import { ClaimWaits } from './claim-waits.js';
import { createApp } from './app.js';
import { answerClientErrors } from './client-errors.js';
import { drainConnections } from './drain-connections.js';
import { bodyLimitFor, tenantBodyShare, type GatewayEnv } from './config.js';
import { jobsGetHandler } from './jobs-operation.js';
import { MIGRATIONS_DIR } from './migrations-dir.js';
import { mediaHandlers } from './media/media-operations.js';
import { systemStatusHandler } from './system-status.js';
import { TenantBudgets } from './tenant-budgets.js';

export const GATEWAY_VERSION = '0.1.0';
export { MIGRATIONS_DIR };

export interface RunningGateway {
  port: number;
  pool: Pool;
  logger: Logger;
  metrics: PlatformMetrics;
  hub: QueueHub;
  /** Every tenant's rate and concurrency budgets: their Redis keys, for tests and operators. */
  budgets: TenantBudgets;
  /** Ordered stop: stop accepting requests, finish those in flight, then close queues, Redis and Postgres. */
  stop(): Promise<void>;
}

/** Starts the gateway: migrations, connections, app, listener. `operations` replaces the table in tests. */
export async function startGateway(env: GatewayEnv, opts: { logger?: Logger; operations?: readonly OperationDef[] } = {}): Promise<RunningGateway> {
  const logger = opts.logger ?? createLogger({ service: 'gateway', level: env.LOG_LEVEL });
  const metrics = createMetrics({ service: 'gateway', ...(env.METRICS_TENANT_LABELS !== undefined ? { tenantLabels: env.METRICS_TENANT_LABELS } : {}) });
  const schema = env.DB_SCHEMA ?? defaultSchema('gateway');
  const targets = postgresTargets(env);
  await runMigrations({ databaseUrl: targets.directUrl, variable: targets.directVariable, schema, dir: MIGRATIONS_DIR, logger, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS });
  const pool = createPool({
    url: targets.url,
    schema,
    applicationName: 'gateway',
    max: 20,
    connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: env.PG_STATEMENT_TIMEOUT_MS,
    transactionPooling: targets.transactionPooling,
  });
  await assertPoolSchema(pool, schema, { url: targets.url, connectTimeoutMs: env.PG_CONNECT_TIMEOUT_MS }).catch(async (err: unknown) => {
    await pool.end().catch(() => {});
    throw err;
  });
  const producer = createProducerRedis(redisTarget(env), 'gateway:producer');
  producer.on('error', () => {}); // reconnects by itself; requests meanwhile get 503
  // Give Redis a moment so the first requests do not see a 503 from a connection
  // still opening; if it is down the gateway starts anyway and /readyz says so.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3_000);
    producer.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const hub = new QueueHub({ producer, redisUrl: redisTarget(env), prefix: env.BULLMQ_PREFIX, name: 'gateway' });
  // Revocations and the board's announcements of work arrive here; the subscriber reconnects by itself
  // (and the cache forgets every key meanwhile; waiting claims poll meanwhile).
  const subscriber = createConsumerRedis(redisTarget(env), 'gateway:subscriber');
  subscriber.on('error', () => {});
  const keyCache = new ApiKeyCache(pool, subscriber, env.BULLMQ_PREFIX);
  await keyCache.start();
  const claimWaits = new ClaimWaits({
    subscriber,
    redis: producer,
    prefix: env.BULLMQ_PREFIX,
    perTenant: env.BOARD_CLAIM_WAITS_PER_TENANT,
    safetyPollMs: env.BOARD_CLAIM_SAFETY_POLL_MS,
    registry: metrics.registry,
  });
  await claimWaits.start();
  // Counted in Redis, so every replica sees the same spend; on the producer connection, so a check while Redis is down fails at once.
  const budgets = new TenantBudgets({
    redis: producer,
    prefix: env.BULLMQ_PREFIX,
    defaults: { rate: env.TENANT_RATE_BUDGET, windowSeconds: env.TENANT_RATE_WINDOW_SECONDS, concurrency: env.TENANT_CONCURRENCY_BUDGET },
    registry: metrics.registry,
    tenantLabel: metrics.tenantLabel,
  });
  metrics.watchQueues(hub.all());
  await hub.listenAll();
  const startedAt = Date.now();

  const app = createApp({
    pool,
    authenticate: (key) => keyCache.authenticate(key),
    hub,
    claimWaits,
    budgets,
    maxImagePixels: env.MEDIA_MAX_PIXELS,
    logger,
    registry: metrics.registry,
    version: GATEWAY_VERSION,
    bodyLimitBytes: bodyLimitFor(env),
    dashboardWritable: env.DASHBOARD_WRITABLE,
    bodyBudgetBytes: env.BODY_BUDGET_BYTES,
    bodyBudgetTenantBytes: tenantBodyShare(env),
    loopbackOnly: ['127.0.0.1', 'localhost', '::1'].includes(env.HOST),
    ...(opts.operations ? { operations: opts.operations } : {}),
    handlers: [
      systemStatusHandler({ hub, pool, producer, version: GATEWAY_VERSION, startedAt }),
      jobsGetHandler(hub),
      ...mediaHandlers(pool, {
        maxBytes: env.MEDIA_MAX_BYTES,
        maxPixels: env.MEDIA_MAX_PIXELS,
        maxFrames: env.MEDIA_MAX_FRAMES,
        concurrency: env.MEDIA_DECODE_CONCURRENCY,
      }),
    ],
    readiness: [
      { name: 'redis', probe: () => pingRedis(producer) },
      { name: 'postgres', probe: () => pingPostgres(pool) },
      { name: 'migrations', probe: async () => (await pendingMigrations(pool, schema, MIGRATIONS_DIR)).length === 0 },
    ],
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(env.PORT, env.HOST, () => resolve(s));
    s.once('error', reject);
  });
  // Node's default keeps idle sockets 5 s; a load balancer's idle timeout is usually 60 s.
  server.keepAliveTimeout = 65_000;
  const drain = drainConnections(server);
  answerClientErrors(server, logger);
  const sweeper = setInterval(() => {
    sweepIdempotencyKeys(pool).then(
      (n) => n && logger.info({ deleted: n }, 'expired idempotency keys swept'),
      (err: unknown) => logger.warn({ err }, 'idempotency sweep failed'),
    );
  }, 3_600_000).unref();
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, schema }, 'gateway listening');

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      clearInterval(sweeper);
      // Waiting claims answer claimed: false now rather than hold the drain for up to 25 s: the caller calls again, elsewhere.
      claimWaits.close();
      await drain.stop(env.SHUTDOWN_GRACE_MS);
      budgets.close();
      await keyCache.close();
      await hub.close();
      await closeRedis(subscriber);
      await closeRedis(producer);
      await pool.end();
    })());
  return { port, pool, logger, metrics, hub, budgets, stop };
}
