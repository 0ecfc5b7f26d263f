import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { startOpsServer, type OpsServer, type Phase } from '../src/ops-server.js';

describe('ops server', () => {
  let server: OpsServer;
  let postgresUp = true;
  let phase: Phase = { phase: 'running' };
  const metrics = createMetrics({ service: 'ops-test' });
  metrics.watchQueues([{ name: 'q1', getJobCounts: async () => ({ waiting: 3, active: 1 }) }]);

  beforeAll(async () => {
    server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry: metrics.registry,
      logger: createLogger({ service: 'ops-test', level: 'silent' }),
      checks: [
        { name: 'redis', probe: async () => true },
        { name: 'postgres', probe: async () => postgresUp },
      ],
      phase: () => phase,
    });
  });
  afterAll(() => server?.close());

  const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);

  it('is live while the process runs', async () => {
    expect((await get('/livez')).status).toBe(200);
  });

  it('is ready only when every check passes, and says which failed', async () => {
    expect(await (await get('/readyz')).json()).toEqual({ status: 'ready', checks: { redis: true, postgres: true } });
    postgresUp = false;
    const res = await get('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not ready', checks: { redis: true, postgres: false } });
    postgresUp = true;
  });

  it('is live but not ready while starting (saying what it waits for) and while stopping, whatever the checks', async () => {
    for (const [p, body] of [
      [{ phase: 'starting', waitingFor: 'redis' }, { status: 'starting', waitingFor: 'redis' }],
      [{ phase: 'stopping' }, { status: 'stopping' }],
    ] as const) {
      phase = p;
      const res = await get('/readyz');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual(body);
      expect((await get('/livez')).status).toBe(200);
    }
    phase = { phase: 'running' };
    expect((await get('/readyz')).status).toBe(200);
  });

  it('serves process metrics and queue depth read at scrape time', async () => {
    const text = await (await get('/metrics')).text();
    expect(text).toContain('vouch_process_cpu_seconds_total');
    expect(text).toContain('vouch_queue_jobs{queue="q1",state="waiting",service="ops-test"} 3');
    expect(text).toContain('vouch_queue_jobs{queue="q1",state="active",service="ops-test"} 1');
    expect(text).toContain('vouch_queue_jobs{queue="q1",state="delayed",service="ops-test"} 0');
  });
});
