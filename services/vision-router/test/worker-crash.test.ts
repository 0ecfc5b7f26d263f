import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, type EvidencePacket, type JobEnvelope } from '@vouch/contracts';
import { createPool, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, spawnTsProcess, useTestPrefix, useTestSchema, type TsProcess } from '@vouch/testing';
import { countPackets, packetByJob } from '../src/packet-store.js';
import { renderText } from './render-text.js';

const SERVICE = fileURLToPath(new URL('./fixtures/vision-router-process.ts', import.meta.url));
const TEXT = 'Deploy failed: exit code 137';

// Two real processes start per test (tsx, migrations, OCR warm-up): seconds each on a busy machine.
describe('a vision-router worker killed mid-job', { timeout: 180_000 }, () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let queue: Queue<JobEnvelope>;
  let events: QueueEvents;
  let pool: Pool;
  let env: Record<string, string>;
  let image: string;
  const children: TsProcess[] = [];

  beforeAll(async () => {
    prefix = await useTestPrefix('vision_crash');
    schema = await useTestSchema('vision_crash');
    queue = new Queue<JobEnvelope>(QUEUES.visionRouter, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    events = new QueueEvents(QUEUES.visionRouter, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    await events.waitUntilReady();
    env = {
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_URL: TEST_DATABASE_URL,
      BULLMQ_PREFIX: prefix.prefix,
      DB_SCHEMA: schema.schema,
      HTTP_PORT: '0',
      WORKER_CONCURRENCY: '1',
      OCR_WORKERS: '1',
      SHUTDOWN_GRACE_MS: '5000',
      LOG_LEVEL: 'warn',
    };
    image = (await renderText({ text: TEXT, size: 28 })).toString('base64');
  });

  // A test that fails half-way must not leave its worker taking the next test's jobs.
  afterEach(async () => {
    const alive = children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
    for (const c of alive) c.proc.kill('SIGKILL');
    await Promise.all(alive.map((c) => c.exited));
  });

  afterAll(async () => {
    await events?.close();
    await queue?.close();
    await pool?.end();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawnService = (extra: Record<string, string> = {}) => {
    const child = spawnTsProcess(SERVICE, { ...env, ...extra });
    children.push(child);
    return child;
  };

  const addJob = (tenant: string, id: string): Promise<Job<JobEnvelope>> =>
    queue.add('vision.evidence', { tenant, input: { prompt: 'What does the error message say?', imageBase64: image } }, { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 100 } });

  it('during OCR: another worker re-runs the job and exactly one packet is stored', async () => {
    const a = spawnService({ HOLD_OCR_MS: '60000' });
    await a.waitFor('ready');
    pool ??= createPool({ url: TEST_DATABASE_URL, schema: schema.schema });
    const job = await addJob('acme', 'crash-mid-ocr');
    await a.waitFor('ocr started');
    a.proc.kill('SIGKILL');
    expect(await a.exited).toBeNull();
    expect(await countPackets(pool, 'acme')).toBe(0);

    const b = spawnService();
    await b.waitFor('ready');
    const packet = (await job.waitUntilFinished(events, 60_000)) as EvidencePacket;
    expect(packet.stages.find((s) => s.kind === 'ocr')).toMatchObject({ status: 'ran', output: { text: TEXT } });
    expect(b.lines.filter((l) => l === 'ocr started')).toHaveLength(1);
    expect(await countPackets(pool, 'acme')).toBe(1);
    expect(await packetByJob(pool, 'acme', job.id!)).toEqual(packet);
    expect(await (await queue.getJob(job.id!))!.getState()).toBe('completed');
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('after its packet was stored but before the job completed: the re-run returns the stored packet and runs no stage', async () => {
    const a = spawnService({ HOLD_AFTER_STORE_MS: '60000' });
    await a.waitFor('ready');
    pool ??= createPool({ url: TEST_DATABASE_URL, schema: schema.schema });
    const job = await addJob('initech', 'crash-after-store');
    await a.waitFor(`stored ${job.id}`);
    a.proc.kill('SIGKILL');
    expect(await a.exited).toBeNull();
    const stored = await packetByJob(pool, 'initech', job.id!);

    const b = spawnService();
    await b.waitFor('ready');
    const packet = (await job.waitUntilFinished(events, 60_000)) as EvidencePacket;
    expect(packet).toEqual(stored);
    expect(b.lines).not.toContain('ocr started');
    expect(await countPackets(pool, 'initech')).toBe(1);
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });
});
