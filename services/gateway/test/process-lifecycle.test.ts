import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, parseConfig } from '@vouch/platform';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  closedPort,
  makePng,
  TsProcesses,
  startSilentServer,
  testPostgresUrlAt,
  useTestPrefix,
  useTestSchema,
  type SilentServer,
  type TestPrefix,
  type TestSchema,
  type TsProcess,
} from '@vouch/testing';
import { gatewayEnvSchema } from '../src/config.js';
import { startGateway } from '../src/gateway.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const KEYS_CLI = fileURLToPath(new URL('../src/cli/keys.ts', import.meta.url));

describe('the gateway process at start and stop', () => {
  let prefix: TestPrefix;
  let schema: TestSchema;
  let silent: SilentServer;
  let env: Record<string, string>;
  const children = new TsProcesses();

  beforeAll(async () => {
    prefix = await useTestPrefix('gw_lifecycle');
    schema = await useTestSchema('gw_lifecycle');
    silent = await startSilentServer();
    env = {
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_URL: TEST_DATABASE_URL,
      BULLMQ_PREFIX: prefix.prefix,
      DB_SCHEMA: schema.schema,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PG_CONNECT_TIMEOUT_MS: '1000',
      SHUTDOWN_GRACE_MS: '5000',
    };
  });
  afterEach(async () => {
    await children.killAll();
  });
  afterAll(async () => {
    await silent?.close();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawnGateway = (vars: Record<string, string> = {}) => {
    return children.spawn(MAIN, { ...env, ...vars });
  };

  /** The one line a refused start prints: no stack, no password. */
  const expectOneClearLine = (child: TsProcess, mentions: string[]) => {
    const lines = child.stderr().trim().split('\n');
    expect(lines, child.stderr()).toHaveLength(1);
    const line = lines[0]!;
    for (const m of mentions) expect(line).toContain(m);
    expect(line).not.toContain('s3cret-pw');
    expect(child.stderr()).not.toMatch(/^\s+at /m);
    return line;
  };

  it('refuses to start against a closed Postgres port: one line naming DATABASE_URL, exit 78', async () => {
    const port = await closedPort();
    const child = spawnGateway({ DATABASE_URL: testPostgresUrlAt(port) });
    expect(await child.exited).toBe(78);
    const line = expectOneClearLine(child, ['gateway: cannot start:', `DATABASE_URL=postgres://vouch:***@127.0.0.1:${port}/`, 'refused']);
    expect(line).toMatch(/check that Postgres is running/);
  });

  it('refuses to start against a Postgres port that accepts and never answers, after PG_CONNECT_TIMEOUT_MS', async () => {
    const child = spawnGateway({ DATABASE_URL: testPostgresUrlAt(silent.port) });
    expect(await child.exited).toBe(78);
    expectOneClearLine(child, ['gateway: cannot start:', `DATABASE_URL=postgres://vouch:***@127.0.0.1:${silent.port}/`, 'did not answer within 1000 ms', 'PG_CONNECT_TIMEOUT_MS']);
    expect(silent.accepted).toBeGreaterThan(0);
  });

  it('starts with Redis down, and says it is not ready until Redis answers', async () => {
    const child = spawnGateway({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const port = await listeningPort(child);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { redis: false, postgres: true } });
    child.proc.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });

  it('on SIGTERM, drains keep-alive connections so that no applied write loses its answer', async () => {
    const child = spawnGateway();
    const port = await listeningPort(child);
    const key = createKey(env);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const image = (await makePng({ width: 2, height: 2, color: 'red' })).toString('base64');
    const outcomes = new Map<string, { chatKey: string; outcome: number | string }>();
    // One keep-alive socket, one write after another, through the SIGTERM and until the gateway is gone.
    let n = 0;
    let signalled = false;
    for (;;) {
      n += 1;
      const messageId = `m${n}`;
      const chatKey = `drain-${Math.floor(n / 50)}`; // media.recent lists up to 100 per chat
      const outcome = await post(agent, port, key, { surface: 'api', chatKey, messageId, imageBase64: image });
      outcomes.set(messageId, { chatKey, outcome });
      if (!signalled && outcome === 200) {
        signalled = true;
        child.proc.kill('SIGTERM');
      }
      if (typeof outcome === 'string' || n > 5_000) break;
    }
    expect(await child.exited).toBe(0);
    agent.destroy();
    const stored = await registeredMessages(env, key, new Set([...outcomes.values()].map((o) => o.chatKey)));
    const answered = [...outcomes].filter(([, o]) => o.outcome === 200).map(([id]) => id);
    // Every write that was applied was answered; the first unanswered one was never applied.
    expect(stored.sort()).toEqual(answered.sort());
    expect(answered.length).toBeGreaterThan(0);
  });
});

/** The port from the gateway's `gateway listening` log line. */
async function listeningPort(child: TsProcess): Promise<number> {
  const line = await child.waitFor('{', 30_000).then(async () => {
    for (;;) {
      const found = child.lines.find((l) => l.includes('"gateway listening"'));
      if (found) return found;
      if (child.proc.exitCode !== null) throw new Error(`the gateway exited: ${child.stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  return (JSON.parse(line) as { port: number }).port;
}

function createKey(env: Record<string, string>): string {
  const r = spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', KEYS_CLI, 'create', '--tenant', 'acme', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`keys create failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { key: string }).key;
}

/** POSTs media.register on the agent's socket: the status, or the connection error's code. */
function post(agent: Agent, port: number, key: string, body: unknown): Promise<number | string> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = request(
      { agent, host: '127.0.0.1', port, method: 'POST', path: '/v1/media', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': data.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(data);
  });
}

/** The message ids registered in these chats, read through a fresh gateway on the same schema. */
async function registeredMessages(env: Record<string, string>, key: string, chatKeys: Set<string>): Promise<string[]> {
  const gateway = await startGateway(parseConfig(gatewayEnvSchema, { ...env, LOG_LEVEL: 'silent' }), { logger: createLogger({ service: 'gateway', level: 'silent' }) });
  try {
    const ids: string[] = [];
    for (const chatKey of chatKeys) {
      const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/media/recent?surface=api&chatKey=${chatKey}&limit=100`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { items: Array<{ messageId: string }> };
      ids.push(...body.items.map((i) => i.messageId));
    }
    return ids;
  } finally {
    await gateway.stop();
  }
}
