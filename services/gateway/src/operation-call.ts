import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  BadInputError,
  ERROR_CODES,
  VouchError,
  decodeJobError,
  describeFieldIssues,
  fieldIssuesFromZod,
  type JobEnvelope,
  type OperationDef,
} from '@vouch/contracts';
import { queueFor, type Logger, type Pool, type QueueHub } from '@vouch/platform';
import type { z } from 'zod';
import { isOperator, type Caller } from './api-keys.js';
import { awaitAttempt, type AttemptOutcome } from './await-attempt.js';
import type { ClaimWaits } from './claim-waits.js';
import type { GatewayHandler } from './gateway-handler.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestHash, suspendIdempotencyKey, type IdempotencyClaim } from './idempotency.js';
import { describeJob } from './jobs-operation.js';
import { imagePixels, type ImageRequest } from './media/image-pixels.js';
import { actualExtraCost, costModelOf, estimateCost } from './operation-costs.js';
import { errorBodyOf, problemFromBody, type Problem } from './problem.js';
import { bullJobId, publicJobId } from './job-ids.js';
import type { Admission, TenantBudgets } from './tenant-budgets.js';

/** Default wait for an rpc operation served by a queue, when the operation names none. */
const DEFAULT_RPC_TIMEOUT_MS = 30_000;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** What running an operation needs from the gateway. */
export interface CallDeps {
  pool: Pool;
  logger: Logger;
  hub: QueueHub;
  gatewayHandlers: Map<string, GatewayHandler>;
  /** Where board.claimCard waits for work, instead of in a board-dispatcher job. */
  claimWaits: ClaimWaits;
  /** Every tenant's rate and concurrency budgets, checked before an operation runs or is queued. */
  budgets: TenantBudgets;
  /** The most pixels an image's cost counts (MEDIA_MAX_PIXELS): no stage decodes more. */
  maxImagePixels: number;
}

/** One call of an operation, from whichever front door it came through (an HTTP route, an MCP tool). */
export interface OperationCall {
  caller: Caller;
  requestId: string;
  /** Where the call came in, for the problem document's `instance`. */
  instance: string;
  /**
   * Reads the input as the caller sent it, before validation. Called only
   * once the caller is authorised, so that a caller without the scope learns
   * nothing about the input's shape; may throw a typed error (415, 400).
   */
  input: () => Record<string, unknown>;
  /** The Idempotency-Key the caller sent, unchecked; honoured for POST operations. */
  idempotencyKey?: string | undefined;
  /** Where the key came from, for a problem naming it (default `header.Idempotency-Key`). */
  idempotencyKeyPath?: string;
  /** Aborts when the caller has gone (the connection closed before the answer): a long-poll stops waiting. */
  signal?: AbortSignal | undefined;
}

/** How a call ended: the answer to send, or the problem. */
export type CallOutcome =
  | {
      ok: true;
      status: number;
      body: unknown;
      /** The stored answer to an earlier request with the same Idempotency-Key. */
      replayed: boolean;
      /** Runs once the answer is recorded and sent: lets the job's result leave Redis. */
      afterDelivery?: (() => void) | undefined;
    }
  | { ok: false; problem: Problem; replayed: boolean };

/** Validates an input against a schema; a failure names every field. */
export function parseInputWith<S extends z.ZodType>(name: string, schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const fields = fieldIssuesFromZod(parsed.error.issues);
    throw new BadInputError(`invalid ${name} request: ${describeFieldIssues(fields)}`, fields);
  }
  return parsed.data;
}

interface Answer {
  status: number;
  body: unknown;
  afterDelivery?: (() => void) | undefined;
  /** The answer another request with the same Idempotency-Key recorded: replayed as it is, not recorded again. */
  recorded?: boolean;
}

/** The run of an operation an Idempotency-Key holds; `reattach`: another request runs it, this one waits for its answer. */
interface KeyedRun {
  key: string;
  attempt: string;
  reattach: boolean;
}

async function execute(
  op: OperationDef,
  input: Record<string, unknown>,
  caller: Caller,
  requestId: string,
  idempotency: KeyedRun | undefined,
  deps: CallDeps,
  signal: AbortSignal | undefined,
  queued: { mayHaveAdded: boolean },
): Promise<Answer> {
  const own = deps.gatewayHandlers.get(op.name);
  if (own) {
    const output = op.output.safeParse(await own.handle(input, { caller, requestId }));
    if (!output.success) throw new Error(`${op.name} broke its output contract: ${describeFieldIssues(fieldIssuesFromZod(output.error.issues, 'output'))}`);
    return { status: 200, body: output.data };
  }

  const queue = queueFor(op, input);
  const id = bullJobId(caller.tenant, op.name, idempotency);
  const jobId = publicJobId(queue, id);
  // Tenant and actor come from the key, never from the body: a service checks any agent the body names against this one.
  // A claim's job looks once (the gateway waits, claim-waits.ts); 0 also keeps an older board-dispatcher from waiting in it.
  const jobInput = deps.claimWaits.handles(op) ? { ...input, waitSeconds: 0 } : input;
  const envelope: JobEnvelope = { tenant: caller.tenant, input: jobInput, requestId, actor: { agent: caller.agent, keyId: caller.keyId } };
  // From here until an outcome is read, a failure may follow an add that reached Redis (its answer lost with the connection).
  queued.mayHaveAdded = !idempotency?.reattach;
  if (op.mode === 'job') {
    await deps.hub.enqueue(op, queue, envelope, id);
    // A fresh id was just added, so it waits; a keyed one may be an earlier request's job, further along.
    const state = idempotency ? ((await deps.hub.readJob(queue, id))?.state ?? 'waiting') : 'waiting';
    return { status: 202, body: { jobId, operation: op.name, state, statusUrl: `/v1/jobs/${jobId}` } };
  }
  const timeoutMs = op.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const first = (ms: number) => deps.hub.run(op, queue, envelope, id, { timeoutMs: ms, mayExist: idempotency !== undefined });
  let outcome: AttemptOutcome;
  if (idempotency?.reattach) {
    // A request that re-attaches never adds the job: the attempt's own request may have delivered and removed it already.
    outcome = await awaitAttempt(deps.hub, deps.pool, { tenant: caller.tenant, key: idempotency.key, attempt: idempotency.attempt, queue, jobId: id }, timeoutMs);
  } else if (deps.claimWaits.handles(op)) {
    // A claim that may wait tries, waits here for work, and tries again under the same job id.
    const claim = { tenant: caller.tenant, agent: caller.agent, waitSeconds: Number(input.waitSeconds ?? 0), timeoutMs, signal };
    outcome = await deps.claimWaits.claim(claim, { first, again: (ms) => deps.hub.rerun(op, queue, envelope, id, ms) });
  } else outcome = await first(timeoutMs);
  queued.mayHaveAdded = false;
  if (outcome.kind === 'recorded') return { status: outcome.status, body: outcome.body, recorded: true };
  if (outcome.kind === 'completed') {
    return { status: 200, body: outcome.value, afterDelivery: op.ephemeral ? undefined : () => deps.hub.forget(queue, id) };
  }
  if (outcome.kind === 'failed') throw errorFromBody(decodeJobError(outcome.failedReason));
  const fresh = await deps.hub.readJob(queue, id).catch(() => undefined);
  if (!fresh && idempotency?.reattach) {
    // The attempt's job is not in Redis (its request died before adding it): no job URL to poll.
    throw new VouchError(ERROR_CODES.timeout, `the earlier request with Idempotency-Key ${idempotency.key} did not finish within ${timeoutMs} ms: retry with the same key for its answer`);
  }
  throw new VouchError(ERROR_CODES.timeout, `${op.name} did not finish within ${timeoutMs} ms; it is still queued or running: poll /v1/jobs/${jobId}`, {
    details: { jobId, statusUrl: `/v1/jobs/${jobId}`, ...(fresh ? { job: describeJob(fresh, jobId) } : {}) },
  });
}

/** The stored answer to an earlier request with the same Idempotency-Key, sent as it was. */
function replay(status: number, body: unknown): CallOutcome {
  if (status >= 400) return { ok: false, problem: body as Problem, replayed: true };
  return { ok: true, status, body, replayed: true };
}

/** Estimates the call's cost (operation-costs.ts), looking up what its model needs, and admits it against the tenant's budgets or throws the 429. */
async function admit(op: OperationDef, input: Record<string, unknown>, caller: Caller, deps: CallDeps): Promise<Admission> {
  const model = costModelOf(op);
  const facts = model.needsImage ? { imagePixels: await imagePixels(deps.pool, caller.tenant, input as ImageRequest, deps.maxImagePixels) } : {};
  return deps.budgets.admit(caller, op.name, estimateCost(op, input, facts));
}

function errorFromBody(body: ReturnType<typeof decodeJobError>): VouchError {
  return new VouchError(body.code, body.message, { ...(body.fields ? { fields: body.fields } : {}), ...(body.details ? { details: body.details } : {}) });
}

/**
 * Runs one operation for a caller, the same way whichever door it came
 * through: authorise the scope (an operator key reaches no tenant
 * operation), validate the input, honour an Idempotency-Key, run it in the
 * gateway or through its queue in the caller's tenant, and end in an answer
 * or a problem naming what to do next. The HTTP routes and the MCP tools
 * both call this, so tenancy, scopes, validation and errors cannot drift
 * apart between them.
 */
export async function callOperation(op: OperationDef, call: OperationCall, deps: CallDeps): Promise<CallOutcome> {
  const { caller, requestId } = call;
  const problemOf = (err: unknown): CallOutcome => ({ ok: false, problem: problemFromBody(errorBodyOf(err), { instance: call.instance, requestId }), replayed: false });
  if (isOperator(caller)) {
    return problemOf(new VouchError(ERROR_CODES.forbidden, `an operator key opens the queue dashboard only; ${op.name} runs in a tenant: use that tenant's key`));
  }
  if (!caller.scopes.includes(op.scope) && !caller.scopes.includes('admin')) {
    return problemOf(new VouchError(ERROR_CODES.forbidden, `this API key lacks the ${op.scope} scope needed for ${op.name}: create a key with --scopes ${op.scope}`));
  }
  // A turn of the loop between reading the body and validating it: for an 8 MB body each is tens of milliseconds, and
  // every other tenant's request waits for the stretch it falls in (docs/architecture.md, "One tenant's backlog").
  await nextTurn();
  let input: Record<string, unknown>;
  try {
    input = parseInputWith(op.name, op.input, call.input()) as Record<string, unknown>;
  } catch (err) {
    return problemOf(err);
  }

  const key = call.idempotencyKey;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    const path = call.idempotencyKeyPath ?? 'header.Idempotency-Key';
    return problemOf(new BadInputError(`${path} must be 1-200 printable ASCII characters`, [{ path, message: 'invalid: send 1-200 printable ASCII characters, new for each new request' }]));
  }
  const useKey = key !== undefined && op.http.method === 'POST';
  let run: KeyedRun | undefined;
  if (useKey) {
    let claim: IdempotencyClaim;
    try {
      claim = await claimIdempotencyKey(deps.pool, caller.tenant, key, op.name, requestHash(op.name, input, caller.agent));
    } catch (err) {
      return problemOf(err);
    }
    if (claim.kind === 'mismatch') {
      return problemOf(new VouchError(ERROR_CODES.idempotencyConflict, `Idempotency-Key ${key} was already used with a different request (${claim.operation}): use a new key for a new request`));
    }
    if (claim.kind === 'replay') return replay(claim.status, claim.body);
    if (claim.kind === 'pending' && deps.gatewayHandlers.has(op.name)) {
      return problemOf(new VouchError(ERROR_CODES.idempotencyConflict, `a request with Idempotency-Key ${key} is still in progress: retry when it has finished`));
    }
    // A pending queue operation re-attaches to the same attempt: its job id is derived from the key and attempt.
    run = { key, attempt: claim.attempt, reattach: claim.kind === 'pending' };
  }

  let answer: Answer;
  let admission: Admission | undefined;
  const queued = { mayHaveAdded: false };
  try {
    // Checked after the Idempotency-Key, so a replayed answer is never charged or refused. A request that re-attaches
    // to an attempt in flight waits for that attempt's answer, charged once, to the request that started it.
    if (!run?.reattach) admission = await admit(op, input, caller, deps);
    answer = await execute(op, input, caller, requestId, run, deps, call.signal, queued);
    if (admission && !answer.recorded) await admission.charge(actualExtraCost(op, answer.body));
  } catch (err) {
    const outcome = problemOf(err) as { ok: false; problem: Problem; replayed: false };
    const { problem } = outcome;
    // The answer hides internals; the log keeps them, under the request id the answer names.
    if (problem.status >= 500) deps.logger.error({ err, op: op.name, requestId }, `${op.name} failed: ${problem.code}`);
    if (run) {
      // 4xx answers are final and replayed, but a 429 (too many waiting now, a budget spent) is a moment's refusal and frees
      // the key, as a 5xx does: a retry runs again. A 504 keeps the attempt: the job is still queued or
      // running, and a retry re-attaches to it; but an ephemeral job is removed when its wait
      // times out, leaving nothing to re-attach to. Other 5xx answers free the key: a retry runs again.
      const keepsAttempt = problem.code === ERROR_CODES.timeout && !op.ephemeral;
      // A Redis outage after the job may have been added (a primary lost mid-command, a failover): the job may be queued,
      // running or done, so the retry must take over this attempt and its job id, not start a second run.
      const suspendsAttempt = queued.mayHaveAdded && problem.code === ERROR_CODES.dependencyUnavailable && !op.ephemeral;
      if (problem.status < 500 && problem.status !== 429) await completeIdempotencyKey(deps.pool, caller.tenant, run.key, run.attempt, problem.status, problem).catch(() => {});
      else if (suspendsAttempt) await suspendIdempotencyKey(deps.pool, caller.tenant, run.key, run.attempt).catch(() => {});
      else if (!keepsAttempt) await releaseIdempotencyKey(deps.pool, caller.tenant, run.key, run.attempt).catch(() => {});
    }
    return outcome;
  } finally {
    // Every outcome frees the tenant's slot: an answer, a problem, a timeout, a caller that has gone.
    await admission?.release();
  }
  if (answer.recorded) return replay(answer.status, answer.body);
  // Recorded before afterDelivery removes the job: a request waiting on this attempt finds the job's result or this record.
  if (run) await completeIdempotencyKey(deps.pool, caller.tenant, run.key, run.attempt, answer.status, answer.body);
  return { ok: true, status: answer.status, body: answer.body, replayed: false, afterDelivery: answer.afterDelivery };
}
