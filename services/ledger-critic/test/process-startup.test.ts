import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '@vouch/contracts';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  closedPort,
  eventually,
  TsProcesses,
  startSilentServer,
  startTcpProxy,
  testPostgresUrlAt,
  useTestPrefix,
  useTestSchema,
  type SilentServer,
  type TestPrefix,
  type TestSchema,
} from '@vouch/testing';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

// The ledger-critic stands for every queue service: the behaviour lives in the platform's startQueueService and startOrExit.
describe('the ledger-critic process at start', () => {
  let prefix: TestPrefix;
  let schema: TestSchema;
  let silent: SilentServer;
  let env: Record<string, string>;
  const children = new TsProcesses();

  beforeAll(async () => {
    prefix = await useTestPrefix('ledger_startup');
    schema = await useTestSchema('ledger_startup');
    silent = await startSilentServer();
    env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, HTTP_PORT: '0', LOG_LEVEL: 'info', PG_CONNECT_TIMEOUT_MS: '1000' };
  });
  afterEach(async () => {
    await children.killAll();
  });
  afterAll(async () => {
    await silent?.close();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawnService = (vars: Record<string, string>) => {
    return children.spawn(MAIN, { ...env, ...vars });
  };

  for (const [what, port, mentions] of [
    ['a closed Postgres port', () => closedPort(), ['refused the connection', 'check that Postgres is running']],
    ['a Postgres port that accepts and never answers', async () => silent.port, ['did not answer within 1000 ms (PG_CONNECT_TIMEOUT_MS)']],
  ] as const) {
    it(`refuses to start against ${what}: one line naming DATABASE_URL, exit 78`, async () => {
      const p = await port();
      const child = spawnService({ DATABASE_URL: testPostgresUrlAt(p) });
      expect(await child.exited).toBe(78);
      const lines = child.stderr().trim().split('\n');
      expect(lines, child.stderr()).toHaveLength(1);
      expect(lines[0]).toContain(`ledger-critic: cannot start: Postgres at DATABASE_URL=postgres://vouch:***@127.0.0.1:${p}/`);
      for (const m of mentions) expect(lines[0]).toContain(m);
      expect(child.stderr()).not.toContain('s3cret-pw');
    });
  }

  it('waits for a Redis that is down, live and saying so, and starts taking jobs when it comes up', async () => {
    const redis = new URL(TEST_REDIS_URL);
    const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    await proxy.cut();
    const queue = new Queue(QUEUES.ledgerCritic, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    const events = new QueueEvents(QUEUES.ledgerCritic, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    try {
      const child = spawnService({ REDIS_URL: proxy.through(TEST_REDIS_URL) });
      const waiting = await eventually('a waiting-for-Redis line', () => child.lines.find((l) => l.includes('waiting for Redis at REDIS_URL')), 30_000);
      expect(JSON.parse(waiting)).toMatchObject({ level: 'warn', redis: `redis://127.0.0.1:${proxy.port}` });
      expect(child.proc.exitCode).toBeNull();
      // Alive (a liveness probe must not restart it) and not ready, saying why.
      const serving = child.lines.find((l) => l.includes('serving /livez, /readyz and /metrics'));
      const opsPort = (JSON.parse(serving!) as { port: number }).port;
      expect((await fetch(`http://127.0.0.1:${opsPort}/livez`)).status).toBe(200);
      const readyz = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toEqual({ status: 'starting', waitingFor: 'redis' });
      await proxy.restore();
      await eventually('the started line', () => child.lines.find((l) => l.includes('"msg":"started"')), 30_000);
      expect((await fetch(`http://127.0.0.1:${opsPort}/readyz`)).status).toBe(200);
      await events.waitUntilReady();
      const ping = await queue.add('system.ping', {});
      expect(await ping.waitUntilFinished(events, 20_000)).toMatchObject({ service: 'ledger-critic' });
      child.proc.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      // The outage went through the logger only: nothing printed past it.
      expect(child.stderr()).toBe('');
      expect(child.lines.filter((l) => !l.startsWith('{'))).toEqual([]);
    } finally {
      await events.close();
      await queue.close();
      await proxy.close();
    }
  });
});
