/**
 * The system as deployed processes: the gateway (src/main.ts) and each queue
 * service's src/main.ts in a Node process of its own, on one BullMQ prefix,
 * each with its own Postgres schema (the vision-router also reads the
 * gateway's media tables). Unlike full-stack.ts, which runs everything in
 * the test's process, each service's resident memory here is its own, so a
 * test can watch one service's RSS through a flood.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Scope } from '@vouch/contracts';
import { createPool, type Pool } from '@vouch/platform';
import { INSPECT_ARGS, TEST_DATABASE_URL, TEST_REDIS_URL, TsProcesses, collectGarbage, eventually, useTestPrefix, useTestSchema, type TestPrefix, type TestSchema, type TsProcess } from '@vouch/testing';
import { MALLOC_ENV } from '../../vision-router/src/config.js';
import { createApiKey } from '../src/api-keys.js';
import type { KeyBudgets } from '../src/key-budgets.js';

/** The queue services a stack may run, by the folder of their src/main.ts. */
export type QueueServiceName = 'board-dispatcher' | 'extractor' | 'ledger-critic' | 'vision-router';
export type StackProcessName = 'gateway' | QueueServiceName;

const mainOf = (service: StackProcessName) => fileURLToPath(new URL(`../../${service}/src/main.ts`, import.meta.url));

/**
 * Each service's settings from docker-compose.yml (jobs at once, OCR
 * workers), so a flood meets the slots a deployment has; the
 * vision-router's allocator setting is the one it is deployed with.
 */
export const DEPLOYED_VARS: Record<QueueServiceName, Record<string, string>> = {
  'board-dispatcher': { WORKER_CONCURRENCY: '64' },
  extractor: { WORKER_CONCURRENCY: '2' },
  'ledger-critic': { WORKER_CONCURRENCY: '4' },
  'vision-router': { WORKER_CONCURRENCY: '2', OCR_WORKERS: '2', ...MALLOC_ENV },
};

export interface ProcessStackOptions {
  services: readonly QueueServiceName[];
  /** Variables over the defaults, per process. */
  vars?: Partial<Record<StackProcessName, Record<string, string>>>;
  /** Arguments to node itself, per process (e.g. --cpu-prof to see where a flood's time goes). */
  nodeArgs?: Partial<Record<StackProcessName, readonly string[]>>;
  /** Opens each process's inspector on loopback, so that collectGarbage can reach it. */
  inspect?: boolean;
}

export interface ProcessStack {
  /** The gateway's base URL. */
  url: string;
  prefix: string;
  gatewaySchema: string;
  /** The Postgres schema of one part of the stack (its DB_SCHEMA). */
  schema(name: StackProcessName): string;
  /** A key of `tenant`, acting as `agent` when given, with its own budgets when given (npm run keys -- create … --rate --concurrency). */
  createKey(tenant: string, opts?: { agent?: string; scopes?: Scope[]; budgets?: Partial<KeyBudgets> }): Promise<string>;
  /** The process of one part of the stack. */
  process(name: StackProcessName): TsProcess;
  /** A process's resident memory now (VmRSS), in bytes. */
  rss(name: StackProcessName): number;
  /** A process's peak resident memory since it started or since resetPeak (VmHWM), in bytes. */
  peakRss(name: StackProcessName): number;
  /** Starts a process's peak again from its current RSS. */
  resetPeak(name: StackProcessName): void;
  /** Runs a full garbage collection in a process now (the stack must have been started with `inspect`). */
  collectGarbage(name: StackProcessName): Promise<void>;
  stop(): Promise<void>;
}

const statusField = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status: resident memory is read from Linux's /proc`);
  return Number(match[1]) * 1024;
};

/** Starts the gateway, then the named services together; resolves when every one takes work. */
export async function startProcessStack(label: string, opts: ProcessStackOptions): Promise<ProcessStack> {
  const children = new TsProcesses();
  const byName = new Map<StackProcessName, TsProcess>();
  const schemaOf = new Map<StackProcessName, string>();
  const prefix = await useTestPrefix(label);
  const schemas: TestSchema[] = [];
  const owned: TestPrefix[] = [prefix];
  let pool: Pool | undefined;
  const nodeArgsOf = (name: StackProcessName) => [...(opts.inspect ? INSPECT_ARGS : []), ...(opts.nodeArgs?.[name] ?? [])];
  // info: the start lines this waits for are logged at info.
  const base = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000' };

  const stop = async () => {
    // SIGTERM first, so each process stops as deployed; SIGKILL what has not gone within the grace.
    const alive = [...byName.values()].filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
    for (const c of alive) c.proc.kill('SIGTERM');
    await Promise.race([Promise.all(alive.map((c) => c.exited)), new Promise((r) => setTimeout(r, 10_000))]);
    await children.killAll();
    await pool?.end();
    for (const p of owned) await p.cleanup();
    for (const s of schemas) await s.cleanup();
  };

  /** Resolves with the first line of `child` holding `marker`; rejects if the process exits first. */
  const started = async (name: StackProcessName, child: TsProcess, marker: string): Promise<string> => {
    let exited = false;
    void child.exited.then(() => (exited = true));
    return eventually(`${name} to start`, () => {
      if (exited) throw new Error(`${name} exited before it started: ${child.stderr().slice(-2000)} ${child.lines.slice(-5).join(' | ')}`);
      return child.lines.find((l) => l.includes(marker));
    }, 120_000, 50);
  };

  try {
    const gatewaySchema = await useTestSchema(`${label}_gw`);
    schemas.push(gatewaySchema);
    schemaOf.set('gateway', gatewaySchema.schema);
    const gateway = children.spawn(mainOf('gateway'), { ...base, DB_SCHEMA: gatewaySchema.schema, PORT: '0', HOST: '127.0.0.1', ...opts.vars?.gateway }, nodeArgsOf('gateway'));
    byName.set('gateway', gateway);
    const port = (JSON.parse(await started('gateway', gateway, '"gateway listening"')) as { port: number }).port;
    pool = createPool({ url: TEST_DATABASE_URL, schema: gatewaySchema.schema, applicationName: 'process-stack', max: 2 });

    await Promise.all(
      opts.services.map(async (service) => {
        const schema = await useTestSchema(`${label}_${service.replace('-', '_')}`);
        schemas.push(schema);
        schemaOf.set(service, schema.schema);
        const vars = { ...base, DB_SCHEMA: schema.schema, HTTP_PORT: '0', ...(service === 'vision-router' ? { GATEWAY_DB_SCHEMA: gatewaySchema.schema } : {}), ...DEPLOYED_VARS[service], ...opts.vars?.[service] };
        const child = children.spawn(mainOf(service), vars, nodeArgsOf(service));
        byName.set(service, child);
        await started(service, child, '"msg":"started"');
      }),
    );

    const processOf = (name: StackProcessName) => {
      const child = byName.get(name);
      if (!child) throw new Error(`${name} is not part of this stack: name it in services`);
      return child;
    };
    const db = pool;
    return {
      url: `http://127.0.0.1:${port}`,
      prefix: prefix.prefix,
      gatewaySchema: gatewaySchema.schema,
      schema(name) {
        const schema = schemaOf.get(name);
        if (!schema) throw new Error(`${name} is not part of this stack: name it in services`);
        return schema;
      },
      async createKey(tenant, keyOpts = {}) {
        return (await createApiKey(db, { tenant, ...keyOpts })).key;
      },
      process: processOf,
      rss: (name) => statusField(processOf(name).proc.pid!, 'VmRSS'),
      peakRss: (name) => statusField(processOf(name).proc.pid!, 'VmHWM'),
      resetPeak: (name) => writeFileSync(`/proc/${processOf(name).proc.pid!}/clear_refs`, '5'),
      collectGarbage: async (name) => {
        if (!opts.inspect) throw new Error('collectGarbage needs the stack started with inspect: true');
        await collectGarbage(processOf(name));
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
