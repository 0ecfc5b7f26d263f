import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, type QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL, useTestPrefix } from '@vouch/testing';
import { handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

/**
 * A TCP relay to the real Redis that the test can cut: the worker talks to
 * Redis through it, so dropping it is Redis going away for the worker alone.
 */
class CuttableRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const QUEUE = 'test-reconnect' as QueueName;
const echo = defineOperation({
  name: 'test.echo',
  summary: 'echo',
  description: 'echo',
  owner: { queue: QUEUE },
  mode: 'job',
  http: { method: 'POST', path: '/v1/test/echo' },
  scope: 'admin',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  agentFacing: false,
  example: { n: 1 },
});

describe('a worker whose Redis connection drops', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let relay: CuttableRelay;
  let sw: ServiceWorker;
  let queue: Queue;
  let events: QueueEvents;

  beforeAll(async () => {
    prefix = await useTestPrefix('reconnect');
    const redis = new URL(TEST_REDIS_URL);
    relay = new CuttableRelay({ host: redis.hostname, port: Number(redis.port || 6379) });
    await relay.open();
    const direct = consumerRedisOptions(TEST_REDIS_URL);
    queue = new Queue(QUEUE, { connection: direct, prefix: prefix.prefix });
    events = new QueueEvents(QUEUE, { connection: direct, prefix: prefix.prefix });
    await events.waitUntilReady();
    sw = startServiceWorker({
      service: 'reconnect-test',
      version: '0',
      queue: QUEUE,
      operations: [echo],
      handlers: [handle(echo, async ({ n }) => ({ n }))],
      connection: consumerRedisOptions(`redis://127.0.0.1:${relay.port}`),
      prefix: prefix.prefix,
      concurrency: 1,
      logger: createLogger({ service: 'reconnect-test', level: 'silent' }),
      metrics: createMetrics({ service: 'reconnect-test', collectDefaults: false }),
    });
    await sw.worker.waitUntilReady();
  });

  afterAll(async () => {
    await sw?.close(1_000);
    await events?.close();
    await queue?.close();
    await relay?.cut();
    await prefix?.cleanup();
  });

  it('keeps its process alive while Redis is gone and processes jobs added meanwhile once it is back', async () => {
    const before = await queue.add('test.echo', { tenant: 't', input: { n: 1 } });
    expect(await before.waitUntilFinished(events, 5_000)).toEqual({ n: 1 });

    const port = relay.port;
    await relay.cut();
    const during = await queue.add('test.echo', { tenant: 't', input: { n: 2 } });
    await new Promise((r) => setTimeout(r, 1_000));
    // Nobody can take it while the worker is cut off.
    expect(['waiting', 'prioritized']).toContain(await during.getState());

    await relay.open(port);
    expect(await during.waitUntilFinished(events, 15_000)).toEqual({ n: 2 });
  });
});
