import { fileURLToPath } from 'node:url';
import { Queue, type Job } from 'bullmq';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, spawnTsProcess, useTestPrefix, useTestSchema, type TsProcess } from '@vouch/testing';

const SERVICE = fileURLToPath(new URL('./fixtures/effect-service.ts', import.meta.url));
const QUEUE = 'test-effects';

async function waitForState(queue: Queue, id: string, states: string[], timeoutMs = 20_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await queue.getJob(id);
    // Read the job again once it is in a final state: the copy read before may predate its result.
    if (job && states.includes(await job.getState())) return (await queue.getJob(id))!;
    if (Date.now() > deadline) throw new Error(`job ${id} not in ${states.join('/')} within ${timeoutMs} ms (now ${job ? await job.getState() : 'missing'})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('worker bootstrap in a real process', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let queue: Queue;
  let db: pg.Pool;
  const children: TsProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    prefix = await useTestPrefix('crash');
    schema = await useTestSchema('crash');
    queue = new Queue(QUEUE, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    db = new pg.Pool({ connectionString: TEST_DATABASE_URL });
    env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, TEST_QUEUE: QUEUE, SHUTDOWN_GRACE_MS: '10000' };
  });

  // A test that fails half-way must not leave its worker taking the next test's jobs.
  afterEach(async () => {
    const alive = children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
    for (const c of alive) c.proc.kill('SIGKILL');
    await Promise.all(alive.map((c) => c.exited));
  });

  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    await queue?.close();
    await db?.end();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawnService = (jobMs: number) => {
    const child = spawnTsProcess(SERVICE, { ...env, LOG_LEVEL: 'warn', JOB_MS: String(jobMs) });
    children.push(child);
    return child;
  };

  it('a job whose worker is SIGKILLed mid-job is completed by another worker, with its effect applied once', async () => {
    const a = spawnService(30_000);
    await a.waitFor('ready');
    const job = await queue.add('test.effect', { tenant: 't1', input: { label: 'crash' } }, { jobId: 'crash-1', attempts: 3 });
    await a.waitFor(`committed ${job.id}`);
    a.proc.kill('SIGKILL');
    expect(await a.exited).toBeNull();

    const b = spawnService(0);
    await b.waitFor('ready');
    const done = await waitForState(queue, job.id!, ['completed', 'failed']);
    expect(await done.getState()).toBe('completed');
    // The second run found the processed-job record and returned the first run's result.
    expect(done.returnvalue).toEqual({ label: 'crash', committedBy: a.proc.pid });
    const effects = await db.query(`SELECT job_id, worker_pid FROM "${schema.schema}".effects WHERE job_id = $1`, [job.id]);
    expect(effects.rows).toEqual([{ job_id: 'crash-1', worker_pid: a.proc.pid }]);
    expect(b.lines.some((l) => l === `started ${job.id}`)).toBe(true);
    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('SIGTERM lets the running job finish, not ready meanwhile, then the process exits 0', async () => {
    const c = spawnService(5_000);
    const opsPort = Number(/ ops (\d+)$/.exec(await c.waitFor('ready'))![1]);
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    expect(await readyz()).toMatchObject({ status: 200, body: { status: 'ready' } });
    const job = await queue.add('test.effect', { tenant: 't1', input: { label: 'graceful' } }, { jobId: 'graceful-1' });
    await c.waitFor(`started ${job.id}`);
    c.proc.kill('SIGTERM');
    // While the job finishes, the process is alive and says it is stopping, so nothing new is routed to it.
    await eventually('a stopping /readyz', async () => {
      const r = await readyz();
      return r.status === 503 && JSON.stringify(r.body) === '{"status":"stopping"}' ? r : undefined;
    }, 4_000);
    expect((await fetch(`http://127.0.0.1:${opsPort}/livez`)).status).toBe(200);
    expect(c.proc.exitCode).toBeNull();
    expect(await c.exited).toBe(0);
    const done = await queue.getJob(job.id!);
    expect(await done!.getState()).toBe('completed');
    expect(done!.returnvalue).toEqual({ label: 'graceful', committedBy: c.proc.pid });
  });
});
