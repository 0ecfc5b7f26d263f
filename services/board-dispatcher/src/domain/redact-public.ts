import { SERVICE_QUEUES } from '@vouch/contracts';
import type { BoardState } from './replay-board.js';

/**
 * Redaction for the public form of a board's answer (DESIGN: public-safe
 * output; the kanban work order's phase 5: public strict scrutiny uses board
 * evidence without leaking internal paths). Workers write free text, and a
 * path or an id they mention would otherwise reach a public chat word for word.
 *
 * - File system paths become "a file" (the last part has an extension),
 *   "a folder" (it ends in a slash) or "a path": absolute ones and those
 *   starting with ./ ../ ~/ or a drive letter, and relative ones with a slash
 *   and an extension (work/out.csv). "and/or", "1/2" and "TCP/IP" are not paths.
 * - The board's own ids become "an internal reference": card ids (c-3),
 *   evidence ids (e-1), requirement ids (r2), claim tokens (ct_…), job ids
 *   (board-dispatcher.j…), tool call ids (call-17), and, as written, the board
 *   id, its scope's run or project id, claim tokens and every evidence ref on
 *   the board. A citation holding nothing else, "(e-1, call-17)", is dropped.
 * - A URL stays (a public source is worth citing) unless it is an evidence
 *   ref of the board ("a web page"), on an internal host ("an internal
 *   address") or a file: URL ("a file").
 */

export const INTERNAL_REFERENCE = 'an internal reference';

/** What the public form withholds of one board, as written (its ids and every evidence ref), longest first, each with the words that replace it. */
export interface PublicRedaction {
  withheld: ReadonlyArray<readonly [literal: string, words: string]>;
}

// An id is a whole token: not inside a longer word, id or path.
const before = String.raw`(?<![\w./~\\-])`;
const after = String.raw`(?![\w-]|\.\w)`;
const ID_PATTERNS: readonly RegExp[] = [
  // Card, evidence and requirement ids, as the board numbers them.
  new RegExp(`${before}(?:c-\\d+|e-\\d+|r\\d+)${after}`, 'g'),
  // Claim tokens: ct_ and 128 random bits in base64url (board-handlers.ts); short ones too, as examples write them.
  new RegExp(`${before}ct_[A-Za-z0-9_-]+`, 'g'),
  // Job ids: the gateway's j + 32 hex (fresh) or k + 40 hex (keyed), alone or as <queue>.<id>.
  new RegExp(`${before}(?:(?:${SERVICE_QUEUES.map((q) => q.replace(/[.-]/g, '\\$&')).join('|')})\\.)?(?:j[0-9a-f]{32}|k[0-9a-f]{40})${after}`, 'g'),
  // Tool call ids (call-17, call_a1b2): with a digit, so "call-back" stays.
  new RegExp(`${before}call[-_](?=[A-Za-z0-9]*\\d)[A-Za-z0-9]+${after}`, 'g'),
];

const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`)\]]+/gi;
const INTERNAL_HOST_RE = /^(localhost|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|0\.0\.0\.0|\[?::1\]?$|[^.]+$)/i;
const PATH_RES: readonly RegExp[] = [
  // Windows: C:\Users\agent\out.csv
  /(?<![\w])[A-Za-z]:\\[\w.@+\\-]+/g,
  // Absolute, home or dot-relative: /home/agent/out.csv, ~/notes, ./out.csv, ../data/
  /(?<![\w.:/~\\-])(?:~|\.{1,2})?\/[\w@+-][\w.@+-]*(?:\/[\w.@+-]+)*\/?/g,
  // Relative with a slash and an extension: work/out.csv, src/app.ts
  /(?<![\w.:/~\\-])[\w@+-][\w.@+-]*(?:\/[\w.@+-]+)*\/[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])/g,
];

/** A literal is withheld only if it looks like an id: a word like "inventory" as a ref must not blank the word out of every sentence. */
function idLike(literal: string): boolean {
  return literal.length >= 4 && /[\d_./:-]/.test(literal);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What of a board the public form withholds. A file's ref reads as "a file", a web page's as "a web page". */
export function boardRedaction(state: BoardState): PublicRedaction {
  const withheld = new Map<string, string>([
    [state.boardId, INTERNAL_REFERENCE],
    [state.scope.ref, INTERNAL_REFERENCE],
  ]);
  for (const id of state.order) {
    const card = state.cards[id]!;
    for (const e of card.evidence) if (e.ref) withheld.set(e.ref, e.kind === 'file' ? 'a file' : e.kind === 'url' ? 'a web page' : INTERNAL_REFERENCE);
    if (card.claim) withheld.set(card.claim.token, INTERNAL_REFERENCE);
  }
  return { withheld: [...withheld].filter(([literal]) => idLike(literal)).sort(([a], [b]) => b.length - a.length) };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

function pathWords(path: string): string {
  if (/[/\\]$/.test(path)) return 'a folder';
  return /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(path) ? 'a file' : 'a path';
}

/** A text taken from the board (a worker's submission, a title), fit for a public answer. */
export function redactForPublic(text: string, redaction: PublicRedaction): string {
  const withheld = new Map(redaction.withheld);
  // URLs first, behind placeholders, so their slashes are not read as paths.
  const kept: string[] = [];
  // Private-use characters mark them: no worker text or pattern here contains them.
  const hold = (value: string) => `\uE000${kept.push(value) - 1}\uE001`;
  let out = text.replace(URL_RE, (match) => {
    const trail = /[.,;:!?]+$/.exec(match)?.[0] ?? '';
    const url = match.slice(0, match.length - trail.length);
    const words = withheld.get(url);
    if (words) return hold(words) + trail;
    if (/^file:/i.test(url)) return hold('a file') + trail;
    return hold(INTERNAL_HOST_RE.test(hostOf(url)) ? 'an internal address' : url) + trail;
  });
  for (const re of PATH_RES) {
    out = out.replace(re, (match) => {
      // A sentence's full stop is not part of the path.
      const trail = /\.+$/.exec(match)?.[0] ?? '';
      const path = match.slice(0, match.length - trail.length);
      return pathWords(path) + trail;
    });
  }
  for (const [literal, words] of redaction.withheld) {
    out = out.replace(new RegExp(`(?<![\\w./~\\\\-])${escapeRegExp(literal)}(?![\\w-]|\\.\\w)`, 'g'), words);
  }
  for (const re of ID_PATTERNS) out = out.replace(re, INTERNAL_REFERENCE);
  const ref = INTERNAL_REFERENCE;
  return (
    out
      // "c-1 and c-2" reads as one mention.
      .replace(new RegExp(`${ref}(?:(?:\\s*[,/]\\s*|\\s+and\\s+)${ref})+`, 'g'), 'internal references')
      // A citation holding only ids says nothing in public: "(e-1, call-17)", "[evidence e-1]".
      .replace(new RegExp(`\\s*[([](?:\\s|[,;:]|${ref}|internal references|evidence|see|refs?)*[)\\]]`, 'gi'), '')
      .replace(/\uE000(\d+)\uE001/g, (_m, i: string) => kept[Number(i)] ?? '')
      .replace(/[ \t]{2,}/g, ' ')
      .replace(/ +([,.;:!?])/g, '$1')
      .trim()
  );
}
