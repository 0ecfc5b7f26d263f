import { PROBLEM_STATUSES, type ProblemStatus } from './errors.js';
import type { OperationDef } from './operation.js';
import { pathParams } from './table.js';

/** One problem answer an operation can give: its status and when. */
export interface ProblemResponse {
  status: ProblemStatus;
  description: string;
}

/**
 * The problem answers an operation can give, in status order, derived from
 * what the operation is, so that a new entry of the table is documented
 * correctly without more work:
 *
 * - every operation: 400 (its input is validated), 401 and 403 (a bearer key
 *   with the operation's scope), 408 and 431 (refused by the HTTP parser
 *   before any operation runs), 429 (the tenant's rate or concurrency budget,
 *   checked before any operation runs), 500 (an unexpected fault, told only in
 *   the logs), 503 (the key is checked against Postgres; queue operations need Redis);
 * - a JSON body (POST): 409 (Idempotency-Key reuse), 413, 415;
 * - a path parameter: 404 (nothing of that id in the key's tenant);
 * - an rpc served by a queue: 504 (still running after its timeout);
 *
 * plus whatever the operation declares in `errors`, added to the derived
 * description when the status is already there.
 */
export function problemResponses(op: OperationDef): ProblemResponse[] {
  const byStatus = new Map<ProblemStatus, string>();
  const isBody = op.http.method === 'POST';
  const queued = !('process' in op.owner);
  const params = pathParams(op.http.path);

  byStatus.set(400, isBody ? 'The body is not a JSON object, or a field is invalid: `fields` names each offending field and what to send instead.' : 'A parameter is invalid or unknown: `fields` names each offending one and what to send instead.');
  byStatus.set(401, 'No API key, or an unknown or revoked one: send `Authorization: Bearer <key>`.');
  byStatus.set(403, `The API key lacks the \`${op.scope}\` scope (or \`admin\`), or is an operator key, which opens only the queue dashboard.`);
  if (params.length) byStatus.set(404, `Nothing with this ${params.map((p) => `\`${p}\``).join(' and ')} in the API key's tenant.`);
  if (isBody) {
    byStatus.set(409, 'The Idempotency-Key was used before with a different request, or its first request is still running.');
    byStatus.set(413, 'The request body is larger than the gateway accepts.');
    byStatus.set(415, 'The body is not UTF-8 JSON: send `Content-Type: application/json`.');
  }
  byStatus.set(408, 'The request did not arrive within the gateway\'s time limit: send the whole request at once and retry.');
  byStatus.set(
    429,
    'The API key\'s tenant has spent its rate budget (cost units per window) or holds its concurrency budget of operations in flight: `detail` and `details.limit` name which, ' +
      'and `Retry-After` says when it frees (the rate window\'s end). An Idempotency-Key stays free for the retry.',
  );
  byStatus.set(431, 'The request headers are larger than the gateway accepts: send fewer or smaller headers.');
  byStatus.set(
    500,
    `An unexpected fault: the answer says only that, with a \`requestId\` that finds the details in the gateway's logs.${isBody ? ' A 5xx leaves an Idempotency-Key free: a retry with it runs the operation again.' : ''}`,
  );
  byStatus.set(503, queued ? 'Redis or Postgres is unavailable, so the operation could not be queued or its key checked: retry after `Retry-After` seconds.' : 'Postgres or Redis is unavailable: retry after `Retry-After` seconds.');
  if (queued && op.mode === 'rpc') {
    const within = op.timeoutMs === undefined ? 'the gateway\'s wait' : `${op.timeoutMs} ms`;
    byStatus.set(504, `The operation did not finish within ${within}; it is still queued or running: poll \`details.statusUrl\`.`);
  }
  for (const [status, description] of Object.entries(op.errors ?? {}) as Array<[string, string]>) {
    const code = Number(status) as ProblemStatus;
    const derived = byStatus.get(code);
    byStatus.set(code, derived ? `${description} Or: ${derived}` : description);
  }
  return PROBLEM_STATUSES.filter((s) => byStatus.has(s)).map((status) => ({ status, description: byStatus.get(status)! }));
}
