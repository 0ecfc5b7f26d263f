import { RE2JS, RE2JSException } from 're2js';

/**
 * A caller's search pattern, compiled for RE2's linear-time engine (re2js, a
 * pure-JS port: no backtracking, so no pattern can make a search take more
 * than time proportional to the bytes scanned), plus the longest literal every
 * match must contain. The literal lets a search skip with Buffer.indexOf
 * (memchr-speed) to candidate lines instead of running the regex on each.
 */
export interface GrepPattern {
  source: string;
  ignoreCase: boolean;
  /** Whether a line matches. */
  test(line: string): boolean;
  /** UTF-8 bytes every match contains, or null when none can be proven. */
  literal: Buffer | null;
  /**
   * For a case-insensitive pattern: an ASCII literal every match contains in
   * some letter case, as a case-insensitive JS RegExp over the body decoded as
   * latin1 (one char per byte, so its indexes are byte offsets). A plain
   * literal has no backtracking, so this stays linear.
   */
  foldedLiteral: RegExp | null;
}

/** Larger compiled programs are refused: RE2 is linear in input, but its cost per byte grows with the program. */
export const MAX_PROGRAM_SIZE = 5_000;

export class GrepPatternError extends Error {}

export function compileGrepPattern(source: string, ignoreCase: boolean): GrepPattern {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const detail = err instanceof RE2JSException ? err.message : String(err);
    throw new GrepPatternError(`pattern is not a valid RE2 expression (${detail}): RE2 has no backreferences or lookaround; escape literal characters such as ( [ . with \\`);
  }
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    throw new GrepPatternError(`pattern is too complex (${re.programSize()} instructions, at most ${MAX_PROGRAM_SIZE}): use fewer or smaller counted repetitions`);
  }
  const literal = requiredLiteral(source);
  return {
    source,
    ignoreCase,
    test: (line) => re.test(line),
    literal: literal && !ignoreCase ? Buffer.from(literal, 'utf8') : null,
    foldedLiteral: literal && ignoreCase && foldsAsAscii(literal) ? new RegExp(literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'gi') : null,
  };
}

/**
 * Whether RE2's case folding of this literal stays within ASCII: RE2 folds by
 * Unicode, and s and k also match ſ (U+017F) and K (U+212A), which an ASCII
 * case-insensitive search would miss.
 */
function foldsAsAscii(literal: string): boolean {
  return /^[\x20-\x7e]+$/.test(literal) && !/[sSkK]/.test(literal);
}

const QUANTIFIER = /^(?:[*?+]|\{(\d+)(?:,\d*)?\})\??/;

/**
 * The longest run of literal characters that every match of `source` must
 * contain, by a conservative reading of its top level: alternation at the top
 * level, inline flags or anything not understood gives null (no prefilter,
 * which is always correct). Groups and classes break runs; an atom made
 * optional by ?, * or {0,…} is dropped from its run.
 */
export function requiredLiteral(source: string): string | null {
  if (source.includes('(?')) return null;
  const runs: string[] = [];
  let run = '';
  const flush = () => {
    if (run) runs.push(run);
    run = '';
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    let atom: string | null = null;
    let atomLength = 1;
    if (ch === '|') return null;
    if (ch === '\\') {
      const next = source[i + 1];
      if (next === undefined) return null;
      // An escaped punctuation character is itself; letters and digits are classes or assertions (\d, \b, \1…).
      atom = /[A-Za-z0-9]/.test(next) ? null : next;
      atomLength = 2;
    } else if (ch === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= source.length) return null;
      atomLength = j + 1 - i;
    } else if (ch === '(') {
      let depth = 0;
      let j = i;
      for (; j < source.length; j++) {
        const c = source[j];
        if (c === '\\') j++;
        else if (c === '[') {
          j++;
          while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
        } else if (c === '(') depth++;
        else if (c === ')' && --depth === 0) break;
      }
      if (j >= source.length) return null;
      atomLength = j + 1 - i;
    } else if ('.^$'.includes(ch)) {
      atom = null;
    } else if ('*+?{)'.includes(ch)) {
      return null; // a quantifier with nothing before it, or a stray ): let RE2 judge, no prefilter
    } else {
      atom = ch;
      // Keep astral characters (two UTF-16 units) whole.
      const code = source.codePointAt(i)!;
      if (code > 0xffff) {
        atom = String.fromCodePoint(code);
        atomLength = 2;
      }
    }
    i += atomLength;
    const q = QUANTIFIER.exec(source.slice(i));
    if (q) {
      i += q[0].length;
      const optional = q[0].startsWith('*') || q[0].startsWith('?') || q[1] === '0';
      if (atom !== null && !optional) run += atom;
      flush();
      continue;
    }
    if (atom === null) flush();
    else run += atom;
  }
  flush();
  let best: string | null = null;
  for (const r of runs) if (best === null || Buffer.byteLength(r) > Buffer.byteLength(best)) best = r;
  return best;
}
