import { describe, expect, it } from 'vitest';
import type { CompletionEvidence } from '@vouch/contracts';
import {
  FEATURES_VERSION,
  currentFeatures,
  currentKeys,
  currentObservations,
  extractObservationFeatures,
  indexKeys,
  observationReading,
  observeEvidence,
  type ObservationFeatures,
  type StoredWord,
} from '../src/observation-features.js';

/**
 * What the critic stores of each observation and how a review reads it back:
 * the index keys a review finds candidates by, the tool's words, and the
 * rule that stored features of another version (or none) are read again from
 * the summary, never trusted.
 */
const evidence = (summaries: string[]): CompletionEvidence[] =>
  summaries.map((summary, i) => ({ seq: i + 1, summary, toolName: 'kubectl', ok: true }) as unknown as CompletionEvidence);

describe('extractObservationFeatures', () => {
  it("keeps the tool's name as lower-cased words of two letters or more", () => {
    expect(extractObservationFeatures('x', 'Deploy.Tool2 a').t).toEqual(['deploy', 'tool']);
    expect(extractObservationFeatures('x', 'gh_pr-merge').t).toEqual(['gh', 'pr', 'merge']);
    expect(extractObservationFeatures('x', 'KUBECTL-apply').t).toEqual(['kubectl', 'apply']);
    expect(extractObservationFeatures('x', undefined).t).toEqual([]);
  });

  it('stores each word as a tuple, its value when it has one, and its index keys', () => {
    const f = extractObservationFeatures('rollout of v4.2 failed: timeout', 'kubectl');
    expect(f.v).toBe(FEATURES_VERSION);
    expect(f.w.find((w) => w[0] === 'v4.2')).toEqual(['v4.2', 'VAL', 11, 15, 0, 0, { k: 'ver', parts: [4, 2] }]);
    expect(f.w.find((w) => w[0] === 'rollout')).toEqual(['rollout', 'NOUN', 0, 7, 0, 0]);
    expect(f.f).toEqual([['fail', 'timeout']]);
    expect(f.k).toEqual(indexKeys(f));
    expect(f.k).toContain('w:kubectl');
  });
});

describe('indexKeys', () => {
  const word = (lemma: string, pos: string, value?: StoredWord[6]): StoredWord => (value ? [lemma, pos, 0, 1, 0, 0, value] : [lemma, pos, 0, 1, 0, 0]);

  it('indexes content words by stem, identifiers by key, numbers of 10 or more and versions by value, the words of quotes, and the tool', () => {
    const keys = indexKeys({
      w: [
        word('deploy', 'VERB'),
        word('releases', 'NOUN'),
        word('acme', 'PROPN'),
        word('green', 'ADJ'),
        word('x1', 'X'),
        word('42', 'NUM'),
        word('quickly', 'ADV'),
        word('zz', 'VAL', { k: 'id', key: 'zz7' }),
        word('', 'VAL', { k: 'quote', text: 'all  good no' }),
        word('v4', 'VAL', { k: 'ver', parts: [4] } as never),
        word('1,082', 'VAL', { k: 'num', n: 1082, step: 1 }),
        word('9', 'VAL', { k: 'num', n: 9, step: 1 }),
      ],
      t: ['kubectl'],
    });
    expect(keys).toEqual(['w:deploy', 'w:releas', 'w:acm', 'w:green', 'w:x1', 'w:42', 'w:quickly', 'i:zz7', 'w:all', 'w:good', 'v:4', 'n:1082', 'w:kubectl']);
  });

  it('leaves out function words, one-letter lemmas and parts of speech that name nothing', () => {
    expect(indexKeys({ w: [word('the', 'DET'), word('be', 'AUX'), word('to', 'PART'), word('at', 'ADP'), word('i', 'PRON'), word('ok', 'INTJ'), word('n', 'NOUN'), word('xNOUN', 'NOUNS')], t: [] })).toEqual([]);
  });
});

describe('observationReading', () => {
  it('gives back the words over their summary, with negation and values only where stored', () => {
    const summary = 'no errors in v4.2';
    const read = observationReading(summary, { v: FEATURES_VERSION, w: [['error', 'NOUN', 3, 9, 0, 1], ['v4.2', 'VAL', 13, 17, 1, 0, { k: 'ver', parts: [4, 2] } as never]], f: [[], ['fail']], h: 2, t: ['git'], k: [] });
    expect(read).toEqual({
      text: summary,
      words: [
        { text: 'errors', lemma: 'error', pos: 'NOUN', start: 3, end: 9, seg: 0, neg: true },
        { text: 'v4.2', lemma: 'v4.2', pos: 'VAL', start: 13, end: 17, seg: 1, value: { k: 'ver', parts: [4, 2] } },
      ],
      failures: [[], ['fail']],
      headEnd: 2,
      tool: ['git'],
    });
  });
});

describe('stored features', () => {
  const items = evidence(['pods are Running', 'rollout failed: timeout', 'bucket logs-eu created']);
  const read = observeEvidence(items);
  const stale = (f: ObservationFeatures): ObservationFeatures => ({ ...f, v: FEATURES_VERSION + 1, k: ['w:stale'] });

  it('reads each item when it is recorded, by seq', () => {
    expect(read.map((o) => o.seq)).toEqual([1, 2, 3]);
    expect(read[1]!.features).toEqual(extractObservationFeatures('rollout failed: timeout', 'kubectl'));
  });

  it('uses stored features of the current version, and reads again the missing and stale ones', () => {
    const planted = { ...read[0]!.features, k: ['w:planted'] };
    const current = currentObservations(items, [planted, stale(read[1]!.features), undefined]);
    expect(current[0]).toBe(planted);
    expect(current.slice(1)).toEqual([read[1]!.features, read[2]!.features]);
    expect(currentObservations(items)).toEqual(read.map((o) => o.features));
  });

  it('takes stored keys by position for seq 1 to count, and names the rest stale', () => {
    const rows = [
      { seq: 0, v: FEATURES_VERSION, k: ['w:zero'] },
      { seq: 1, v: FEATURES_VERSION, k: ['w:one'] },
      { seq: 2, v: FEATURES_VERSION + 1, k: ['w:two'] },
      { seq: 3, v: FEATURES_VERSION, k: ['w:three'] },
      { seq: 4, v: FEATURES_VERSION, k: ['w:four'] },
    ];
    expect(currentKeys(3, rows)).toEqual({ keys: [['w:one'], undefined, ['w:three']], stale: [2] });
    expect(currentKeys(4, [])).toEqual({ keys: [undefined, undefined, undefined, undefined], stale: [1, 2, 3, 4] });
    expect(currentKeys(0, rows)).toEqual({ keys: [], stale: [] });
  });

  it('gives the features of the wanted seqs, stored where current, and refuses a seq with no item', () => {
    const planted = { seq: 3, features: { ...read[2]!.features, k: ['w:planted'] } };
    const got = currentFeatures(items, [3, 2, 1], [planted, { seq: 2, features: stale(read[1]!.features) }]);
    expect(got).toEqual([planted, read[1], read[0]]);
    expect(() => currentFeatures(items, [4], [])).toThrow('no evidence item at seq 4 to read features of');
    expect(() => currentFeatures(items, [0], [])).toThrow('no evidence item at seq 0');
    const shuffled = [items[1]!, items[0]!];
    expect(() => currentFeatures(shuffled, [1], [])).toThrow('no evidence item at seq 1');
  });
});
