import { ARTIFACT_LIMITS, type Anchor, type Coverage, type RequirementInput, type RequirementResult } from '@vouch/contracts';
import { lineSpan, type BodyLines } from './body-lines.js';
import { escapeRegExp, termsOf } from './requirement-terms.js';

/** What an extractor proposes; anchors are checked before anything is recorded. */
export type ProposedResult = RequirementResult;

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/**
 * Whether the quote stands, byte for byte, within the anchor's lines of the
 * stored body, and the value within the quote. A model that paraphrases or
 * points at the wrong line fails here.
 */
export function verifyAnchor(body: Buffer, lines: BodyLines, anchor: Anchor, value: string): string | undefined {
  const span = lineSpan(lines, body, anchor.startLine, anchor.endLine);
  if (!span) return `lines ${anchor.startLine}-${anchor.endLine} are outside the source (${lines.starts.length} lines)`;
  if (anchor.quote.length === 0) return 'the quote is empty';
  const quote = Buffer.from(anchor.quote, 'utf8');
  if (body.subarray(span.start, span.end).indexOf(quote) === -1) return `the quoted text is not on lines ${anchor.startLine}-${anchor.endLine} of the source`;
  if (!anchor.quote.includes(value)) return 'the value is not within the quoted text';
  return undefined;
}

/**
 * Makes the final list: one result per requirement, in the order asked (an
 * omitted requirement becomes unresolved), every satisfied anchor verified
 * (a failed one becomes unresolved), reasons bounded.
 */
export function finalizeResults(body: Buffer, lines: BodyLines, requirements: readonly RequirementInput[], proposed: readonly ProposedResult[]): RequirementResult[] {
  const byId = new Map(proposed.map((p) => [p.id, p]));
  return requirements.map((req): RequirementResult => {
    const search = termsOf(req).map((t) => `${escapeRegExp(t)}\\s*[:=]`).slice(0, ARTIFACT_LIMITS.recoveryItems);
    const p = byId.get(req.id);
    if (!p) {
      return { id: req.id, status: 'unresolved', code: 'model_unresolved', reason: `the extractor gave no answer for ${req.id}`, recovery: { readLines: [], search } };
    }
    if (p.status === 'unresolved') {
      return { ...p, reason: clip(p.reason, ARTIFACT_LIMITS.reasonChars), recovery: { readLines: p.recovery.readLines.slice(0, ARTIFACT_LIMITS.recoveryItems), search: p.recovery.search.slice(0, ARTIFACT_LIMITS.recoveryItems) } };
    }
    const problem = verifyAnchor(body, lines, p.anchor, p.value);
    if (problem) {
      const total = lines.starts.length;
      const start = Math.max(1, Math.min(p.anchor.startLine, total) - 3);
      return {
        id: req.id,
        status: 'unresolved',
        code: 'anchor_failed',
        reason: clip(`the anchor for ${req.id} failed verification: ${problem}`, ARTIFACT_LIMITS.reasonChars),
        recovery: { readLines: total ? [{ start, end: Math.min(total, start + 6) }] : [], search },
      };
    }
    return { ...p, confidence: Math.max(0, Math.min(1, p.confidence)) };
  });
}

/** Coverage from the results alone: complete only when nothing is unresolved. */
export function coverageOf(results: readonly RequirementResult[]): Coverage {
  const satisfied = results.filter((r) => r.status === 'satisfied').length;
  return { total: results.length, satisfied, unresolved: results.length - satisfied, complete: results.length > 0 && satisfied === results.length };
}

/** The mean per-requirement confidence; an unresolved requirement counts 0. */
export function confidenceOf(results: readonly RequirementResult[]): number {
  if (results.length === 0) return 0;
  const sum = results.reduce((acc, r) => acc + (r.status === 'satisfied' ? r.confidence : 0), 0);
  return Math.round((sum / results.length) * 1000) / 1000;
}

/** The compact evidence a parent receives: one line per requirement, no more source than the anchors quote. */
export function renderEvidence(results: readonly RequirementResult[]): string {
  return results
    .map((r) => {
      if (r.status === 'satisfied') {
        const lines = r.anchor.startLine === r.anchor.endLine ? `L${r.anchor.startLine}` : `L${r.anchor.startLine}-${r.anchor.endLine}`;
        return `${r.id} = ${r.value} [${lines}: ${JSON.stringify(r.anchor.quote)}]`;
      }
      const read = r.recovery.readLines.map((l) => `L${l.start}-${l.end}`).join(',');
      return `${r.id}: UNRESOLVED (${r.code}) ${r.reason}${read ? `; read ${read}` : ''}`;
    })
    .join('\n');
}
