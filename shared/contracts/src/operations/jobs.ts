import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { ErrorCodeSchema, IsoTimeSchema, MAX_WAIT_SECONDS } from './common.js';

/** A job's public id: `<queue>.<id>`, as job handles return it. */
export const JobIdSchema = text().regex(/^[a-z][a-z-]{0,40}\.[A-Za-z0-9_-]{1,80}$/, 'a job id looks like ledger-critic.j0f3…: use the jobId a 202 response returned');

export const JobStateSchema = z.enum(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed', 'unknown']);

/** What a 202 answer holds: where to find the result. */
export const JobHandleSchema = z.object({
  jobId: JobIdSchema,
  operation: text(),
  state: JobStateSchema,
  statusUrl: text(),
});
export type JobHandle = z.infer<typeof JobHandleSchema>;

export const jobsGet = defineOperation({
  name: 'jobs.get',
  summary: 'Read a job\'s state and result',
  description:
    'Returns the state of a job started by a job operation (which answered 202 with a jobId), and its result or failure reason once finished. ' +
    `Pass wait (seconds, up to ${MAX_WAIT_SECONDS}) to wait for the job to finish before answering.`,
  owner: { process: 'gateway' },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/jobs/:jobId' },
  scope: 'jobs:read',
  input: z
    .object({
      jobId: JobIdSchema,
      wait: z.coerce.number().min(0).max(MAX_WAIT_SECONDS).default(0),
    })
    .strict(),
  output: JobHandleSchema.extend({
    attemptsMade: z.number().int(),
    createdAt: IsoTimeSchema,
    finishedAt: IsoTimeSchema.nullable(),
    result: z.unknown().optional(),
    error: z.object({ code: ErrorCodeSchema, message: text(), fields: z.array(z.object({ path: text(), message: text() })).optional() }).optional(),
  }),
  agentFacing: true,
  example: { jobId: 'ledger-critic.j0f3a9c2d4e5b6a7980112233445566778', wait: 5 },
});
