import { describe, expect, it } from 'vitest';
import { BOARD_BLIND_4 } from './verify-corpus/cases-blind-4.js';
import { BOARD_BLIND_5 } from './verify-corpus/cases-blind-5.js';
import { BOARD_BLIND } from './verify-corpus/cases-blind.js';
import { evaluateCards } from './verify-corpus/evaluate-cards.js';

/**
 * The built-in verifier on the blind board cards of issue 16 (npm run
 * bench:critic prints the whole matrix). Nothing is verified on the worker's
 * say-so, and a card is verified only when its evidence shows every
 * requirement.
 */
describe('the built-in verifier on the blind board cards', () => {
  const report = evaluateCards(BOARD_BLIND);

  it('is at least 40 cards, each pattern present, every self-certifying card expected held', () => {
    expect(report.cases).toBeGreaterThanOrEqual(40);
    for (const [pattern, tally] of Object.entries(report.patterns)) expect(tally.cases, pattern).toBeGreaterThan(0);
    expect(BOARD_BLIND.filter((c) => c.patterns.includes('self-certifying')).every((c) => c.expect === 'hold')).toBe(true);
  });

  it('verifies no card on the worker\'s own say-so, and no card whose evidence does not show it but one', () => {
    expect(report.selfCertified.map((r) => r.case.id)).toEqual([]);
    // git-c06: the revert was made, and its push to main was rejected in a later item that names neither the commit
    // nor the revert; telling that "on main" needed the push is past the judge (accepted, named in docs/judge.md).
    expect(report.falseVerifications.map((r) => r.case.id)).toEqual(['git-c06']);
  });

  it('holds the three cards issue 16 was filed with', () => {
    for (const id of ['iac-c01', 'git-c01', 'onc-c03']) expect(report.results.find((r) => r.case.id === id)?.got, id).toBe('hold');
  });

  it('on the second blind set verifies no card its evidence does not show, nor any on the worker\'s say-so', () => {
    const second = evaluateCards(BOARD_BLIND_4);
    expect(second.cases).toBeGreaterThanOrEqual(40);
    expect(second.selfCertified.map((r) => r.case.id)).toEqual([]);
    expect(second.falseVerifications.map((r) => r.case.id)).toEqual([]);
  });

  // Blind 5 was measured once at be0b77c, before the judge changed; its one false verification (a mail job only queued)
  // was then fixed, so it is tuned on from here.
  it('on the third blind set verifies no card its evidence does not show, nor any on the worker\'s say-so', () => {
    const third = evaluateCards(BOARD_BLIND_5);
    expect(third.selfCertified.map((r) => r.case.id)).toEqual([]);
    expect(third.falseVerifications.map((r) => r.case.id)).toEqual([]);
  });

  it('has a third blind set of at least 45 cards in at least 10 domains no other set uses, each pattern present, self-certifying cards held', () => {
    expect(BOARD_BLIND_5.length).toBeGreaterThanOrEqual(45);
    const domains = new Set(BOARD_BLIND_5.map((c) => c.domain));
    expect(domains.size).toBeGreaterThanOrEqual(10);
    const others = new Set([...BOARD_BLIND, ...BOARD_BLIND_4].map((c) => c.domain));
    expect([...domains].filter((d) => others.has(d))).toEqual([]);
    const third = evaluateCards(BOARD_BLIND_5);
    for (const [pattern, tally] of Object.entries(third.patterns)) expect(tally.cases, pattern).toBeGreaterThan(0);
    expect(BOARD_BLIND_5.filter((c) => c.patterns.includes('self-certifying')).every((c) => c.expect === 'hold')).toBe(true);
    expect(new Set(BOARD_BLIND_5.map((c) => c.id)).size).toBe(BOARD_BLIND_5.length);
  });
});
