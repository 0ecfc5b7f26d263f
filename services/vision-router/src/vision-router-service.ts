import { fileURLToPath } from 'node:url';
import { QUEUES } from '@vouch/contracts';
import { mediaReader } from '@vouch/media';
import { redactHost, startQueueService, type Logger, type PlatformMetrics, type RunningQueueService } from '@vouch/platform';
import { createAuxiliaryVision } from './auxiliary-vision.js';
import { MALLOC_ENV, type VisionRouterEnv } from './config.js';
import { createVisionMetrics, type VisionMetrics } from './metrics.js';
import { OcrPool } from './ocr-pool.js';
import { pruneOldEvidence } from './packet-store.js';
import { createVisionCommands, visionHandlers, type VisionCaller, type VisionCommands } from './vision-handlers.js';

export const VISION_ROUTER_SERVICE = 'vision-router';
export const VISION_ROUTER_VERSION = '0.1.0';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export interface VisionRouterOverrides {
  logger?: Logger;
  metrics?: PlatformMetrics;
  /** BullMQ lock settings; tests shorten them so a killed worker's job is re-run within a second or two. */
  lockDuration?: number;
  stalledInterval?: number;
  beforeStore?: (caller: VisionCaller) => Promise<void>;
}

export interface RunningVisionRouter extends RunningQueueService {
  visionMetrics: VisionMetrics;
  commands: VisionCommands;
  ocr: OcrPool;
}

/**
 * Starts the vision-router: migrations, the OCR pool (started at boot, so a
 * broken install stops the process), auxiliary vision when OLLAMA_HOST is
 * set, one handler per vision operation, and the ops server. OCR runs in
 * tesseract.js worker threads and decoding in libvips threads, so the event
 * loop that renews BullMQ's locks stays free; WORKER_CONCURRENCY bounds the
 * jobs and OCR_WORKERS the recognitions at once.
 */
export async function startVisionRouter(env: VisionRouterEnv, overrides: VisionRouterOverrides = {}): Promise<RunningVisionRouter> {
  return startQueueService({
    service: VISION_ROUTER_SERVICE,
    version: VISION_ROUTER_VERSION,
    queue: QUEUES.visionRouter,
    env,
    migrationsDir: MIGRATIONS_DIR,
    lockDuration: overrides.lockDuration ?? env.LOCK_DURATION_MS,
    ...(overrides.stalledInterval ? { stalledInterval: overrides.stalledInterval } : {}),
    ...(overrides.logger ? { logger: overrides.logger } : {}),
    ...(overrides.metrics ? { metrics: overrides.metrics } : {}),
    async setup({ pool, logger, metrics }) {
      const pruned = await pruneOldEvidence(pool, env.VISION_RETENTION_DAYS);
      if (pruned.packets || pruned.cached) logger.info({ ...pruned, retentionDays: env.VISION_RETENTION_DAYS }, 'forgot old evidence packets');
      const visionMetrics = createVisionMetrics(metrics.registry);
      const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;
      if (glibc && process.env.MALLOC_MMAP_THRESHOLD_ === undefined) {
        logger.warn({ set: MALLOC_ENV }, 'MALLOC_MMAP_THRESHOLD_ is unset: memory used to decode large images may stay resident after them (docs/ocr.md); start the process with it set');
      }
      const ocr = new OcrPool({
        size: env.OCR_WORKERS,
        recycleAfter: env.OCR_RECYCLE_AFTER,
        recycleAbovePixels: env.OCR_RECYCLE_ABOVE_PIXELS,
        recycleIdleMs: env.OCR_RECYCLE_IDLE_MS,
        startTimeoutMs: env.OCR_WORKER_START_TIMEOUT_MS,
        jobTimeoutMs: env.OCR_TIMEOUT_MS,
        logger,
        onEvent: (event) => visionMetrics.ocrWorkers.inc({ event }),
      });
      try {
        await ocr.warm();
      } catch (err) {
        await ocr.close();
        throw err;
      }
      const auxiliary = createAuxiliaryVision({
        host: env.OLLAMA_HOST,
        model: env.VISION_MODEL,
        timeoutMs: env.VISION_TIMEOUT_MS,
        logger,
        onOutcome: (outcome) => visionMetrics.auxiliaryCalls.inc({ outcome }),
      });
      logger.info(
        {
          ocrWorkers: env.OCR_WORKERS,
          ocrRecycle: { afterJobs: env.OCR_RECYCLE_AFTER, abovePixels: env.OCR_RECYCLE_ABOVE_PIXELS, idleMs: env.OCR_RECYCLE_IDLE_MS },
          gatewaySchema: env.GATEWAY_DB_SCHEMA,
          auxiliaryVision: auxiliary.configured ? { host: redactHost(env.OLLAMA_HOST ?? ''), model: env.VISION_MODEL, timeoutMs: env.VISION_TIMEOUT_MS } : 'off: OLLAMA_HOST is unset',
        },
        'vision stages configured',
      );
      const commands = createVisionCommands({
        pool,
        media: mediaReader(pool, env.GATEWAY_DB_SCHEMA),
        ocr,
        auxiliary,
        metrics: visionMetrics,
        maxPixels: env.VISION_MAX_PIXELS,
        ambiguityWindowMs: env.VISION_AMBIGUITY_WINDOW_S * 1000,
        logger,
        ...(overrides.beforeStore ? { beforeStore: overrides.beforeStore } : {}),
      });
      return { handlers: visionHandlers(commands), visionMetrics, commands, ocr };
    },
    onStop: ({ ocr }) => ocr.close(),
  });
}
