import fc from 'fast-check';
import type { CompletionEvidence } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { extractObservationFeatures } from '../src/observation-features.js';
import { candidates, findCandidates, indexEvidence } from '../src/reconcile-claims.js';

/**
 * The evidence a claim is judged against: each shared index key scores an
 * item by how rare the key is in the ledger (an identifier three times a
 * word), and the `limit` best are kept, the most recent first on a tie. The
 * bounded selection must choose exactly what sorting every scored item would.
 */
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ seq: i + 1, id: `ev-${i + 1}` }) as unknown as CompletionEvidence);

/** The plain model: score every item, sort by score then recency, keep the best, in evidence order. */
function model(keys: ReadonlyArray<readonly string[]>, claimKeys: readonly string[], limit: number): number[] {
  const n = keys.length;
  const df = (key: string) => keys.filter((own) => own.includes(key)).length;
  const weight = (key: string) => (key.startsWith('i:') ? 3 : 1) * Math.log(1 + n / (1 + df(key)));
  const scored = keys
    .map((own, i) => ({ i, score: [...new Set(claimKeys)].filter((k) => own.includes(k)).reduce((sum, k) => sum + weight(k), 0) }))
    .filter((x) => x.score > 0);
  scored.sort((a, b) => b.score - a.score || b.i - a.i);
  return scored
    .slice(0, limit)
    .map((x) => x.i)
    .sort((a, b) => a - b);
}

describe('candidates', () => {
  const key = fc.constantFrom('w:deploy', 'w:releas', 'w:bucket', 'w:log', 'i:pr311', 'i:v4.2', 'i:zz7');

  it('property: keeps the limit best scored items, the most recent on a tie, as sorting them all would', () => {
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(key, { maxLength: 5 }), { maxLength: 40 }), fc.uniqueArray(key, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 8 }), (keys, claimKeys, limit) => {
        const index = indexEvidence(items(keys.length), keys);
        expect(candidates(index, claimKeys, limit)).toEqual(model(keys, claimKeys, limit));
      }),
      { numRuns: 500 },
    );
  });

  it('weighs a rare identifier above common words, and prefers the later of two equal items', () => {
    const keys = [['w:deploy', 'w:releas'], ['i:pr311'], ['w:deploy', 'w:releas'], ['w:deploy'], ['w:deploy', 'w:releas']];
    const index = indexEvidence(items(keys.length), keys);
    expect(candidates(index, ['w:deploy', 'w:releas', 'i:pr311'], 2)).toEqual([1, 4]);
    expect(candidates(index, ['w:deploy', 'w:releas'], 1)).toEqual([4]);
    expect(candidates(index, ['w:deploy'], 10)).toEqual([0, 2, 3, 4]);
    expect(candidates(index, ['w:unknown'], 3)).toEqual([]);
  });

  it('finds an observation by a number of 10 or more, or a version, the claim names, however each writes it; not by a smaller number', () => {
    const summaries = ['payments 1082 confirmed', 'tank at 12.5 m³', 'fleet: 12/12 on 2.7.1', 'step 3 of 9 done', 'nothing to see'];
    const index = indexEvidence(items(summaries.length), summaries.map((s) => extractObservationFeatures(s, undefined).k));
    const found = (summary: string) => findCandidates(deriveClaims({ goal: 'g', summary }, { cycle: 1 }), index)[0]!.candidates;
    // No word is shared: only the value ties each claim to its observation.
    expect(found('All 1,082 went through.')).toEqual([0]);
    expect(found('Holding 12,500 L now.')).toEqual([1]);
    expect(found('Everyone runs v2.7.1 now.')).toEqual([2]);
    expect(found('Finished 3 of them.')).toEqual([]);
  });

  it('refuses an index without the keys of every item', () => {
    expect(() => indexEvidence(items(2), [['w:a']])).toThrow('an evidence index needs the keys of all 2 items, got 1');
  });
});
