import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { OperationDef, Scope } from '@vouch/contracts';
import { createLogger, parseConfig } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestPrefix, useTestSchema } from '@vouch/testing';
import { createApiKey } from '../src/api-keys.js';
import { gatewayEnvSchema } from '../src/config.js';
import { startGateway, type RunningGateway } from '../src/gateway.js';

const KEYS_CLI = fileURLToPath(new URL('../src/cli/keys.ts', import.meta.url));

/** A gateway on an ephemeral port with its own Postgres schema and BullMQ prefix. */
export interface GatewayUnderTest {
  gateway: RunningGateway;
  url: string;
  schema: string;
  prefix: string;
  env: Record<string, string>;
  /** Runs `npm run keys -- ARGS` against this gateway's schema, as an operator would. */
  keys(...args: string[]): { status: number | null; stdout: string; stderr: string };
  /**
   * Creates a key with the code behind `npm run keys -- create` and returns
   * the clear key. In-process: a tsx process per key made fixtures slow on a
   * loaded machine; tests of the CLI itself call keys().
   */
  createKey(tenant: string, scopes?: string, opts?: { agent?: string }): Promise<string>;
  /**
   * The key of `agent` in `tenant` (default scopes), made on first use and
   * reused after. Actors are keys: a test that plays several agents (a
   * planner, workers, a verifier) holds one key per agent.
   */
  agentKey(tenant: string, agent: string): Promise<string>;
  fetch(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  /** Another gateway replica on the same Redis prefix and Postgres schema, on a port of its own; stopped by stop() too. */
  replica(): Promise<{ url: string; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startGatewayUnderTest(label: string, overrides: Record<string, string> = {}, operations?: readonly OperationDef[]): Promise<GatewayUnderTest> {
  const prefix = await useTestPrefix(label);
  const schema = await useTestSchema(label);
  const env = {
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: prefix.prefix,
    DB_SCHEMA: schema.schema,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    SHUTDOWN_GRACE_MS: '1000',
    ...overrides,
  };
  const gateway = await startGateway(parseConfig(gatewayEnvSchema, env), {
    logger: createLogger({ service: 'gateway', level: 'silent' }),
    ...(operations ? { operations } : {}),
  });
  const url = `http://127.0.0.1:${gateway.port}`;
  const agentKeys = new Map<string, Promise<string>>();
  const replicas: Array<() => Promise<void>> = [];
  const keys = (...args: string[]) => {
    const r = spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', KEYS_CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    gateway,
    url,
    schema: schema.schema,
    prefix: prefix.prefix,
    env,
    keys,
    async createKey(tenant, scopes, opts = {}) {
      const { key } = await createApiKey(gateway.pool, { tenant, ...(scopes ? { scopes: scopes.split(',') as Scope[] } : {}), ...(opts.agent !== undefined ? { agent: opts.agent } : {}) });
      return key;
    },
    agentKey(tenant, agent) {
      const id = `${tenant}\0${agent}`;
      const made = agentKeys.get(id) ?? createApiKey(gateway.pool, { tenant, agent }).then((created) => created.key);
      agentKeys.set(id, made);
      return made;
    },
    fetch(path, init = {}) {
      const { key, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('Authorization', `Bearer ${key}`);
      if (json !== undefined) headers.set('Content-Type', 'application/json');
      return fetch(`${url}${path}`, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}) });
    },
    async replica() {
      const more = await startGateway(parseConfig(gatewayEnvSchema, env), { logger: createLogger({ service: 'gateway', level: 'silent' }), ...(operations ? { operations } : {}) });
      let stopped: Promise<void> | undefined;
      const stop = () => (stopped ??= more.stop());
      replicas.push(stop);
      return { url: `http://127.0.0.1:${more.port}`, stop };
    },
    async stop() {
      for (const stopReplica of replicas) await stopReplica();
      await gateway.stop();
      await prefix.cleanup();
      await schema.cleanup();
    },
  };
}
