import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUES, operationsForQueue } from '@vouch/contracts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestPrefix, useTestSchema } from '@vouch/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { startQueueService } from '../src/queue-service.js';
import { commonEnvSchema } from '../src/config.js';

// A service with a second worker (the extractor's GPU worker) closes it beside the main one, within the same grace:
// closed one after the other, it would take jobs while the first drains, and a stop would need two graces.
describe('stopping a queue service', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('runs onStopping while the main worker is still closing, and onStop after it', async () => {
    const prefix = await useTestPrefix('qs_stop');
    const schema = await useTestSchema('qs_stop');
    cleanups.push(() => schema.cleanup(), () => prefix.cleanup());
    const env = { ...commonEnvSchema.parse({ REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, LOG_LEVEL: 'silent' }), HTTP_PORT: 0, WORKER_CONCURRENCY: 1 };
    const seen: string[] = [];
    const running = await startQueueService({
      service: 'stop-probe',
      version: '0.0.0',
      queue: QUEUES.ledgerCritic,
      env,
      migrationsDir: mkdtempSync(join(tmpdir(), 'qs-stop-')),
      operations: [],
      setup: () => ({ handlers: [] }),
      onStopping: async () => {
        seen.push(`stopping, main worker closed: ${running.serviceWorker.worker.closing !== undefined && !running.serviceWorker.worker.isRunning()}`);
      },
      onStop: async () => {
        seen.push(`stop, main worker running: ${running.serviceWorker.worker.isRunning()}`);
      },
    });
    await running.stop();
    expect(seen).toEqual(['stopping, main worker closed: false', 'stop, main worker running: false']);
  });

  it('returns the parts its setup built, and releases them through onStop when the start fails after setup', async () => {
    const prefix = await useTestPrefix('qs_parts');
    const schema = await useTestSchema('qs_parts');
    cleanups.push(() => schema.cleanup(), () => prefix.cleanup());
    const env = { ...commonEnvSchema.parse({ REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, LOG_LEVEL: 'silent' }), HTTP_PORT: 0, WORKER_CONCURRENCY: 1 };
    const base = { service: 'parts-probe', version: '0.0.0', queue: QUEUES.ledgerCritic, env, migrationsDir: mkdtempSync(join(tmpdir(), 'qs-parts-')) };

    const running = await startQueueService({ ...base, operations: [], setup: () => ({ handlers: [], cache: { size: 3 } }) });
    expect(running.cache).toEqual({ size: 3 });
    await running.stop();

    const released: string[] = [];
    const failed = startQueueService({
      ...base,
      // Every ledger operation, and no handler for any: the handler check refuses the start after setup returned.
      operations: operationsForQueue(QUEUES.ledgerCritic),
      setup: () => ({ handlers: [], connection: 'open' }),
      onStop: async ({ connection }) => {
        released.push(connection);
      },
    });
    await expect(failed).rejects.toThrow(/parts-probe refuses to start: operation ledger\.\w+ has no handler/);
    expect(released).toEqual(['open']);
  });
});
