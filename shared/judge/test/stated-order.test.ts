import type { EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { failed, ok } from './evidence-input.js';

/**
 * Three readings the blind sets found the judge approving: a pair of numbers read in either order, one value claimed
 * of two things shown of one, and a request echoed in the head read as its own outcome.
 */
function judge(claim: string, items: EvidenceInput[]) {
  const evidence = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' }));
  const [reconciled] = reconcileClaims(deriveClaims({ goal: 'g', summary: claim }, { cycle: 1 }).slice(0, 1), evidence, 'full');
  return reconciled!;
}

describe('a pair of numbers written as one ("3-1") is stated in its order', () => {
  it('home 1, away 3 does not show a 3-1 score, and says the order is missing', () => {
    const claim = judge('The M-0417 score is 3-1.', [ok('tool_result', 'league', 'M-0417 score: home 1 away 3 FINAL')]);
    expect(claim.status).toBe('unverified');
    expect(claim.missingFeatures).toEqual(['3-1 in that order']);
  });

  it('the same numbers in the claimed order show it', () => {
    expect(judge('The M-0417 score is 3-1.', [ok('tool_result', 'league', 'M-0417 score: home 3 away 1 FINAL')]).status).toBe('supported');
    expect(judge('The M-0417 score is 1-3.', [ok('tool_result', 'league', 'M-0417 score: home 1 away 3 FINAL')]).status).toBe('supported');
    expect(judge('The M-0417 score is 3-1.', [ok('tool_result', 'league', 'M-0417 score: 3-1 FINAL')]).status).toBe('supported');
  });

  it('a range in its order ("2-3 business days") is still shown', () => {
    expect(judge('Order 5520 ships in 2-3 business days.', [ok('tool_result', 'shop', 'order 5520 shipping estimate: 2-3 business days')]).status).toBe('supported');
  });
});

describe('one value claimed of both sides needs stating twice', () => {
  const postgres = ok('tool_result', 'psql', 'select count(*) from orders; count 2481907');

  it('two counts that differ do not show "on both sides"', () => {
    const claim = judge('2,481,907 orders on both sides.', [postgres, ok('tool_result', 'snowflake', 'select count(*) from raw.orders; COUNT(*) 2481097')]);
    expect(claim).toMatchObject({ status: 'unverified', statusReason: 'it is claimed of both, but only ev-1 states 2,481,907', missingFeatures: ['2,481,907 a second time'] });
  });

  it('the same count from both sides shows it', () => {
    expect(judge('2,481,907 orders on both sides.', [postgres, ok('tool_result', 'snowflake', 'select count(*) from raw.orders; COUNT(*) 2481907')]).status).toBe('supported');
  });

  it('without "both", one side stating the count is enough', () => {
    expect(judge('2,481,907 orders.', [postgres, ok('tool_result', 'snowflake', 'select count(*) from raw.orders; COUNT(*) 2481097')]).status).toBe('supported');
  });
});

describe('a request echoed in the head is not its own outcome', () => {
  it('"enrol …: waitlisted" does not show "enrolled"', () => {
    expect(judge('Enrolled Tomas Berg in CHEM-202.', [ok('tool_result', 'sis', 'enrol Tomas Berg in CHEM-202: waitlisted, section full')]).status).not.toBe('supported');
  });

  it('a request echoed with its own failure is still about the act: the failure contradicts it', () => {
    const claim = judge('Sent the newsletter to list-4411 (1,932 recipients).', [failed('delivery_result', 'mailer', 'send to list-4411 failed: SMTP 451 try again later')]);
    expect(claim.status).toBe('contradicted');
    expect(claim.evidenceIds).toEqual(['ev-1']);
  });

  it('"enrol …: enrolled" and "enrol …: done" show it', () => {
    expect(judge('Enrolled Tomas Berg in CHEM-202.', [ok('tool_result', 'sis', 'enrol Tomas Berg in CHEM-202: enrolled, seat 14')]).status).toBe('supported');
    expect(judge('Enrolled Tomas Berg in CHEM-202.', [ok('tool_result', 'sis', 'enrol Tomas Berg in CHEM-202: done')]).status).toBe('supported');
  });
});
