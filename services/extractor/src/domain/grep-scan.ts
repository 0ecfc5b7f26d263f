import { lineAt, type BodyLines } from './body-lines.js';
import type { GrepPattern } from './grep-pattern.js';

/** One searchable body: an artifact's bytes and, built once, its line index. */
export interface ScanTarget {
  artifactId: string;
  path: string;
  /** Undefined when the body was not loaded because the scan cap stops before it. */
  body: Buffer | undefined;
  lines: () => BodyLines;
}

export interface GrepLimits {
  /** Bytes of the returned matches, serialized as the result carries them. */
  capBytes: number;
  /** Bytes of bodies scanned; files past it are not searched. */
  scanCapBytes: number;
  /** A returned line is clipped to this many characters. */
  lineChars: number;
  /** Bytes scanned between two yields of the scan (SCAN_SLICE_BYTES unless set). */
  sliceBytes?: number;
}

export interface GrepMatch {
  artifactId: string;
  path: string;
  line: number;
  text: string;
}

export interface GrepOutcome {
  matches: GrepMatch[];
  returnedBytes: number;
  scannedBytes: number;
  filesScanned: number;
  matchesCounted: number;
  /** Counted matches per path, for narrowing advice. */
  perPath: Map<string, number>;
  truncatedBy: Array<'result_cap' | 'scan_cap' | 'line_cap'>;
}

const NEWLINE = 0x0a;

/**
 * Bytes of body scanned between two yields: a few milliseconds of the
 * slowest scan (a regex on every line, about 60 MB/s on the dev machine),
 * so another job's next step waits for one slice, not for a 64 MB grep.
 */
export const SCAN_SLICE_BYTES = 256 * 1024;

/**
 * Searches targets in order, line by line. Matching lines are returned until
 * the result cap, and counted (not returned) after it, so a capped result
 * still says how much it left out. Files are scanned whole until the scan cap;
 * the rest are left unscanned and reported. Pure over its inputs.
 *
 * A generator: it yields after about every `sliceBytes` scanned, at a line
 * boundary, and returns the outcome. The service runs it with runInSlices
 * (@vouch/platform), giving the event loop a turn at each yield; runAtOnce
 * drains it in one go.
 */
export function* scanTargets(targets: readonly ScanTarget[], pattern: GrepPattern, limits: GrepLimits): Generator<void, GrepOutcome, void> {
  const sliceBytes = limits.sliceBytes ?? SCAN_SLICE_BYTES;
  const out: GrepOutcome = { matches: [], returnedBytes: 0, scannedBytes: 0, filesScanned: 0, matchesCounted: 0, perPath: new Map(), truncatedBy: [] };
  const flag = (why: 'result_cap' | 'scan_cap' | 'line_cap') => {
    if (!out.truncatedBy.includes(why)) out.truncatedBy.push(why);
  };
  let full = false;
  for (const target of targets) {
    const body = target.body;
    if (!body || (out.filesScanned > 0 && out.scannedBytes + body.length > limits.scanCapBytes)) {
      flag('scan_cap');
      break;
    }
    out.filesScanned += 1;
    out.scannedBytes += body.length;
    const onMatch = (start: number, end: number) => {
      out.matchesCounted += 1;
      out.perPath.set(target.path, (out.perPath.get(target.path) ?? 0) + 1);
      if (full) return;
      let text = body.toString('utf8', start, end);
      if (text.length > limits.lineChars) {
        text = text.slice(0, limits.lineChars);
        flag('line_cap');
      }
      const match = { artifactId: target.artifactId, path: target.path, line: lineAt(target.lines(), start), text };
      // The match as the job result serializes it, plus its separating comma.
      const bytes = Buffer.byteLength(JSON.stringify(match)) + 1;
      if (out.returnedBytes + bytes > limits.capBytes) {
        full = true;
        flag('result_cap');
        return;
      }
      out.returnedBytes += bytes;
      out.matches.push(match);
    };
    if (pattern.literal) yield* scanWithLiteral(body, pattern, pattern.literal, onMatch, sliceBytes);
    else if (pattern.foldedLiteral) yield* scanWithFoldedLiteral(body, pattern, pattern.foldedLiteral, onMatch, sliceBytes);
    else yield* scanEveryLine(body, pattern, onMatch, sliceBytes);
  }
  return out;
}

type OnMatch = (start: number, end: number) => void;

function* scanWithLiteral(body: Buffer, pattern: GrepPattern, literal: Buffer, onMatch: OnMatch, sliceBytes: number): Generator<void, void, void> {
  let from = 0;
  let sliceEnd = sliceBytes;
  while (from < body.length) {
    if (from >= sliceEnd) {
      yield;
      sliceEnd = from + sliceBytes;
    }
    const hit = body.indexOf(literal, from);
    if (hit === -1) return;
    const start = body.lastIndexOf(NEWLINE, hit) + 1;
    let end = body.indexOf(NEWLINE, hit);
    if (end === -1) end = body.length;
    if (pattern.test(body.toString('utf8', start, end))) onMatch(start, end);
    from = end + 1;
  }
}

function* scanWithFoldedLiteral(body: Buffer, pattern: GrepPattern, literal: RegExp, onMatch: OnMatch, sliceBytes: number): Generator<void, void, void> {
  const text = body.toString('latin1');
  const re = new RegExp(literal.source, literal.flags);
  let from = 0;
  let sliceEnd = sliceBytes;
  while (from < body.length) {
    if (from >= sliceEnd) {
      yield;
      sliceEnd = from + sliceBytes;
    }
    re.lastIndex = from;
    const hit = re.exec(text);
    if (!hit) return;
    const start = body.lastIndexOf(NEWLINE, hit.index) + 1;
    let end = body.indexOf(NEWLINE, hit.index);
    if (end === -1) end = body.length;
    if (pattern.test(body.toString('utf8', start, end))) onMatch(start, end);
    from = end + 1;
  }
}

function* scanEveryLine(body: Buffer, pattern: GrepPattern, onMatch: OnMatch, sliceBytes: number): Generator<void, void, void> {
  let start = 0;
  let sliceEnd = sliceBytes;
  while (start < body.length) {
    if (start >= sliceEnd) {
      yield;
      sliceEnd = start + sliceBytes;
    }
    let end = body.indexOf(NEWLINE, start);
    if (end === -1) end = body.length;
    if (pattern.test(body.toString('utf8', start, end))) onMatch(start, end);
    start = end + 1;
  }
}
