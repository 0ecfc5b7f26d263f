/**
 * What kind of failure an error is, so the worker bootstrap and the gateway
 * treat every service's errors alike without each one knowing driver codes:
 *
 * - `outage`: a dependency (Postgres, Redis, a network peer) is down, refusing
 *   connections, restarting or out of resources. Retryable; 503 at the edge.
 * - `contention`: a serialization failure or deadlock; the same work succeeds
 *   when run again. Retryable; 503 when the retries run out.
 * - `permanent`: the same input fails the same way every time: a Postgres
 *   data, integrity or syntax error (the server understood and refused), or a
 *   programming error in our code. Never retried; 500 with a generic message.
 * - `unknown`: anything else.
 */
export type FailureKind = 'outage' | 'contention' | 'permanent' | 'unknown';


/** Node socket and DNS errors: the peer is unreachable or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ECONNABORTED', 'EHOSTDOWN']);

/** undici (fetch) connection failures, for services that call HTTP dependencies (Ollama). */
const UNDICI_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * SQLSTATEs (and classes) after which the same statement can succeed later:
 * 08 connection exception, 53 insufficient resources (53300 too many
 * connections), 57P01-57P04 shutdown and restarts, 57014 statement timeout,
 * 58 system error, 25006 read-only transaction (a failover in progress), 28
 * and 3D000 (authentication, missing database: the store is unusable until an
 * operator fixes it, not the caller's input). Every other SQLSTATE means the
 * server understood the statement and refused it, which it will do again.
 */
const PG_OUTAGE_CLASSES = ['08', '53', '58', '28'];
const PG_OUTAGE_CODES = new Set(['57P01', '57P02', '57P03', '57P04', '57P05', '57014', '25006', '3D000', '55P03']);
/** 40001 serialization failure, 40P01 deadlock, 40003 statement completion unknown: run the work again. */
const PG_CONTENTION_CODES = new Set(['40001', '40P01', '40003']);

/** Messages node-postgres and ioredis use for a connection they lost or never got. */
const PG_CONNECTION_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Query read timeout|timeout expired/i;
const REDIS_CONNECTION_MESSAGES = /Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries per request limit|^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY)\b|^OOM command not allowed/;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  severity?: unknown;
  errno?: unknown;
  cause?: unknown;
  errors?: unknown;
  command?: unknown;
}

/** The error, its causes and (for AggregateError) its parts, at most `limit` of them. */
function chain(err: unknown, limit = 8): ErrorLike[] {
  const out: ErrorLike[] = [];
  const queue: unknown[] = [err];
  while (queue.length && out.length < limit) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || out.includes(e as ErrorLike)) continue;
    const like = e as ErrorLike;
    out.push(like);
    if (like.cause !== undefined) queue.push(like.cause);
    if (Array.isArray(like.errors)) queue.push(...like.errors);
  }
  return out;
}

/** A Postgres server error: node-postgres puts the SQLSTATE in `code` and always sets `severity`. */
function sqlState(e: ErrorLike): string | undefined {
  return typeof e.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
}

const PROGRAMMING_ERRORS = new Set(['TypeError', 'ReferenceError', 'RangeError', 'SyntaxError', 'URIError', 'EvalError']);

/** Classifies an error thrown by a handler or a store. Pure: reads only the error. */
export function classifyFailure(err: unknown): FailureKind {
  const links = chain(err);
  // Outages first: fetch wraps a refused connection in a TypeError ("fetch failed").
  for (const e of links) {
    const state = sqlState(e);
    if (state) {
      if (PG_CONTENTION_CODES.has(state)) return 'contention';
      if (PG_OUTAGE_CODES.has(state) || PG_OUTAGE_CLASSES.includes(state.slice(0, 2))) return 'outage';
      return 'permanent';
    }
  }
  for (const e of links) {
    const message = typeof e.message === 'string' ? e.message : '';
    const code = typeof e.code === 'string' ? e.code : '';
    if (PG_CONNECTION_MESSAGES.test(message)) return 'outage';
    if (e.name === 'MaxRetriesPerRequestError' || REDIS_CONNECTION_MESSAGES.test(message)) return 'outage';
    if (NETWORK_CODES.has(code) || UNDICI_CODES.has(code) || e.name === 'TimeoutError') return 'outage';
  }
  if (links.some((e) => typeof e.name === 'string' && PROGRAMMING_ERRORS.has(e.name))) return 'permanent';
  return 'unknown';
}

/** Whether a failure is worth running again (an outage or contention). */
export function isRetryableFailure(kind: FailureKind): boolean {
  return kind === 'outage' || kind === 'contention';
}
