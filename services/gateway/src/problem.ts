import type { Response } from 'express';
import { ERROR_CODES, HTTP_STATUS_BY_CODE, VouchError, type ErrorBody, type ErrorCode } from '@vouch/contracts';
import { classifyFailure, isRetryableFailure } from '@vouch/platform';

const TITLES: Record<ErrorCode, string> = {
  BAD_INPUT: 'Invalid request',
  UNAUTHENTICATED: 'Authentication required',
  FORBIDDEN: 'Not allowed',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  IDEMPOTENCY_CONFLICT: 'Idempotency key reused',
  PAYLOAD_TOO_LARGE: 'Payload too large',
  HEADERS_TOO_LARGE: 'Headers too large',
  REQUEST_TIMEOUT: 'Request timed out',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  TOO_MANY_REQUESTS: 'Too many requests',
  DEPENDENCY_UNAVAILABLE: 'Service unavailable',
  TIMEOUT: 'Timed out',
  INTERNAL: 'Internal error',
};

/** Seconds a 503 or 429 asks the caller to wait: an outage's reconnect, or a long-poll of the tenant's ending. */
export const RETRY_AFTER_SECONDS = 5;

/** An RFC 9457 problem document with vouch's code, fields and details. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  fields?: ErrorBody['fields'];
  details?: Record<string, unknown>;
  instance?: string;
  requestId?: string;
}

export function problemFromBody(body: ErrorBody, extra: { instance?: string; requestId?: string } = {}): Problem {
  return {
    type: `urn:vouch:problem:${body.code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[body.code] ?? 'Error',
    status: HTTP_STATUS_BY_CODE[body.code] ?? 500,
    code: body.code,
    detail: body.message,
    ...(body.fields ? { fields: body.fields } : {}),
    ...(body.details ? { details: body.details } : {}),
    ...extra,
  };
}

/**
 * The error body for anything thrown while serving a request. Only typed
 * errors keep their message (it was written for the caller); an outage or
 * contention in Redis or Postgres is a 503 to retry, the rest a generic 500.
 * Neither names an address, a key or the driver's words: the log has those,
 * under the request id the answer carries.
 */
export function errorBodyOf(err: unknown): ErrorBody {
  if (err instanceof VouchError) return err.toBody();
  if (isRetryableFailure(classifyFailure(err))) return { code: ERROR_CODES.dependencyUnavailable, message: 'a backing store (Redis or Postgres) is unavailable: retry in a few seconds' };
  return { code: ERROR_CODES.internal, message: 'internal error: the request id in this answer finds it in the logs' };
}

/**
 * Seconds a problem asks the caller to wait: the time it names in
 * `details.retryAfterSeconds` where it knows one (a rate budget's window
 * ends then), RETRY_AFTER_SECONDS otherwise.
 */
export function retryAfterSeconds(problem: Pick<Problem, 'details'>): number {
  const named = problem.details?.retryAfterSeconds;
  return typeof named === 'number' && Number.isSafeInteger(named) && named > 0 ? named : RETRY_AFTER_SECONDS;
}

export function sendProblem(res: Response, problem: Problem): void {
  if (problem.status === 503 || problem.status === 429) res.setHeader('Retry-After', String(retryAfterSeconds(problem)));
  if (problem.status === 401 && !res.hasHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer realm="vouch"');
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}
