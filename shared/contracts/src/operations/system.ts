import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { SERVICE_QUEUES } from '../queues.js';
import { IsoTimeSchema } from './common.js';

export const ServiceNameSchema = z.enum(SERVICE_QUEUES as [string, ...string[]]);

/** What a service answers to system.ping on its own queue. */
export const PingResultSchema = z.object({
  service: text(),
  version: text(),
  uptimeSeconds: z.number().nonnegative(),
  concurrency: z.number().int().positive(),
  pid: z.number().int(),
  hostname: text(),
  at: IsoTimeSchema,
});
export type PingResult = z.infer<typeof PingResultSchema>;

export const systemPing = defineOperation({
  name: 'system.ping',
  summary: 'Round-trip a ping through one service queue',
  description: 'Sends a ping job to the named service and waits for its answer: name, version, uptime and worker concurrency. Use it to check that a service is consuming its queue.',
  owner: { queueFromInput: 'service' },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/system/ping' },
  scope: 'system:read',
  input: z.object({ service: ServiceNameSchema }).strict(),
  output: PingResultSchema,
  agentFacing: false,
  example: { service: 'ledger-critic' },
  timeoutMs: 5_000,
  ephemeral: true,
  retry: { attempts: 1, backoffMs: 0 },
});

export const QueueCountsSchema = z.object({
  waiting: z.number().int(),
  active: z.number().int(),
  delayed: z.number().int(),
  failed: z.number().int(),
  completed: z.number().int(),
  prioritized: z.number().int(),
  'waiting-children': z.number().int(),
});

export const ServiceStatusSchema = z.object({
  service: text(),
  up: z.boolean(),
  /** Workers consuming the queue: those whose heartbeat is fresh (a few seconds). */
  workers: z.number().int(),
  ping: PingResultSchema.nullable(),
  /** Why the ping did not answer, when it did not. */
  reason: text().optional(),
  queue: QueueCountsSchema,
});

export const systemStatus = defineOperation({
  name: 'system.status',
  summary: 'Which services are up, and their queue depths',
  description: 'Pings every service queue with a short timeout and reads each queue\'s job counts by state.',
  owner: { process: 'gateway' },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/system/status' },
  scope: 'system:read',
  input: z.object({}).strict(),
  output: z.object({
    gateway: z.object({ version: text(), uptimeSeconds: z.number() }),
    redis: z.object({ up: z.boolean() }),
    postgres: z.object({ up: z.boolean() }),
    services: z.array(ServiceStatusSchema),
  }),
  agentFacing: false,
  example: {},
});
