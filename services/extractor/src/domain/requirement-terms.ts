import type { RequirementInput } from '@vouch/contracts';

/** The words a requirement is searched by: its terms, or its id. */
export function termsOf(req: RequirementInput): string[] {
  return req.terms?.length ? req.terms : [req.id];
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A term bounded by non-identifier characters, so `channel` does not match `channelCount`. */
export function termRegExp(term: string, flags = ''): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(term)}(?![A-Za-z0-9_])`, flags);
}

/** The 1-based lines of `lines` that mention any term (case-insensitive), in order, at most `limit`. */
export function mentionLines(lines: readonly string[], terms: readonly string[], limit: number): number[] {
  const res = terms.map((t) => termRegExp(t, 'i'));
  const out: number[] = [];
  for (let i = 0; i < lines.length && out.length < limit; i++) if (res.some((re) => re.test(lines[i]!))) out.push(i + 1);
  return out;
}
