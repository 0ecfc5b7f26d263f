import type { ReviewPolicy } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * A question answered in the visible reply: the summary's report of the reply ("Told the coach …") is about the
 * reply, whose own claims are judged; and a claim the policy lets through without evidence is still contradicted
 * when the agent's own recorded evidence gives its thing another value.
 */
const claimsOf = (goal: string, summary: string, visibleAnswer: string) =>
  deriveClaims({ goal, summary, visibleAnswer }, { cycle: 1, policy: 'fast' }).map((c) => [c.text, c.kind, c.materiality]);

describe('a summary that reports the reply to a question', () => {
  const goal = 'A coach asks: when and where is the U12 final?';
  const summary = 'Told the coach the U12 final is on 5 April at 10:30, Pitch 2.';

  it('is an aside when the visible answer states what it says', () => {
    const claims = claimsOf(goal, summary, 'The U12 final is Saturday 5 April, kick-off 10:30, on Pitch 2.');
    expect(claims[0]).toEqual([summary.replace(/\.$/, ''), 'aside', 'low']);
  });

  it('keeps its weight when the visible answer does not say it', () => {
    expect(claimsOf(goal, summary, 'All sorted, see you there!')[0]).toEqual([summary.replace(/\.$/, ''), 'action', 'high']);
  });

  it('keeps its weight when the goal orders an action rather than asks', () => {
    const told = 'Told the customer the refund for order 5520 was issued.';
    expect(claimsOf('Refund order 5520', told, 'The refund for order 5520 was issued.')[0]).toEqual([told.replace(/\.$/, ''), 'action', 'high']);
  });
});

describe('a claim that needs no evidence, beside evidence that gives its thing another value', () => {
  const evidence = [ok('tool_result', 'hotel.kb', 'Policies: check-in from 15:00; check-out by 11:00; late checkout until 13:00 on request')].map((item, i) => ({
    ...item,
    id: `ev-${i + 1}`,
    seq: i + 1,
    observedAt: '2025-06-01T09:00:00.000Z',
    recordedAt: '2025-06-01T09:00:00.000Z',
  }));
  const judged = (answer: string, policy: ReviewPolicy) => {
    const claims = deriveClaims({ goal: 'Guest asks: what time is checkout?', summary: 'Answered.', visibleAnswer: answer }, { cycle: 1, policy });
    return reconcileClaims(claims, evidence, policy).find((c) => c.source === 'assistant_visible_text')!;
  };

  it('is contradicted, naming the value the evidence states', () => {
    const claim = judged('Checkout is at noon.', 'fast');
    expect(claim.requiresEvidence).toBe(false);
    expect(claim.status).toBe('contradicted');
    expect(claim.statusReason).toMatch(/^ev-1 states \d\d:00 where the claim says noon/);
  });

  it('is not, when it is a plan, not a fact', () => {
    const claims = deriveClaims({ goal: 'Book a late checkout for room 305', summary: 'I will ask the desk to move checkout to 14:00.' }, { cycle: 1, policy: 'fast' });
    const [plan] = reconcileClaims(claims, evidence, 'fast');
    expect(plan).toMatchObject({ kind: 'plan', requiresEvidence: false });
    expect(plan?.status).not.toBe('contradicted');
  });

  it('is not, when the evidence states the claimed value', () => {
    expect(judged('Checkout is at 11:00.', 'fast').status).not.toBe('contradicted');
    // Words the evidence lacks leave it unshown, but the claimed value is stated: no rival of it.
    expect(judged('Checkout at the lobby kiosk closes at 11:00 sharp.', 'fast').status).toBe('unverified');
  });
});
