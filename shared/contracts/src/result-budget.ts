import { ERROR_CODES, VouchError } from './errors.js';

/**
 * The bytes, as JSON, that a paged read fills one answer with. The worker
 * refuses a job result over 1 MiB (`RESULT_MAX_BYTES` in @vouch/platform: a
 * result sits in Redis twice on its way to the caller) as a bug, so a read
 * whose page can grow past it (ledger.get's evidence, board.show's cards)
 * stops its page at this many bytes and says where the next one starts.
 *
 * 896 KiB leaves 128 KiB under the cap: a page always takes its first item,
 * whatever its size, so that paging moves on, and the largest item (a ledger
 * observation: 5,200 characters, each at most six bytes as JSON, about 32 KB)
 * must still fit beside a full page; what the output schema adds on the way
 * out (defaults) fits in the rest.
 */
export const RESULT_PAGE_BYTES = 896 * 1024;

/** UTF-8 bytes of a string, without encoding it. */
function utf8Bytes(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    // A surrogate pair is one four-byte character; a lone surrogate (never in valid text) is written as U+FFFD, three bytes.
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of a value's JSON, as the worker measures a job result. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}

/**
 * How many of `items`, from the first, fit in `room` bytes as elements of a
 * JSON array whose brackets are already counted (each after the first adds a
 * comma). Never fewer than `atLeast` (when there are that many): a page that
 * must move on takes its first item even when it does not fit.
 */
export function countWithinBytes(items: readonly unknown[], room: number, atLeast = 0): number {
  let used = 0;
  let count = 0;
  for (const item of items) {
    const bytes = jsonBytes(item) + (count > 0 ? 1 : 0);
    if (used + bytes > room && count >= atLeast) break;
    used += bytes;
    count++;
  }
  return count;
}

/**
 * A text of lines cut to fit `maxBytes` as a JSON string: the lines from the
 * first while they fit, then a last line `tail(leftOut)` names what was left
 * out. The text comes back whole (truncated: false) when it fits.
 */
export function linesWithinBytes(text: string, maxBytes: number, tail: (leftOut: readonly string[]) => string): { text: string; truncated: boolean } {
  if (jsonBytes(text) <= maxBytes) return { text, truncated: false };
  const lines = text.split('\n');
  // As JSON a kept line costs its escaped characters and the two-byte "\n" after it (its own JSON, whose quotes are two
  // bytes too); the tail, last, costs its own JSON, the string's quotes. Its longest form (every line left out) is reserved.
  const room = maxBytes - jsonBytes(tail(lines));
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + jsonBytes(line) > room) break;
    kept.push(line);
    used += jsonBytes(line);
  }
  kept.push(tail(lines.slice(kept.length)));
  return { text: kept.join('\n'), truncated: true };
}

/**
 * A read whose answer would pass the cap on one result even as its smallest
 * page (413): the parts it does not page are too large. The message names
 * the limit and what to do instead; details carry `bytes` and `maxBytes`.
 */
export class ResultTooLargeError extends VouchError {
  constructor(message: string, details: { bytes: number; maxBytes: number } & Record<string, unknown>) {
    super(ERROR_CODES.payloadTooLarge, message, { details });
  }
}
