import type { Request, Response } from 'express';
import {
  BadInputError,
  ERROR_CODES,
  VouchError,
  decodeJobError,
  describeFieldIssues,
  fieldIssuesFromZod,
  type OperationDef,
} from '@vouch/contracts';
import type { Logger, Pool } from '@vouch/platform';
import { isOperator, type Caller } from './api-keys.js';
import type { GatewayHandler } from './gateway-handler.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestHash, type IdempotencyClaim } from './idempotency.js';
import { describeJob } from './jobs-operation.js';
import { errorBodyOf, problemFromBody, sendProblem } from './problem.js';
import { badKeyIssues, parseQueryStrict } from './request-text.js';
import { bullJobId, publicJobId, queueFor, type QueueHub } from './queue-hub.js';

/** Default wait for an rpc operation served by a queue, when the operation names none. */
const DEFAULT_RPC_TIMEOUT_MS = 30_000;

export interface RouteDeps {
  pool: Pool;
  logger: Logger;
  hub: QueueHub;
  gatewayHandlers: Map<string, GatewayHandler>;
}

/** An answer: status and JSON body (a problem is sent as problem+json). */
interface Answer {
  status: number;
  body: unknown;
  /** Runs once the answer is recorded for replay and sent: lets the job's result leave Redis. */
  afterDelivery?: (() => void) | undefined;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** Gathers the operation's input from the path, and the query (GET/DELETE) or the JSON body. */
function rawInput(op: OperationDef, req: Request): Record<string, unknown> {
  const fromBody = op.http.method === 'POST';
  if (fromBody) {
    if (!req.is('application/json')) {
      throw new VouchError(ERROR_CODES.unsupportedMediaType, `${op.http.method} ${op.http.path} takes a JSON body: send Content-Type: application/json`);
    }
    if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
      throw new BadInputError('the JSON body must be an object holding the operation\'s fields', [{ path: '(root)', message: 'expected an object' }]);
    }
    const badKeys = badKeyIssues(req.body);
    if (badKeys.length) throw new BadInputError(`invalid ${op.name} request: ${describeFieldIssues(badKeys)}`, badKeys);
  }
  return { ...(fromBody ? (req.body as Record<string, unknown>) : queryOf(req)), ...req.params };
}

/** The query, decoded strictly: a value that is not UTF-8 is refused naming it, never turned into U+FFFD. */
function queryOf(req: Request): Record<string, unknown> {
  const at = req.originalUrl.indexOf('?');
  return { ...parseQueryStrict(at === -1 ? '' : req.originalUrl.slice(at + 1)) };
}

/** Validates the input against the operation's schema; a failure names every field. */
function parseInput(op: OperationDef, raw: Record<string, unknown>): Record<string, unknown> {
  const parsed = op.input.safeParse(raw);
  if (!parsed.success) {
    const fields = fieldIssuesFromZod(parsed.error.issues);
    throw new BadInputError(`invalid ${op.name} request: ${describeFieldIssues(fields)}`, fields);
  }
  return parsed.data as Record<string, unknown>;
}

async function execute(
  op: OperationDef,
  input: Record<string, unknown>,
  caller: Caller,
  requestId: string,
  idempotency: { key: string; attempt: string } | undefined,
  deps: RouteDeps,
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
  const envelope = { tenant: caller.tenant, input, requestId };
  if (op.mode === 'job') {
    await deps.hub.enqueue(op, queue, envelope, id);
    // A fresh id was just added, so it waits; a keyed one may be an earlier request's job, further along.
    const state = idempotency ? ((await deps.hub.readJob(queue, id))?.state ?? 'waiting') : 'waiting';
    return { status: 202, body: { jobId, operation: op.name, state, statusUrl: `/v1/jobs/${jobId}` } };
  }
  const timeoutMs = op.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const outcome = await deps.hub.run(op, queue, envelope, id, { timeoutMs, mayExist: idempotency !== undefined });
  if (outcome.kind === 'completed') {
    return { status: 200, body: outcome.value, afterDelivery: op.ephemeral ? undefined : () => deps.hub.forget(queue, id) };
  }
  if (outcome.kind === 'failed') throw errorFromBody(decodeJobError(outcome.failedReason));
  const fresh = await deps.hub.readJob(queue, id).catch(() => undefined);
  throw new VouchError(ERROR_CODES.timeout, `${op.name} did not finish within ${timeoutMs} ms; it is still queued or running: poll /v1/jobs/${jobId}`, {
    details: { jobId, statusUrl: `/v1/jobs/${jobId}`, ...(fresh ? { job: describeJob(fresh, jobId) } : {}) },
  });
}

function errorFromBody(body: ReturnType<typeof decodeJobError>): VouchError {
  return new VouchError(body.code, body.message, { ...(body.fields ? { fields: body.fields } : {}), ...(body.details ? { details: body.details } : {}) });
}

/**
 * The express handler for one operation: validate, authorise the scope, honour
 * Idempotency-Key, run (in the gateway or through the operation's queue), and
 * answer with the result, a job handle, or a problem naming what to fix.
 */
export function operationRoute(op: OperationDef, deps: RouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const caller = res.locals.caller as Caller;
    const requestId = res.locals.requestId as string;
    const answerProblem = (err: unknown) => sendProblem(res, problemFromBody(errorBodyOf(err), { instance: req.originalUrl, requestId }));
    if (isOperator(caller)) {
      return answerProblem(new VouchError(ERROR_CODES.forbidden, `an operator key opens the queue dashboard only; ${op.name} runs in a tenant: use that tenant's key`));
    }
    if (!caller.scopes.includes(op.scope) && !caller.scopes.includes('admin')) {
      return answerProblem(new VouchError(ERROR_CODES.forbidden, `this API key lacks the ${op.scope} scope needed for ${op.name}: create a key with --scopes ${op.scope}`));
    }
    let input: Record<string, unknown>;
    try {
      input = parseInput(op, rawInput(op, req));
    } catch (err) {
      return answerProblem(err);
    }

    const key = req.get('Idempotency-Key');
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
      return answerProblem(new BadInputError('Idempotency-Key must be 1-200 printable ASCII characters', [{ path: 'header.Idempotency-Key', message: 'invalid' }]));
    }
    const useKey = key !== undefined && op.http.method === 'POST';
    let attempt: string | undefined;
    if (useKey) {
      let claim: IdempotencyClaim;
      try {
        claim = await claimIdempotencyKey(deps.pool, caller.tenant, key, op.name, requestHash(op.name, input));
      } catch (err) {
        return answerProblem(err);
      }
      if (claim.kind === 'mismatch') {
        return answerProblem(new VouchError(ERROR_CODES.idempotencyConflict, `Idempotency-Key ${key} was already used with a different request (${claim.operation}): use a new key for a new request`));
      }
      if (claim.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        if (claim.status >= 400) return void res.status(claim.status).type('application/problem+json').send(JSON.stringify(claim.body));
        return void res.status(claim.status).json(claim.body);
      }
      if (claim.kind === 'pending' && deps.gatewayHandlers.has(op.name)) {
        return answerProblem(new VouchError(ERROR_CODES.idempotencyConflict, `a request with Idempotency-Key ${key} is still in progress: retry when it has finished`));
      }
      // A pending queue operation re-attaches to the same job: its id is derived from the key and attempt.
      attempt = claim.attempt;
    }

    let answer: Answer;
    try {
      answer = await execute(op, input, caller, requestId, useKey && attempt ? { key, attempt } : undefined, deps);
    } catch (err) {
      const problem = problemFromBody(errorBodyOf(err), { instance: req.originalUrl, requestId });
      // The answer hides internals; the log keeps them, under the request id the answer names.
      if (problem.status >= 500) deps.logger.error({ err, op: op.name, requestId }, `${op.name} failed: ${problem.code}`);
      if (useKey) {
        // 4xx answers are final and replayed. A 504 keeps the attempt: the job is still queued or
        // running, and a retry re-attaches to it. Other 5xx answers free the key: a retry runs again.
        if (problem.status < 500) await completeIdempotencyKey(deps.pool, caller.tenant, key, problem.status, problem).catch(() => {});
        else if (problem.code !== ERROR_CODES.timeout) await releaseIdempotencyKey(deps.pool, caller.tenant, key).catch(() => {});
      }
      return sendProblem(res, problem);
    }
    if (useKey) await completeIdempotencyKey(deps.pool, caller.tenant, key, answer.status, answer.body);
    res.status(answer.status).json(answer.body);
    answer.afterDelivery?.();
  };
}
