import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OcrPool, type OcrPoolOptions } from '../src/ocr-pool.js';
import { largePage } from './large-page.js';
import { renderText } from './render-text.js';

type PoolEvent = Parameters<NonNullable<OcrPoolOptions['onEvent']>>[0];

const ABOVE = 1_000_000;
const IDLE_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Recycling by pixels: a worker that read a large image is replaced once idle. One worker: the machine is shared. */
describe('OCR worker recycling by pixels', { timeout: 120_000 }, () => {
  let large: Buffer;
  let small: Buffer;
  let pool: OcrPool | undefined;
  let events: PoolEvent[];

  beforeAll(async () => {
    // 1.2 MP against a 1 MP limit, and a 0.03 MP line of text.
    [large, small] = await Promise.all([largePage(1200, 1000, 'L'), renderText({ text: 'Quota exceeded', size: 28 })]);
  });

  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  const startPool = async (opts: Partial<OcrPoolOptions> = {}) => {
    events = [];
    pool = new OcrPool({ size: 1, recycleAfter: 1_000, startTimeoutMs: 60_000, jobTimeoutMs: 60_000, recycleAbovePixels: ABOVE, recycleIdleMs: IDLE_MS, onEvent: (e) => events.push(e), ...opts });
    await pool.warm();
    expect(events).toEqual(['started']);
    return pool;
  };

  /** Waits until the pool has reported `count` events, or fails naming what it saw. */
  const eventsReach = async (count: number) => {
    const deadline = Date.now() + 30_000;
    while (events.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} pool events, saw ${events.join(', ')}`);
      await sleep(20);
    }
  };

  it('replaces a worker that read an image above the limit once it has been idle, and the new one reads', async () => {
    const ocr = await startPool();
    expect((await ocr.recognize(large)).text).toContain('Invoice L-0');
    expect(events).toEqual(['started']);
    await eventsReach(3);
    expect(events).toEqual(['started', 'recycled', 'started']);
    expect((await ocr.recognize(small)).text.trim()).toBe('Quota exceeded');
    // The new worker read only a small image: it stays.
    await sleep(IDLE_MS * 3);
    expect(events).toEqual(['started', 'recycled', 'started']);
  });

  it('keeps a worker that read only images under the limit', async () => {
    const ocr = await startPool();
    for (let i = 0; i < 3; i++) await ocr.recognize(small);
    await sleep(IDLE_MS * 3);
    expect(events).toEqual(['started']);
  });

  it('reuses a grown worker for back-to-back images and replaces it only after the last', async () => {
    const ocr = await startPool({ recycleIdleMs: 1_500 });
    await ocr.recognize(large);
    await ocr.recognize(small);
    await ocr.recognize(large);
    expect(events).toEqual(['started']);
    await eventsReach(3);
    expect(events).toEqual(['started', 'recycled', 'started']);
  });

  it('replaces nothing without a pixel limit, as before', async () => {
    const ocr = await startPool({ recycleAbovePixels: undefined });
    await ocr.recognize(large);
    await sleep(IDLE_MS * 3);
    expect(events).toEqual(['started']);
  });

  it('closes while a recycled worker is starting, leaving no worker thread behind', async () => {
    // A worker thread holds a MessagePort open for as long as it lives.
    const threads = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
    const before = threads();
    const ocr = await startPool({ recycleIdleMs: 0 });
    await ocr.recognize(large);
    await eventsReach(2);
    expect(events).toEqual(['started', 'recycled']);
    // close() waits for the successor to finish starting, then terminates it.
    await ocr.close();
    pool = undefined;
    expect(events).toEqual(['started', 'recycled', 'started']);
    await expect(ocr.recognize(small)).rejects.toThrow('the OCR pool is shutting down');
    // A thread exits a moment after terminate() (tesseract.js does not wait for it).
    const deadline = Date.now() + 10_000;
    while (threads() > before && Date.now() < deadline) await sleep(50);
    expect(threads()).toBeLessThanOrEqual(before);
  });
});
