import type { ClaimKind, EvidenceKind, EvidenceSpan } from '@vouch/contracts';
import { judgeSupport, readClaim, sameWord } from './judge-support.js';
import { readText } from './read-text.js';
import { valuesMatch } from './read-values.js';

/**
 * A second critic (an LLM) may say that an observation shows a claim the
 * rules could not see, but only with the observation's own words: the judge
 * checks that the quote is in the named item verbatim, that it carries every
 * identifier, number and name the claim states, that it says nothing negative
 * about it, and that the item is a successful observation. A model that
 * paraphrases, invents or quotes a failure supports nothing.
 */

export interface QuotedItem {
  id: string;
  kind: EvidenceKind;
  summary: string;
  success?: boolean | undefined;
}

const UNFINISHED_RE = /\b(?:in progress|pending|queued|scheduled|waiting|not yet|awaiting|started|starting|running)\b/i;

export type QuoteCheck = { ok: true; span: EvidenceSpan } | { ok: false; why: string };

/** Lower case, one space, no quotation marks: how a quote is found in the item. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[\s"“”'‘’`]+/g, ' ').trim();
}

/** Where a quote sits in the item's summary (character offsets), compared as squash() compares. */
function locate(summary: string, quote: string): { start: number; end: number } | undefined {
  const wanted = squash(quote);
  if (!wanted) return undefined;
  // Map each character of the squashed summary back to its offset in the original.
  const offsets: number[] = [];
  let squashed = '';
  let lastSpace = true;
  for (let i = 0; i < summary.length; i++) {
    const ch = summary[i] as string;
    if (/[\s"“”'‘’`]/.test(ch)) {
      if (!lastSpace) {
        squashed += ' ';
        offsets.push(i);
        lastSpace = true;
      }
      continue;
    }
    squashed += ch.toLowerCase();
    offsets.push(i);
    lastSpace = false;
  }
  const at = squashed.indexOf(wanted);
  if (at === -1) return undefined;
  return { start: offsets[at] as number, end: (offsets[at + wanted.length - 1] as number) + 1 };
}

/** Checks a quote an LLM gave as support for a claim against the evidence item it named. */
export function checkQuotedSupport(claim: { text: string; kind: ClaimKind }, quote: string, item: QuotedItem | undefined): QuoteCheck {
  if (!item) return { ok: false, why: 'the quote names no recorded evidence item' };
  if (item.success === false) return { ok: false, why: `${item.id} is a failed observation` };
  if (item.kind === 'critic_feedback') return { ok: false, why: `${item.id} is critic feedback, not an observation` };
  const where = locate(item.summary, quote);
  if (!where) return { ok: false, why: `the quoted words are not in ${item.id}` };
  const reading = readClaim(claim.text, claim.kind);
  const quoted = readText(item.summary.slice(where.start, where.end));
  const lacking = reading.values.filter((v) => !v.word.synthetic && !quoted.words.some((w) => w.value !== undefined && valuesMatch(v.value, w.value))).map((v) => v.word.text);
  const names = reading.terms.filter((t) => t.word.pos === 'PROPN' || /^[A-Z]{2,}s?$/.test(t.word.text));
  lacking.push(...names.filter((t) => !quoted.words.some((w) => w.lemma && sameWord(t.word.lemma, w.lemma, true))).map((t) => t.word.text));
  if (lacking.length) return { ok: false, why: `the quote does not carry ${lacking.map((x) => `"${x}"`).join(', ')}` };
  const shared = reading.terms.filter((t) => quoted.words.some((w) => w.lemma && sameWord(t.word.lemma, w.lemma))).length;
  if (reading.values.length === 0 && names.length === 0 && shared < 2) return { ok: false, why: 'the quote shares too little with the claim to be about it' };
  // "deploy api 4.2: in progress": words that say the act has not finished are no support for it done.
  if (UNFINISHED_RE.test(item.summary.slice(where.start, where.end))) return { ok: false, why: 'the quoted words report a negative or unfinished result' };
  const judged = judgeSupport(reading, { read: { ...quoted, tool: [] }, kind: item.kind });
  if (judged.verdict === 'contradicts' || (judged.verdict === 'lacks' && judged.negative)) return { ok: false, why: 'the quoted words report a negative or unfinished result' };
  return { ok: true, span: { evidenceId: item.id, start: where.start, end: where.end, text: item.summary.slice(where.start, where.end) } };
}
