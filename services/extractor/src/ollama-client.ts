import { Ollama } from 'ollama';

/**
 * An ollama-js client whose every call ends by `timeoutMs`: ollama-js has no
 * timeout of its own, so the deadline rides on the fetch it is given.
 * `deadline.aborted` afterwards tells a timeout from another failure.
 */
export function ollamaWithDeadline(host: string, timeoutMs: number): { client: Ollama; deadline: AbortSignal } {
  const deadline = AbortSignal.timeout(timeoutMs);
  const client = new Ollama({ host, fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline }) });
  return { client, deadline };
}

/** How long Ollama keeps the model loaded after a call unless EXTRACTOR_KEEP_ALIVE says otherwise. */
export const DEFAULT_KEEP_ALIVE = '30m';

/**
 * keep_alive as Ollama takes it: a number is seconds, a string a Go duration
 * ("30m", "1h30m"); a negative value keeps the model loaded until the server
 * stops. Ollama refuses a number written as a string ("-1"), so those travel
 * as numbers.
 */
export function keepAliveValue(raw: string): string | number {
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}
