import { ARTIFACT_LIMITS, type RequirementInput } from '@vouch/contracts';
import { escapeRegExp, mentionLines, termsOf } from './requirement-terms.js';
import type { ProposedResult } from './finalize-extract.js';

/** Name and version the deterministic extractor reports in its identity. */
export const DETERMINISTIC_EXTRACTOR = { name: 'vouch-anchor', version: '1' } as const;

// A definition: the term (optionally quoted) followed by :, =, := or =>, then a value;
// or a C #define. Values are quoted strings or one token.
const VALUE = String.raw`("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s,;)}\]]+)`;
function definitionRegExps(term: string): RegExp[] {
  const t = escapeRegExp(term);
  return [
    new RegExp(String.raw`(?<![A-Za-z0-9_])["']?${t}["']?\s*(?::=|=>|:|=)\s*${VALUE}`),
    new RegExp(String.raw`^\s*#\s*define\s+${t}\s+${VALUE}`),
  ];
}

/** Comment lines mention settings without defining them ("// baudRate was 9600"). */
const COMMENT = /^\s*(?:\/\/|\/\*|\*|#(?!\s*define\b)|--|;|<!--)/;

interface Definition {
  line: number;
  value: string;
  quote: string;
}

function clipQuote(line: string, at: number): string {
  const trimmed = line.trim();
  if (trimmed.length <= ARTIFACT_LIMITS.quoteChars) return trimmed;
  return line.slice(at, at + ARTIFACT_LIMITS.quoteChars);
}

function findDefinitions(lines: readonly string[], term: string): Definition[] {
  const res = definitionRegExps(term);
  const out: Definition[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (!text.includes(term) || COMMENT.test(text)) continue;
    for (const re of res) {
      const m = re.exec(text);
      if (!m?.[1]) continue;
      out.push({ line: i + 1, value: m[1].slice(0, ARTIFACT_LIMITS.valueChars), quote: clipQuote(text, m.index) });
      break;
    }
  }
  return out;
}

function around(line: number, total: number): { start: number; end: number } {
  return { start: Math.max(1, line - 3), end: Math.min(total, line + 3) };
}

/**
 * Anchors each requirement to the one place the source defines it. Exactly
 * one distinct value: satisfied. None, or several different values: unresolved,
 * with the lines that mention it to read next. Runs anywhere, no model.
 */
export function extractDeterministically(lines: readonly string[], requirements: readonly RequirementInput[]): ProposedResult[] {
  return requirements.map((req): ProposedResult => {
    const terms = termsOf(req);
    const defs = terms.flatMap((t) => findDefinitions(lines, t));
    const values = [...new Set(defs.map((d) => d.value))];
    if (values.length === 1 && defs[0]) {
      const d = defs[0];
      return { id: req.id, status: 'satisfied', value: d.value, anchor: { startLine: d.line, endLine: d.line, quote: d.quote }, confidence: defs.length === 1 ? 1 : 0.9 };
    }
    const search = terms.map((t) => `${escapeRegExp(t)}\\s*[:=]`).slice(0, ARTIFACT_LIMITS.recoveryItems);
    if (values.length > 1) {
      return {
        id: req.id,
        status: 'unresolved',
        code: 'ambiguous',
        reason: `${req.id} is defined ${defs.length} times with ${values.length} different values (${values.slice(0, 3).join(', ')}${values.length > 3 ? ', …' : ''}): read the lines to decide which applies`,
        recovery: { readLines: defs.slice(0, ARTIFACT_LIMITS.recoveryItems).map((d) => around(d.line, lines.length)), search },
      };
    }
    const mentions = mentionLines(lines, terms, ARTIFACT_LIMITS.recoveryItems);
    return {
      id: req.id,
      status: 'unresolved',
      code: 'not_found',
      reason: mentions.length
        ? `${req.id} is mentioned on ${mentions.length === ARTIFACT_LIMITS.recoveryItems ? 'several' : mentions.length} line(s) but never defined with a value`
        : `no line of the source mentions ${terms.join(' or ')}`,
      recovery: { readLines: mentions.map((l) => around(l, lines.length)), search },
    };
  });
}
