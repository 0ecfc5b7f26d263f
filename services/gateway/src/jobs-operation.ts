import { NotFoundError, decodeJobError, jobsGet, type JobEnvelope } from '@vouch/contracts';
import type { Job } from 'bullmq';
import { gatewayHandler, type GatewayHandler } from './gateway-handler.js';
import { parsePublicJobId, publicJobId, type QueueHub } from './queue-hub.js';

const KNOWN_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed']);

/** A job as callers see it: state, and result or failure once finished. */
export async function describeJob(job: Job<JobEnvelope>, publicId: string) {
  const state = await job.getState();
  const failed = state === 'failed';
  const error = failed ? decodeJobError(job.failedReason) : undefined;
  return {
    jobId: publicId,
    operation: job.name,
    state: (KNOWN_STATES.has(state) ? state : 'unknown') as 'completed',
    statusUrl: `/v1/jobs/${publicId}`,
    attemptsMade: job.attemptsMade,
    createdAt: new Date(job.timestamp).toISOString(),
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    ...(state === 'completed' ? { result: job.returnvalue } : {}),
    ...(error ? { error: { code: error.code, message: error.message, ...(error.fields ? { fields: error.fields } : {}) } } : {}),
  };
}

/** GET /v1/jobs/:jobId — only the caller's tenant's jobs exist for the caller. */
export function jobsGetHandler(hub: QueueHub): GatewayHandler {
  return gatewayHandler(jobsGet, async (input, { caller }) => {
    const ref = parsePublicJobId(input.jobId);
    const notFound = () => new NotFoundError(`no job ${input.jobId} for this tenant: job ids come from 202 answers and results are kept for a day`);
    if (!ref) throw notFound();
    let job = await hub.getJob(ref.queue, ref.id);
    if (!job || job.data?.tenant !== caller.tenant) throw notFound();
    if (input.wait > 0 && !(await job.isCompleted()) && !(await job.isFailed())) {
      await job.waitUntilFinished(await hub.queueEvents(ref.queue), input.wait * 1000).catch(() => {});
      job = (await hub.getJob(ref.queue, ref.id)) ?? job;
    }
    return describeJob(job, publicJobId(ref.queue, ref.id));
  });
}
