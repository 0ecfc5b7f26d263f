/**
 * The benchmark's service: a worker on one service queue that answers only
 * system.ping, run in its own process like a deployed service.
 */
import { QUEUES } from '@vouch/contracts';
import { consumerRedisOptions, createLogger, createMetrics, startServiceWorker, stopOnSignals } from '@vouch/platform';

const prefix = process.env.BULLMQ_PREFIX ?? 'vouch';
const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 16);
const logger = createLogger({ service: 'bench-ping-worker', level: 'warn' });
const sw = startServiceWorker({
  service: QUEUES.extractor,
  version: 'bench',
  queue: QUEUES.extractor,
  operations: [],
  handlers: [],
  connection: consumerRedisOptions(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'),
  prefix,
  concurrency,
  logger,
  metrics: createMetrics({ service: 'bench-ping-worker', collectDefaults: false }),
});
await sw.worker.waitUntilReady();
console.log('ready');
stopOnSignals(async () => void (await sw.close(2_000)), logger);
