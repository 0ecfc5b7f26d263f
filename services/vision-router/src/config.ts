import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { commonEnvSchema, portVar } from '@vouch/platform';

/** OCR workers by default: one per core, at most 4 (each holds ~40 MB of WASM and language data). */
export const DEFAULT_OCR_WORKERS = Math.max(1, Math.min(4, availableParallelism()));

/**
 * The glibc malloc setting the vision-router process must start with
 * (deploy/k8s/base/vision-router.yaml, docker-compose.yml and scripts/up.sh
 * set it). By default glibc raises its mmap threshold after each large free,
 * up to 32 MB, so later decoding buffers come from heaps that fragment and
 * stay resident. After four 40 MP images, with both OCR workers already
 * replaced, RSS took 41 s to come back to 18 % above its pre-flood value
 * without it, and 2 s to come within 20 % with the threshold fixed at
 * glibc's initial 128 KiB (memory-returns.test.ts). glibc reads it before
 * any code runs, so the service can only check it: it warns at start when
 * it is unset.
 */
export const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;

const int = (min: number, max: number, what: string) => z.coerce.number().int(`${what} must be a whole number`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** The vision-router's environment. */
export const visionRouterEnvSchema = commonEnvSchema.extend({
  HTTP_PORT: portVar(9101),
  /** Jobs at once; OCR itself is bounded by OCR_WORKERS, so more jobs than workers only overlap decoding with OCR. */
  WORKER_CONCURRENCY: int(1, 64, 'WORKER_CONCURRENCY').default(DEFAULT_OCR_WORKERS),
  /** The schema holding the gateway's media tables, which this service reads (never writes). */
  GATEWAY_DB_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase Postgres identifier, e.g. gateway').default('gateway'),
  OCR_WORKERS: int(1, 32, 'OCR_WORKERS').default(DEFAULT_OCR_WORKERS),
  /** tesseract.js advises recycling workers in long-running servers: WASM memory only grows and the adaptive dictionary keeps learning. */
  OCR_RECYCLE_AFTER: int(1, 100_000, 'OCR_RECYCLE_AFTER').default(200),
  /**
   * A worker that read an image above this many pixels (after read-text's
   * resizing, so at most 16 MP) is replaced once idle: its heap grew about
   * 15 bytes a pixel for it (docs/ocr.md). At 4 MP a 1080p screenshot's
   * worker stays and a 12 MP phone photo's is replaced.
   */
  OCR_RECYCLE_ABOVE_PIXELS: int(100_000, 268_402_689, 'OCR_RECYCLE_ABOVE_PIXELS').default(4_000_000),
  /** How long such a worker waits for another job first: a flood of large images reuses it instead of restarting it (~0.5 s) each time. */
  OCR_RECYCLE_IDLE_MS: int(0, 600_000, 'OCR_RECYCLE_IDLE_MS').default(2_000),
  OCR_WORKER_START_TIMEOUT_MS: int(1_000, 300_000, 'OCR_WORKER_START_TIMEOUT_MS').default(30_000),
  /** One recognition's deadline; past it the worker is replaced and the OCR stage is unresolved. */
  OCR_TIMEOUT_MS: int(1_000, 600_000, 'OCR_TIMEOUT_MS').default(60_000),
  /** Images above this many pixels are refused before they are decoded (decompression bombs). */
  VISION_MAX_PIXELS: int(1_000_000, 268_402_689, 'VISION_MAX_PIXELS').default(40_000_000),
  /** Images that arrived within this many seconds of the latest one compete with it: vision.analyze asks which one is meant. */
  VISION_AMBIGUITY_WINDOW_S: int(0, 86_400, 'VISION_AMBIGUITY_WINDOW_S').default(120),
  /**
   * The Ollama that runs auxiliary vision. Unset: observation and OCR still
   * run, and every packet that needed a vision model says it did not run.
   * ollama-js reads no environment itself and takes `http://host` without a
   * port as port 80, so the scheme and port are spelled out.
   */
  OLLAMA_HOST: z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/, error: 'must be the Ollama base URL with scheme and port, e.g. http://ollama:11434 (leave it unset to run without auxiliary vision)' }))
    .optional(),
  VISION_MODEL: z.string().trim().min(1, 'must name an Ollama vision model, e.g. moondream').default('moondream'),
  /** ollama-js has no timeout of its own; past this the auxiliary stage is unresolved. */
  VISION_TIMEOUT_MS: int(100, 600_000, 'VISION_TIMEOUT_MS').default(60_000),
  /** Packets and cached evidence are kept this long (pruned at start); at least 8 days, so a re-run of any job BullMQ still holds finds its packet. */
  VISION_RETENTION_DAYS: int(8, 3650, 'VISION_RETENTION_DAYS').default(30),
  /**
   * BullMQ lock lifetime; it renews at half of it. OCR and decoding run off
   * the event loop (tesseract.js worker threads, libvips threads), so the
   * loop stalls for milliseconds; this leaves room for a saturated machine.
   */
  LOCK_DURATION_MS: int(5_000, 600_000, 'LOCK_DURATION_MS').default(60_000),
});
export type VisionRouterEnv = z.infer<typeof visionRouterEnvSchema>;
