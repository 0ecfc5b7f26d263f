/**
 * The HTTP floor for bench:ping: a bare node:http server that does what the
 * gateway does for system.ping with nothing else — parse the JSON body, add
 * the ping job, wait for it with QueueEvents listening before the add, answer
 * JSON. No auth, validation, routing framework, metrics or logging: the
 * cheapest an HTTP front of BullMQ can be on this machine.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Queue, QueueEvents } from 'bullmq';
import { QUEUES, SYSTEM_JOBS } from '@vouch/contracts';
import { QUEUE_STREAMS, consumerRedisOptions, createProducerRedis } from '@vouch/platform';

const prefix = process.env.BULLMQ_PREFIX ?? 'vouch';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const port = Number(process.env.PORT ?? 18_182);

const queue = new Queue(QUEUES.extractor, { connection: createProducerRedis(redisUrl), prefix, streams: QUEUE_STREAMS });
const events = new QueueEvents(QUEUES.extractor, { connection: consumerRedisOptions(redisUrl), prefix });
await events.waitUntilReady();
const waiting = new Map<string, (value: unknown) => void>();
events.on('completed', ({ jobId, returnvalue }) => {
  waiting.get(jobId)?.(returnvalue);
  waiting.delete(jobId);
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { service: string };
    const jobId = randomUUID();
    const done = new Promise((resolve) => waiting.set(jobId, resolve));
    queue
      .add(SYSTEM_JOBS.ping, { tenant: 'system', input }, { jobId, removeOnComplete: true, removeOnFail: true })
      .then(() => done)
      .then((value) => {
        const body = JSON.stringify(value);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log('ready'));
