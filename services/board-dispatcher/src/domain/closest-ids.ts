import { distance } from 'fastest-levenshtein';

/**
 * The existing ids (or keys) closest to one that does not exist, for "did
 * you mean" answers to hallucinated card ids: by edit distance, then by how
 * near the card number is (c-12 for c-21 before c-2), then by id order.
 */
export function closestIds(unknown: string, candidates: readonly string[], limit = 3): string[] {
  const number = (s: string) => Number(/(\d+)\s*$/.exec(s)?.[1] ?? NaN);
  const wanted = number(unknown);
  const scored = candidates.map((id, index) => {
    const n = number(id);
    return { id, index, d: distance(unknown.toLowerCase(), id.toLowerCase()), gap: Number.isFinite(wanted) && Number.isFinite(n) ? Math.abs(wanted - n) : Infinity };
  });
  scored.sort((a, b) => a.d - b.d || a.gap - b.gap || a.index - b.index);
  return [...new Set(scored.map((s) => s.id))].slice(0, limit);
}
