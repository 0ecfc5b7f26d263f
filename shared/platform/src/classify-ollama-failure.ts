/**
 * Why a call to Ollama gave no usable answer, in the few kinds a caller can
 * act on. The words that reach an answer are built from the kind alone (and
 * an HTTP status); the error itself (the host and port, undici's message,
 * Ollama's error text, a stack) goes to the service's log only: no answer
 * holds a driver message or an address (README, "Errors").
 *
 * - `unreachable`: no answer came back: connection refused, an unknown host,
 *   a connection reset or closed mid-answer.
 * - `timeout`: the caller's deadline passed (or undici's own header or body
 *   timeout).
 * - `http_error`: Ollama (or a proxy in front of it) answered a non-2xx status.
 * - `model_missing`: Ollama's 404 `model '<name>' not found`: the model is
 *   not pulled on that server.
 * - `malformed`: an answer came back but is not Ollama's JSON, or lacks the
 *   message the caller reads.
 */
export type OllamaFailure =
  | { kind: 'unreachable' }
  | { kind: 'timeout' }
  | { kind: 'http_error'; status: number | undefined }
  | { kind: 'model_missing' }
  | { kind: 'malformed' };

export type OllamaFailureKind = OllamaFailure['kind'];

const UNDICI_TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

// Ollama's two texts for a model it does not have (docs/ollama.md): `model 'x' not found`
// from the handlers, `model "x" not found, try pulling it first` from the scheduler. gin's
// `404 page not found` (a wrong path, or something other than Ollama) is an http_error.
const MODEL_NOT_FOUND = /^model ['"].*['"] not found/;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  cause?: unknown;
  status_code?: unknown;
  error?: unknown;
}

function chain(err: unknown, limit = 8): ErrorLike[] {
  const out: ErrorLike[] = [];
  let e: unknown = err;
  while (e && typeof e === 'object' && out.length < limit && !out.includes(e as ErrorLike)) {
    out.push(e as ErrorLike);
    e = (e as ErrorLike).cause;
  }
  return out;
}

/**
 * Classifies what an `ollama` client call threw. `timedOut` is whether the
 * caller's own deadline fired (its AbortSignal is aborted): undici then
 * throws an AbortError that says nothing of the deadline. Pure: reads only
 * the error.
 */
export function classifyOllamaFailure(err: unknown, opts: { timedOut: boolean }): OllamaFailure {
  if (opts.timedOut) return { kind: 'timeout' };
  const links = chain(err);
  // ollama-js's ResponseError is not exported: it is known by its name, and carries the status and Ollama's {"error"} text.
  const response = links.find((e) => e.name === 'ResponseError');
  if (response) {
    const status = typeof response.status_code === 'number' ? response.status_code : undefined;
    const text = typeof response.error === 'string' ? response.error : '';
    return status === 404 && MODEL_NOT_FOUND.test(text) ? { kind: 'model_missing' } : { kind: 'http_error', status };
  }
  if (links.some((e) => e.name === 'TimeoutError' || (typeof e.code === 'string' && UNDICI_TIMEOUT_CODES.has(e.code)))) return { kind: 'timeout' };
  // A 2xx body that is not JSON fails in the client's response.json().
  if (links.some((e) => e.name === 'SyntaxError')) return { kind: 'malformed' };
  return { kind: 'unreachable' };
}

/** What the public words of a failure may name: the stage's model and the variables that configure it, never the host. */
export interface OllamaStage {
  /** The stage's model in a few words, e.g. `critic model`. */
  role: string;
  /** The model name as configured (a name, not an address). */
  model: string;
  timeoutMs: number;
  /** The variables an operator changes: e.g. LEDGER_CRITIC_TIMEOUT_MS and LEDGER_CRITIC_MODEL. */
  timeoutVariable: string;
  modelVariable: string;
}

/**
 * The failure in public words: what happened and what to change, e.g. `the
 * critic model could not be reached (check that Ollama runs at OLLAMA_HOST)`.
 * Built from the kind and the stage alone, so it cannot carry the host, a
 * driver message or the model server's error text.
 */
export function describeOllamaFailure(failure: OllamaFailure, stage: OllamaStage): string {
  const { role } = stage;
  switch (failure.kind) {
    case 'unreachable':
      return `the ${role} could not be reached (check that Ollama runs at OLLAMA_HOST)`;
    case 'timeout':
      return `the ${role} did not answer within ${stage.timeoutMs} ms (${stage.timeoutVariable})`;
    case 'http_error':
      return `the ${role} answered with an error (HTTP ${failure.status ?? 'status unknown'})`;
    case 'model_missing':
      return `the ${role} ${stage.model} is not installed on the Ollama server (pull it there, or name an installed model in ${stage.modelVariable})`;
    case 'malformed':
      return `the ${role}'s answer could not be read (it is not Ollama's JSON)`;
  }
}
