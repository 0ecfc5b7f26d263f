/**
 * Error codes and typed errors shared by every process. A handler throws one of
 * these; the worker bootstrap decides retry or not from the class, and the
 * gateway maps the code to an HTTP status and an application/problem+json body.
 */
export const ERROR_CODES = {
  badInput: 'BAD_INPUT',
  unauthenticated: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  conflict: 'CONFLICT',
  idempotencyConflict: 'IDEMPOTENCY_CONFLICT',
  payloadTooLarge: 'PAYLOAD_TOO_LARGE',
  headersTooLarge: 'HEADERS_TOO_LARGE',
  requestTimeout: 'REQUEST_TIMEOUT',
  unsupportedMediaType: 'UNSUPPORTED_MEDIA_TYPE',
  tooManyRequests: 'TOO_MANY_REQUESTS',
  dependencyUnavailable: 'DEPENDENCY_UNAVAILABLE',
  timeout: 'TIMEOUT',
  internal: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export const HTTP_STATUS_BY_CODE: Record<ErrorCode, number> = {
  BAD_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  IDEMPOTENCY_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  DEPENDENCY_UNAVAILABLE: 503,
  TIMEOUT: 504,
  INTERNAL: 500,
};

/**
 * The statuses of the problem answers the API documents for each operation
 * (see problem-responses.ts), an unexpected failure (500) among them.
 */
export const PROBLEM_STATUSES = [400, 401, 403, 404, 408, 409, 413, 415, 429, 431, 500, 503, 504] as const;
export type ProblemStatus = (typeof PROBLEM_STATUSES)[number];

/** One offending field: a dotted path into the input and what is wrong with it. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** The wire form of an error, inside job failures and problem+json bodies. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  fields?: FieldIssue[];
  /** Extra machine-readable facts (current version on a conflict, a job id on a timeout). */
  details?: Record<string, unknown>;
}

/** Base class: an error whose code, message and fields may cross a process boundary. */
export class VouchError extends Error {
  readonly code: ErrorCode;
  readonly fields: FieldIssue[] | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** Whether a job that threw it should be tried again. */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, opts: { fields?: FieldIssue[]; details?: Record<string, unknown>; retryable?: boolean; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.fields = opts.fields;
    this.details = opts.details;
    this.retryable = opts.retryable ?? false;
  }

  get httpStatus(): number {
    return HTTP_STATUS_BY_CODE[this.code];
  }

  toBody(): ErrorBody {
    return {
      code: this.code,
      message: this.message,
      ...(this.fields ? { fields: this.fields } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** The caller sent something invalid. Never retried; a 4xx naming the field. */
export class BadInputError extends VouchError {
  constructor(message: string, fields?: FieldIssue[], details?: Record<string, unknown>) {
    super(ERROR_CODES.badInput, message, { ...(fields ? { fields } : {}), ...(details ? { details } : {}) });
  }
}

/** The thing named does not exist in the caller's tenant (or scope). */
export class NotFoundError extends VouchError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(ERROR_CODES.notFound, message, details ? { details } : {});
  }
}

/**
 * The caller's key may not do this (403): a body naming another agent than the
 * key's, or an agent reviewing its own work. Never retried; `fields` names the
 * offending input where there is one.
 */
export class ForbiddenError extends VouchError {
  constructor(message: string, opts: { fields?: FieldIssue[]; details?: Record<string, unknown> } = {}) {
    super(ERROR_CODES.forbidden, message, opts);
  }
}

/** A write lost a race or contradicts current state; details carry the current version. */
export class ConflictError extends VouchError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(ERROR_CODES.conflict, message, details ? { details } : {});
  }
}

/** A dependency (Redis, Postgres, Ollama) is down or slow. Retried with backoff; 503 at the edge. */
export class DependencyError extends VouchError {
  constructor(message: string, cause?: unknown) {
    super(ERROR_CODES.dependencyUnavailable, message, { retryable: true, cause });
  }
}

/**
 * Converts zod issues into field issues with dotted paths. An unknown key is
 * reported at its own path (zod reports them all at the parent object), so
 * the answer names the field to remove.
 */
export function fieldIssuesFromZod(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string; keys?: readonly string[] }>, prefix = ''): FieldIssue[] {
  const dotted = (path: ReadonlyArray<PropertyKey>) => {
    const joined = path.map(String).join('.');
    return prefix && joined ? `${prefix}.${joined}` : prefix || joined || '(root)';
  };
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' && issue.keys?.length
      ? issue.keys.map((key) => ({ path: dotted([...issue.path, key]), message: 'Unrecognized key: this operation has no such field; remove it' }))
      : [{ path: dotted(issue.path), message: issue.message }],
  );
}

/** One line naming every offending field, for messages and logs. */
export function describeFieldIssues(fields: FieldIssue[]): string {
  return fields.map((f) => `${f.path}: ${f.message}`).join('; ');
}

const JOB_ERROR_MARK = 'vouch-error:';

/**
 * Encodes a typed error as a BullMQ failedReason. BullMQ keeps only a string per
 * failed job; the JSON after the mark lets the gateway answer with the original
 * code and fields, and the dashboard still shows a readable message.
 */
export function encodeJobError(error: ErrorBody): string {
  return `${JOB_ERROR_MARK}${JSON.stringify(error)}`;
}

/**
 * Reasons BullMQ itself writes, which hold nothing internal and tell the
 * caller what happened (the job's worker died mid-job too often).
 */
const BULLMQ_REASONS = new Set(['job stalled more than allowable limit', 'job started more than allowable limit']);

/**
 * Reads a failedReason back. A reason not written by encodeJobError becomes
 * INTERNAL with a generic message: it may hold a driver message or an address,
 * which never reach an answer.
 */
export function decodeJobError(failedReason: string | undefined): ErrorBody {
  if (failedReason?.startsWith(JOB_ERROR_MARK)) {
    try {
      const parsed = JSON.parse(failedReason.slice(JOB_ERROR_MARK.length)) as ErrorBody;
      if (typeof parsed.code === 'string' && parsed.code in HTTP_STATUS_BY_CODE_KEYS) return parsed;
    } catch {
      // fall through: a corrupt mark is reported as an internal failure
    }
  }
  if (!failedReason) return { code: ERROR_CODES.internal, message: 'the job failed without a reason' };
  if (BULLMQ_REASONS.has(failedReason)) return { code: ERROR_CODES.internal, message: failedReason };
  return { code: ERROR_CODES.internal, message: 'the job failed inside its service: the service logs hold the reason under the job id' };
}

const HTTP_STATUS_BY_CODE_KEYS: Record<string, true> = Object.fromEntries(Object.keys(HTTP_STATUS_BY_CODE).map((k) => [k, true]));
