import type { Request, Response } from 'express';
import { BadInputError, ERROR_CODES, VouchError, describeFieldIssues, type OperationDef } from '@vouch/contracts';
import type { Caller } from './api-keys.js';
import { callOperation, type CallDeps } from './operation-call.js';
import { sendProblem } from './problem.js';
import { badKeyIssues, parseQueryStrict } from './request-text.js';

export type RouteDeps = CallDeps;

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

/**
 * The express handler for one operation: validate, authorise the scope, honour
 * Idempotency-Key, run (in the gateway or through the operation's queue), and
 * answer with the result, a job handle, or a problem naming what to fix.
 */
export function operationRoute(op: OperationDef, deps: RouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    // The connection closing before the answer is sent means the caller has gone: a long-poll stops waiting for it.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableEnded) gone.abort();
    });
    const outcome = await callOperation(
      op,
      {
        caller: res.locals.caller as Caller,
        requestId: res.locals.requestId as string,
        instance: req.originalUrl,
        input: () => rawInput(op, req),
        idempotencyKey: req.get('Idempotency-Key'),
        signal: gone.signal,
      },
      deps,
    );
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
    if (!outcome.ok) return sendProblem(res, outcome.problem);
    res.status(outcome.status).json(outcome.body);
    outcome.afterDelivery?.();
  };
}
