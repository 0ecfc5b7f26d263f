import { SERVICE_QUEUES, SYSTEM_TENANT, systemPing, systemStatus, PingResultSchema, type PingResult, type QueueName } from '@vouch/contracts';
import { QUEUE_STATES, pingPostgres, pingRedis, type Pool, type QueueHub, type QueueState } from '@vouch/platform';
import type { Redis } from 'ioredis';
import { gatewayHandler, type GatewayHandler } from './gateway-handler.js';
import { bullJobId } from './job-ids.js';

/** A service that does not answer a ping within this is reported down. */
const PING_TIMEOUT_MS = 2_000;

async function pingService(hub: QueueHub, queue: QueueName): Promise<{ ping: PingResult | null; reason?: string }> {
  const outcome = await hub.run(systemPing, queue, { tenant: SYSTEM_TENANT, input: { service: queue } }, bullJobId(SYSTEM_TENANT, systemPing.name, undefined), {
    timeoutMs: PING_TIMEOUT_MS,
    mayExist: false,
  });
  if (outcome.kind === 'timeout') return { ping: null, reason: `no answer to a ping within ${PING_TIMEOUT_MS} ms: the service is connected but busy or stuck` };
  if (outcome.kind === 'failed') return { ping: null, reason: 'the service failed the ping: see its logs' };
  const parsed = PingResultSchema.safeParse(outcome.value);
  return parsed.success ? { ping: parsed.data } : { ping: null, reason: 'the service answered with an unexpected ping result' };
}

/**
 * GET /v1/system/status: for every service queue, the workers whose heartbeat is fresh, a
 * ping through the queue (only when a worker is connected, so pings never pile
 * up in the queue of a service that is not deployed) and the job counts.
 */
export function systemStatusHandler(deps: { hub: QueueHub; pool: Pool; producer: Redis; version: string; startedAt: number }): GatewayHandler {
  return gatewayHandler(systemStatus, async () => {
    const [redisUp, postgresUp] = await Promise.all([pingRedis(deps.producer), pingPostgres(deps.pool)]);
    const services = await Promise.all(
      SERVICE_QUEUES.map(async (name) => {
        const queue = deps.hub.queue(name);
        if (!redisUp) {
          return { service: name, up: false, workers: 0, ping: null, reason: 'Redis is unreachable', queue: emptyCounts() };
        }
        const [workers, counts] = await Promise.all([deps.hub.workerCount(name), queue.getJobCounts(...COUNT_STATES)]);
        const { ping, reason } = workers > 0 ? await pingService(deps.hub, name).catch(() => ({ ping: null, reason: 'the ping could not be sent: Redis is unreachable' })) : { ping: null, reason: 'no worker is connected to the queue' };
        return {
          service: name,
          up: ping !== null,
          workers,
          ping,
          ...(reason ? { reason } : {}),
          queue: Object.fromEntries(COUNT_STATES.map((s) => [s, counts[s] ?? 0])) as ReturnType<typeof emptyCounts>,
        };
      }),
    );
    return {
      gateway: { version: deps.version, uptimeSeconds: (Date.now() - deps.startedAt) / 1000 },
      redis: { up: redisUp },
      postgres: { up: postgresUp },
      services,
    };
  });
}

/** The states the depth gauge reads, so the status page and /metrics count the same things. */
const COUNT_STATES = QUEUE_STATES;

function emptyCounts(): Record<QueueState, number> {
  return Object.fromEntries(COUNT_STATES.map((s) => [s, 0])) as Record<QueueState, number>;
}
