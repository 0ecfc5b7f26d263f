import { describe, expect, it } from 'vitest';
import { BLIND_3_CASES, BLIND_4_CASES, HELD_OUT_CASES, TUNING_CASES } from './critic-corpus/corpus.js';
import { PATTERNS, type Pattern } from './critic-corpus/corpus-case.js';
import { evaluateCorpus } from './critic-corpus/evaluate-corpus.js';

/**
 * The rule critic on its evaluation corpus (npm run bench:critic prints the
 * full report). A false approval is the error this service exists to
 * prevent: none is allowed, and at most 5 % of the fully supported cases may
 * be held.
 */
describe('the rule critic on its evaluation corpus', () => {
  const corpus = [...TUNING_CASES, ...HELD_OUT_CASES, ...BLIND_3_CASES];

  it('is at least 150 cases in at least 15 domains, each pattern of issues 8 and 16 in both directions', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
    expect(new Set(corpus.map((c) => c.domain)).size).toBeGreaterThanOrEqual(15);
    for (const pattern of Object.keys(PATTERNS) as Pattern[]) {
      if (pattern === 'baseline') continue;
      const cases = corpus.filter((c) => c.patterns.includes(pattern));
      expect(cases.some((c) => c.expect === 'hold'), `${pattern} should hold`).toBe(true);
      expect(cases.some((c) => c.expect === 'approve'), `${pattern} should approve`).toBe(true);
    }
    expect(new Set(corpus.map((c) => c.id)).size).toBe(corpus.length);
  });

  it('approves nothing that should be held, and holds at most 5 % of what should be approved', () => {
    const report = evaluateCorpus(TUNING_CASES);
    expect(report.falseApprovals.map((r) => `${r.case.id}: ${r.case.why}`)).toEqual([]);
    expect(report.falseHoldRate).toBeLessThanOrEqual(0.05);
  });

  it('on the blind set of issue 16: approves nothing that should be held, and ends blocked every run that needs a person', () => {
    const report = evaluateCorpus(BLIND_3_CASES);
    expect(report.cases).toBeGreaterThanOrEqual(80);
    expect(report.domains).toBeGreaterThanOrEqual(10);
    expect(report.falseApprovals.map((r) => `${r.case.id}: ${r.case.why}`)).toEqual([]);
    expect(report.blocked.missed.map((r) => r.case.id)).toEqual([]);
    expect(report.blocked.expected).toBeGreaterThan(0);
  });

  it('on the second blind set: approves nothing that should be held', () => {
    const report = evaluateCorpus(BLIND_4_CASES);
    expect(report.cases).toBeGreaterThanOrEqual(80);
    expect(report.falseApprovals.map((r) => `${r.case.id}: ${r.case.why}`)).toEqual([]);
  });
});
