import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPool } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, spawnTsProcess, useTestPrefix, useTestSchema, type TsProcess } from '@vouch/testing';
import { createApiKey } from '../src/api-keys.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** The gateway's own process (src/main.ts), so its memory is its own: for tests that measure RSS. */
export interface GatewayProcess {
  child: TsProcess;
  pid: number;
  port: number;
  schema: string;
  /** Creates an API key for `tenant` in the process's schema. */
  createKey(tenant: string): Promise<string>;
  /** VmRSS and VmHWM (peak RSS since start or the last resetPeak) of the process, in bytes. */
  memory(): { rss: number; peak: number };
  /** Starts VmHWM again from the current RSS. */
  resetPeak(): void;
  stop(): Promise<void>;
}

export async function startGatewayProcess(label: string, overrides: Record<string, string> = {}): Promise<GatewayProcess> {
  const prefix = await useTestPrefix(label);
  const schema = await useTestSchema(label);
  const child = spawnTsProcess(MAIN, {
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: prefix.prefix,
    DB_SCHEMA: schema.schema,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_MS: '1000',
    ...overrides,
  });
  const exitedEarly = child.exited.then((code) => {
    throw new Error(`the gateway process exited with ${code} before listening`);
  });
  const listening = eventually('the gateway process to listen', () => child.lines.find((l) => l.includes('"gateway listening"')), 60_000);
  const line = await Promise.race([listening, exitedEarly]);
  const port = (JSON.parse(line) as { port: number }).port;
  const pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, applicationName: 'gateway-process-test', max: 1 });
  const pid = child.proc.pid!;
  const vm = (status: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]) * 1024;
  return {
    child,
    pid,
    port,
    schema: schema.schema,
    async createKey(tenant) {
      return (await createApiKey(pool, { tenant })).key;
    },
    memory() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return { rss: vm(status, 'VmRSS'), peak: vm(status, 'VmHWM') };
    },
    resetPeak() {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    },
    async stop() {
      exitedEarly.catch(() => {});
      if (child.proc.exitCode === null) {
        child.proc.kill('SIGTERM');
        await child.exited;
      }
      await pool.end();
      await prefix.cleanup();
      await schema.cleanup();
    },
  };
}
