import { Ollama } from 'ollama';
import { classifyOllamaFailure, type OllamaFailure } from './classify-ollama-failure.js';

/**
 * One bounded piece of work against Ollama: an `ollama` client whose every
 * request ends by one deadline, and the reading of what those requests threw.
 * The deadline starts when the call is made and spans every request of the
 * client (a capability check and the answer after it share it).
 */
export interface OllamaCall {
  readonly client: Ollama;
  /** Aborts every request of `client` still in flight (headers or body) `timeoutMs` after the call was made. */
  readonly deadline: AbortSignal;
  /**
   * What a request of this call threw, in the kinds a caller can act on
   * (classifyOllamaFailure): a timeout once the deadline fired, whatever
   * undici threw for it. Put it in public words with describeOllamaFailure;
   * the error itself goes to the log only.
   */
  failure(err: unknown): OllamaFailure;
}

/**
 * Starts a call to the Ollama at `host` (the base URL with scheme and port,
 * docs/ollama.md) that ends by `timeoutMs`.
 */
export function ollamaCall(host: string, timeoutMs: number): OllamaCall {
  const deadline = AbortSignal.timeout(timeoutMs);
  // ollama-js has no timeout option, so the deadline rides on the fetch it is given. The signal ollama-js passes
  // itself (a streamed request's abort()) is kept alongside it: either one ends the request.
  const client = new Ollama({
    host,
    fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline }),
  });
  return { client, deadline, failure: (err) => classifyOllamaFailure(err, { timedOut: deadline.aborted }) };
}
