import { ARTIFACT_LIMITS, type ArtifactRange, type Fidelity, type RequirementResult, type UnreadPart } from '@vouch/contracts';

/** What an extract knows of the read it came from. */
export interface SourceRead {
  path: string;
  fidelity: Fidelity;
  range: ArtifactRange | null;
  /** Lines and bytes of the body held. */
  lineCount: number;
  byteSize: number;
  /** Whether the body ends with a newline (a capped read's last line is then whole). */
  endsWithNewline: boolean;
}

/** The part a partial or capped read holds, in words, and the parts of the file it left out. */
export interface UnreadRest {
  part: string;
  parts: UnreadPart[];
  /** How to read the rest, in words. */
  instruction: string;
}

const describeParts = (parts: readonly UnreadPart[]): string =>
  parts.map((p) => (p.end === null ? `${p.unit} from ${p.start} to the end` : p.unit === 'lines' ? `lines ${p.start}-${p.end}` : `bytes ${p.start}-${p.end}`)).join(' and ');

/**
 * For a partial or capped read: what it holds and what it left out of the
 * file. A range read holds its range (the rest is before and after it); a
 * capped read was cut short, so it holds its start and the rest follows it
 * (from its last line again when that line was cut mid-line). Undefined for
 * a full read.
 */
export function unreadRest(source: SourceRead): UnreadRest | undefined {
  if (source.fidelity === 'full') return undefined;
  const { range, path } = source;
  const parts: UnreadPart[] = [];
  let part: string;
  if (source.fidelity === 'partial' && range) {
    if (range.unit === 'lines') {
      if (range.start > 1) parts.push({ unit: 'lines', start: 1, end: range.start - 1 });
      parts.push({ unit: 'lines', start: range.end + 1, end: null });
      part = `lines ${range.start}-${range.end} of ${path}`;
    } else {
      if (range.start > 0) parts.push({ unit: 'bytes', start: 0, end: range.start });
      parts.push({ unit: 'bytes', start: range.end, end: null });
      part = `bytes ${range.start}-${range.end} of ${path}`;
    }
  } else {
    // Capped: the read started at its range's start (or the file's) and was cut short.
    if (range?.unit === 'bytes') {
      if (range.start > 0) parts.push({ unit: 'bytes', start: 0, end: range.start });
      parts.push({ unit: 'bytes', start: range.start + source.byteSize, end: null });
      part = `${source.byteSize} bytes of ${path} from byte ${range.start}, where the read was cut short`;
    } else {
      const first = range?.start ?? 1;
      if (first > 1) parts.push({ unit: 'lines', start: 1, end: first - 1 });
      const lastRead = first + Math.max(source.lineCount, 1) - 1;
      // A cut can fall inside a line: read that line again whole.
      parts.push({ unit: 'lines', start: source.endsWithNewline ? lastRead + 1 : lastRead, end: null });
      part = `${source.lineCount} line(s) of ${path} from line ${first}, where the read was cut short`;
    }
  }
  return { part, parts, instruction: `read ${describeParts(parts)} (artifact.read with range), or the whole file, then extract again` };
}

const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/**
 * Over a partial or capped read, a requirement the part does not define is
 * not "not found": the value may be in the rest of the file. Such results
 * (`not_found`, and `model_unresolved`: the model found no definition in the
 * part) become `not_in_part_read`, saying which part was read and how to read
 * the rest. Other results are left as they are. A full read's results pass
 * unchanged.
 */
export function qualifyForPartialSource(results: readonly RequirementResult[], source: SourceRead): RequirementResult[] {
  const rest = unreadRest(source);
  if (!rest) return [...results];
  return results.map((r): RequirementResult => {
    if (r.status !== 'unresolved' || (r.code !== 'not_found' && r.code !== 'model_unresolved')) return r;
    return {
      ...r,
      code: 'not_in_part_read',
      reason: clip(`${r.id} is not in the part read (${rest.part}): ${rest.instruction}`, ARTIFACT_LIMITS.reasonChars),
      recovery: { ...r.recovery, readRest: { path: source.path, parts: rest.parts } },
    };
  });
}
