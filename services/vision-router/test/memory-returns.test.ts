import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, type EvidencePacket, type JobEnvelope } from '@vouch/contracts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, TsProcesses, eventually, useTestPrefix, useTestSchema, type TsProcess } from '@vouch/testing';
import { MALLOC_ENV } from '../src/config.js';
import { largePage } from './large-page.js';
import { renderText } from './render-text.js';

/**
 * Issue 17's reproduction, scaled to a 2-core machine: large, well-compressed
 * PNGs flood the real vision-router process (src/main.ts, started as
 * deployed) through its queue, and its resident memory must come back
 * within 20 % of what it was before the flood.
 */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const MiB = 1024 * 1024;
/** 8000×5000: the 40 MP of the images, VISION_MAX_PIXELS's default. */
const [WIDTH, HEIGHT] = [8000, 5000];
/** Two per OCR worker: enough to grow both, few enough for a shared 2-core machine. */
const FLOOD = 4;
const TENANTS = ['acme', 'initech'];
/** How long the memory may take to return: OCR_RECYCLE_IDLE_MS (2 s by default), then the workers' restart, on a busy machine. */
const RETURN_WITHIN_MS = 20_000;

/** Resident memory of a process, from /proc (Linux). */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')![1]) * 1024;
}

const mib = (bytes: number) => `${Math.round(bytes / MiB)} MiB`;

describe('vision-router memory after a flood of large images', { timeout: 300_000 }, () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let queue: Queue<JobEnvelope>;
  let events: QueueEvents;
  const processes = new TsProcesses();
  let service: TsProcess;
  let pages: Buffer[];
  let jobs = 0;

  /** Queues one vision.evidence job whose prompt asks for the text (so OCR runs), and waits for its packet. */
  const evidence = async (tenant: string, image: Buffer): Promise<EvidencePacket> => {
    const job = await queue.add('vision.evidence', { tenant, input: { prompt: 'What does the text on this page say?', imageBase64: image.toString('base64') } }, { jobId: `rss-${++jobs}` });
    return (await job.waitUntilFinished(events, 180_000)) as EvidencePacket;
  };

  beforeAll(async () => {
    prefix = await useTestPrefix('vision_rss');
    schema = await useTestSchema('vision_rss');
    queue = new Queue<JobEnvelope>(QUEUES.visionRouter, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    events = new QueueEvents(QUEUES.visionRouter, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    await events.waitUntilReady();
    // Every page differs: the evidence cache would answer a repeated one without decoding it.
    pages = await Promise.all(Array.from({ length: FLOOD }, (_, i) => largePage(WIDTH, HEIGHT, `P${i}`)));
    service = processes.spawn(MAIN, {
      ...MALLOC_ENV,
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_URL: TEST_DATABASE_URL,
      BULLMQ_PREFIX: prefix.prefix,
      DB_SCHEMA: schema.schema,
      HTTP_PORT: '0',
      // The compose and k8s settings: two jobs and two OCR workers; the two tenants get one slot each.
      WORKER_CONCURRENCY: '2',
      OCR_WORKERS: '2',
      LOG_LEVEL: 'info',
    });
    await eventually('the vision-router started', () => service.lines.find((l) => l.includes('"msg":"started"')), 120_000, 100);
  });

  afterAll(async () => {
    await processes.killAll();
    await events?.close();
    await queue?.close();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  it('returns within 20 % of its pre-flood RSS once idle', async () => {
    // Warm every path a job takes (both OCR workers, sharp, Postgres, the JIT) with small pages first.
    const warmUps = await Promise.all(TENANTS.flatMap((tenant) => [0, 1].map(async (i) => evidence(tenant, await renderText({ text: `Warm-up ${tenant} ${i}`, size: 28 })))));
    expect(warmUps.map((p) => p.stages.find((s) => s.kind === 'ocr')?.status)).toEqual(['ran', 'ran', 'ran', 'ran']);
    await new Promise((r) => setTimeout(r, 3_000));
    const before = rssOf(service.proc.pid!);

    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(service.proc.pid!))), 100);
    const packets = await Promise.all(pages.map((page, i) => evidence(TENANTS[i % TENANTS.length]!, page)));
    clearInterval(sampler);
    packets.forEach((packet, i) => {
      expect(packet.media).toMatchObject({ width: WIDTH, height: HEIGHT });
      expect(packet.stages.find((s) => s.kind === 'ocr')).toMatchObject({ status: 'ran', output: { text: expect.stringContaining(`Invoice P${i}-0`) } });
    });
    const done = rssOf(service.proc.pid!);

    const started = Date.now();
    let after = done;
    while (after > before * 1.2 && Date.now() - started < RETURN_WITHIN_MS) {
      await new Promise((r) => setTimeout(r, 500));
      after = rssOf(service.proc.pid!);
    }
    console.log(
      `vision-router RSS, ${FLOOD} PNGs of ${(WIDTH * HEIGHT) / 1e6} MP (${Math.round(pages[0]!.length / 1024)} KB each): ` +
        `${mib(before)} before, peak ${mib(peak)}, ${mib(done)} when the last finished, ${mib(after)} ${((Date.now() - started) / 1000).toFixed(1)} s later`,
    );
    // The flood must have taken memory, or returning it would prove nothing.
    expect(peak - before).toBeGreaterThan(200 * MiB);
    expect(after).toBeLessThanOrEqual(before * 1.2);
  });
});
