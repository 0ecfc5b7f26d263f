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
