import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { createWorker, OEM, PSM, type Page, type Worker } from 'tesseract.js';
import type { Logger } from '@vouch/platform';

const require = createRequire(import.meta.url);

/**
 * The English LSTM-only data shipped in the @tesseract.js-data/eng npm
 * package (4.0.0_best_int, 2.95 MB gzipped), so OCR never downloads
 * anything. The package's main entry points at the larger legacy+LSTM
 * folder beside it.
 */
export const OCR_LANG_PATH = join(dirname(require.resolve('@tesseract.js-data/eng')), '4.0.0_best_int');
export const TESSERACT_VERSION: string = (require('tesseract.js/package.json') as { version: string }).version;
export const OCR_TOOL = `tesseract.js ${TESSERACT_VERSION} (eng, LSTM)`;

export interface OcrPoolOptions {
  size: number;
  /** Jobs a worker runs before it is replaced. */
  recycleAfter: number;
  /**
   * A worker that has read an image of more than this many pixels is
   * replaced once it has been idle recycleIdleMs: its WASM heap grew for that
   * image and never shrinks. Unset: only recycleAfter replaces workers.
   */
  recycleAbovePixels?: number;
  /** How long a grown worker waits for its next job before it is replaced; a flood reuses it meanwhile. */
  recycleIdleMs?: number;
  startTimeoutMs: number;
  /** One recognition's deadline; past it the worker is terminated and replaced. */
  jobTimeoutMs: number;
  logger?: Logger;
  /** Called on worker life events, for metrics. */
  onEvent?: (event: 'started' | 'recycled' | 'failed' | 'timed_out') => void;
}

let priming: Promise<Buffer> | undefined;
/** A small image with a few dark bars, enough to run every part of a recognition once. */
function primingImage(): Promise<Buffer> {
  priming ??= sharp({ create: { width: 160, height: 48, channels: 3, background: '#ffffff' } })
    .composite([10, 50, 90].map((left) => ({ input: { create: { width: 30, height: 20, channels: 3, background: '#000000' } }, left, top: 14 })))
    .png()
    .toBuffer();
  return priming;
}

/** OCR could not run or finish; the OCR stage records it as unresolved. */
export class OcrUnavailable extends Error {}

interface Slot {
  worker: Worker | undefined;
  jobs: number;
  /** The most pixels of any image this worker has read: what its WASM heap grew to hold. */
  largestPixels: number;
  busy: boolean;
  idleTimer: NodeJS.Timeout | undefined;
}

/** Pixels in an image's header; 0 when it has none sharp can read (tesseract.js then refuses the bytes anyway). */
async function pixelsOf(image: Buffer): Promise<number> {
  const meta = await sharp(image).metadata().catch(() => undefined);
  return (meta?.width ?? 0) * (meta?.height ?? 0);
}

/**
 * A fixed pool of tesseract.js workers. Each worker is a worker thread, so
 * recognition never blocks the event loop BullMQ renews its locks on. Every
 * worker gets an error handler (without one, tesseract.js rethrows a
 * worker-side error in the main thread and kills the process), a start-up
 * deadline (a failed language load never settles createWorker's promise),
 * a per-job deadline (a dead thread never answers), and is recycled after
 * recycleAfter jobs. Callers wait for a free worker in arrival order.
 *
 * WASM memory never shrinks: a worker that read a 10-megapixel page keeps
 * about 170 MB more than a fresh one until it is terminated (docs/ocr.md).
 * So a worker that read more than recycleAbovePixels is replaced once it
 * has been idle recycleIdleMs: back-to-back large images reuse the grown
 * heap, and the memory returns when the flood ends.
 */
export class OcrPool {
  private readonly slots: Slot[];
  private readonly waiting: Array<(slot: Slot) => void> = [];
  /** Idle recycles in progress, which close() waits for. */
  private readonly recycling = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly opts: OcrPoolOptions) {
    this.slots = Array.from({ length: opts.size }, () => ({ worker: undefined, jobs: 0, largestPixels: 0, busy: false, idleTimer: undefined }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** Starts every worker now, so a broken install stops the process at boot rather than failing jobs. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map(async (slot) => (slot.worker ??= await this.start())));
  }

  private async start(): Promise<Worker> {
    if (!existsSync(join(OCR_LANG_PATH, 'eng.traineddata.gz'))) {
      throw new OcrUnavailable('the OCR language data (@tesseract.js-data/eng) is not installed: run npm ci');
    }
    const creating = createWorker('eng', OEM.LSTM_ONLY, {
      langPath: OCR_LANG_PATH,
      gzip: true,
      // The default 'write' cache drops a 5 MB file into the working directory.
      cacheMethod: 'none',
      errorHandler: (err: unknown) => this.opts.logger?.warn({ err: String(err) }, 'OCR worker reported an error'),
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OcrUnavailable(`an OCR worker did not start within ${this.opts.startTimeoutMs} ms`)), this.opts.startTimeoutMs);
    });
    try {
      const worker = await Promise.race([creating, deadline]);
      await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO, user_defined_dpi: '300' });
      // A worker's first recognition is several times slower than the next
      // (WASM compiled and warmed on first use); pay it here, not in a job.
      await Promise.race([worker.recognize(await primingImage()), deadline]);
      this.opts.onEvent?.('started');
      return worker;
    } catch (err) {
      this.opts.onEvent?.('failed');
      // A worker that starts after its deadline is not leaked.
      void creating.then((w) => w.terminate()).catch(() => {});
      throw err instanceof OcrUnavailable ? err : new OcrUnavailable(`an OCR worker failed to start: ${String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private acquire(): Promise<Slot> {
    if (this.closed) return Promise.reject(new OcrUnavailable('the OCR pool is shutting down'));
    const free = this.slots.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      clearTimeout(free.idleTimer);
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) {
      next(slot);
      return;
    }
    slot.busy = false;
    const { recycleAbovePixels, recycleIdleMs = 0 } = this.opts;
    if (recycleAbovePixels !== undefined && slot.largestPixels > recycleAbovePixels && !this.closed) {
      slot.idleTimer = setTimeout(() => {
        const recycled = this.recycleIdle(slot);
        this.recycling.add(recycled);
        void recycled.finally(() => this.recycling.delete(recycled));
      }, recycleIdleMs);
    }
  }

  /** Replaces a grown worker that stayed idle, and starts its successor now so the next job does not wait for it. */
  private async recycleIdle(slot: Slot): Promise<void> {
    if (slot.busy || this.closed) return;
    slot.busy = true;
    try {
      this.opts.onEvent?.('recycled');
      await this.retire(slot);
      // close() waits for this, then retires the successor with the rest.
      slot.worker = await this.start();
    } catch (err) {
      // The next job starts a worker for this slot (and reports the failure).
      this.opts.logger?.warn({ err: String(err) }, 'an OCR worker could not be restarted after recycling');
    } finally {
      this.release(slot);
    }
  }

  private async retire(slot: Slot): Promise<void> {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.jobs = 0;
    slot.largestPixels = 0;
    await worker?.terminate().catch(() => {});
  }

  /** Recognises one image (PNG/JPEG bytes): text, page confidence, and the block tree with boxes. */
  async recognize(image: Buffer): Promise<Page> {
    const pixels = await pixelsOf(image);
    const slot = await this.acquire();
    try {
      slot.worker ??= await this.start();
      slot.largestPixels = Math.max(slot.largestPixels, pixels);
      const worker = slot.worker;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OcrUnavailable(`OCR did not finish within ${this.opts.jobTimeoutMs} ms (OCR_TIMEOUT_MS)`)), this.opts.jobTimeoutMs);
      });
      try {
        const { data } = await Promise.race([worker.recognize(image, {}, { text: true, blocks: true }), deadline]);
        slot.jobs++;
        if (slot.jobs >= this.opts.recycleAfter) {
          this.opts.onEvent?.('recycled');
          await this.retire(slot);
        }
        return data;
      } catch (err) {
        if (err instanceof OcrUnavailable) {
          this.opts.onEvent?.('timed_out');
          // The thread may be wedged: replace it.
          await this.retire(slot);
          throw err;
        }
        // tesseract.js rejects with a string; the worker stays usable.
        throw new OcrUnavailable(`tesseract could not read the image: ${String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      this.release(slot);
    }
  }

  /** Terminates every worker, a successor being started included; waits for each, so no thread outlives the pool. */
  async close(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots) clearTimeout(slot.idleTimer);
    await Promise.all(this.recycling);
    await Promise.all(this.slots.map((s) => this.retire(s)));
  }
}
