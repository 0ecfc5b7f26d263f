import type { ArtifactRange } from '@vouch/contracts';

/**
 * Line geometry of a stored body (UTF-8 bytes). Lines are split on `\n`; a
 * final `\n` ends the last line rather than starting an empty one, so
 * "a\nb\n" has two lines, "" none. Line numbers are 1-based, as editors and
 * anchors count them.
 */
export interface BodyLines {
  /** Byte offset where each line starts; length = line count. */
  starts: Uint32Array;
  byteLength: number;
}

const NEWLINE = 0x0a;

/**
 * Bytes indexed or hashed between two yields of the sliced versions below: a
 * millisecond or two, so another job's next step waits for one slice, not
 * for a whole 8 MB body.
 */
export const DIGEST_SLICE_BYTES = 1024 * 1024;

export function indexLines(body: Uint8Array): BodyLines {
  const work = indexLinesInSlices(body, Number.POSITIVE_INFINITY);
  for (let step = work.next(); ; step = work.next()) if (step.done) return step.value;
}

/** indexLines as a generator that yields after about every `sliceBytes` (run it with runInSlices, @vouch/platform). */
export function* indexLinesInSlices(body: Uint8Array, sliceBytes = DIGEST_SLICE_BYTES): Generator<void, BodyLines, void> {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (buf.length === 0) return { starts: new Uint32Array(0), byteLength: 0 };
  const starts: number[] = [0];
  let sliceEnd = sliceBytes;
  for (let at = buf.indexOf(NEWLINE); at !== -1 && at + 1 < buf.length; at = buf.indexOf(NEWLINE, at + 1)) {
    starts.push(at + 1);
    if (at >= sliceEnd) {
      sliceEnd = at + sliceBytes;
      yield;
    }
  }
  return { starts: Uint32Array.from(starts), byteLength: buf.length };
}

export function lineCount(lines: BodyLines): number {
  return lines.starts.length;
}

/** Byte span [start, end) of lines first..last (1-based, inclusive), without the last line's `\n`. */
export function lineSpan(lines: BodyLines, body: Uint8Array, first: number, last: number): { start: number; end: number } | undefined {
  const n = lines.starts.length;
  if (first < 1 || last < first || last > n) return undefined;
  const start = lines.starts[first - 1]!;
  let end = last < n ? lines.starts[last]! : lines.byteLength;
  if (end > start && body[end - 1] === NEWLINE) end -= 1;
  return { start, end };
}

/** The 1-based line holding a byte offset. */
export function lineAt(lines: BodyLines, offset: number): number {
  let lo = 0;
  let hi = lines.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines.starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** The text of lines first..last, joined by `\n`. */
export function linesText(lines: BodyLines, body: Uint8Array, first: number, last: number): string | undefined {
  const span = lineSpan(lines, body, first, last);
  return span && Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8', span.start, span.end);
}

/**
 * Whether `part` is exactly what a read of `range` from `whole` returns: the
 * same bytes, a line range with or without its final newline. A partial read
 * joins the current revision only when this holds.
 */
export function rangeMatches(whole: Uint8Array, part: Uint8Array, range: ArtifactRange): boolean {
  const w = Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength);
  const p = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
  if (range.unit === 'bytes') return range.end <= w.length && w.subarray(range.start, range.end).equals(p);
  const lines = indexLines(w);
  const span = lineSpan(lines, w, range.start, Math.min(range.end, lines.starts.length));
  if (!span || range.end > lines.starts.length) return false;
  const exact = w.subarray(span.start, span.end);
  if (exact.equals(p)) return true;
  return p.length === exact.length + 1 && p[p.length - 1] === NEWLINE && p.subarray(0, exact.length).equals(exact);
}
