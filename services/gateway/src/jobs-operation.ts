import { NotFoundError, decodeJobError, jobsGet } from '@vouch/contracts';
import type { JobSnapshot, QueueHub } from '@vouch/platform';
import { gatewayHandler, type GatewayHandler } from './gateway-handler.js';
import { parsePublicJobId, publicJobId } from './job-ids.js';

const KNOWN_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed']);

/** A job as callers see it, from one consistent snapshot: state, and result or failure once finished. */
export function describeJob({ job, state }: JobSnapshot, publicId: string) {
  const error = state === 'failed' ? decodeJobError(job.failedReason) : undefined;
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
    let snapshot = await hub.readJob(ref.queue, ref.id);
    if (!snapshot || snapshot.job.data?.tenant !== caller.tenant) throw notFound();
    if (input.wait > 0 && snapshot.state !== 'completed' && snapshot.state !== 'failed') {
      await hub.waitFor(ref.queue, ref.id, input.wait * 1000);
      snapshot = (await hub.readJob(ref.queue, ref.id)) ?? snapshot;
    }
    return describeJob(snapshot, publicJobId(ref.queue, ref.id));
  });
}
