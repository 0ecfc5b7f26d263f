import { describe, expect, it } from 'vitest';
import type { LlmCriticResult } from '../src/domain/ledger-commands.js';
import { LedgerDriver, ok } from './drive-ledger.js';

/** An LLM critic that approves and says which observation entails each claim, in these words. */
const llmQuotes =
  (quotes: Array<{ evidenceId: string; quote: string }>) =>
  (review: { claims: ReadonlyArray<{ id: string; requiresEvidence: boolean }> }): LlmCriticResult => ({
    ran: true,
    model: 'test-critic',
    verdict: {
      decision: 'approve',
      reasons: ['the evidence shows it'],
      missingEvidence: [],
      claims: review.claims.filter((c) => c.requiresEvidence).map((c, i) => ({ claimId: c.id, verdict: 'entails' as const, ...(quotes[i] ?? quotes[0]!) })),
    },
  });

describe('the LLM critic may support a claim, only with a quote the judge checks', () => {
  const evidence = ok('tool_result', 'fleet-ctl', 'fleet na-*: 12/12 servers report build 2.7.1, rollout R-77 done');

  it('a verbatim quote carrying the claim\'s numbers supports what the rules could not see, and says who decided', () => {
    const d = new LedgerDriver();
    d.open('Roll out 2.7.1 to the NA fleet');
    d.record(evidence);
    // Without the LLM, the rules hold the paraphrase.
    const ruleOnly = new LedgerDriver('run-2');
    ruleOnly.open('Roll out 2.7.1 to the NA fleet');
    ruleOnly.record(evidence);
    expect(ruleOnly.propose({ summary: 'Upgraded every NA box to 2.7.1 (12 of 12).' }).decision).toBe('request_changes');

    const outcome = d.propose({ summary: 'Upgraded every NA box to 2.7.1 (12 of 12).', llm: llmQuotes([{ evidenceId: 'ev-1', quote: 'fleet na-*: 12/12 servers report build 2.7.1' }]) });
    expect(outcome).toMatchObject({ decision: 'approve', status: 'approved', completed: true });
    expect(outcome.critics.rule.decision).toBe('request_changes');
    expect(outcome.critics.afterQuotes?.decision).toBe('approve');
    const claim = d.ledger.proposedClaims.find((c) => c.requiresEvidence)!;
    expect(claim).toMatchObject({ status: 'supported', decidedBy: 'llm_quote', evidenceSpans: [{ evidenceId: 'ev-1', start: 0, end: 44, text: 'fleet na-*: 12/12 servers report build 2.7.1' }] });
  });

  it('a quote that is not in the item, or drops the claim\'s version, supports nothing: the floor holds', () => {
    for (const quote of ['all 12 NA servers upgraded to 2.7.1', 'rollout R-77 done']) {
      const d = new LedgerDriver();
      d.open('Roll out 2.7.1 to the NA fleet');
      d.record(evidence);
      const outcome = d.propose({ summary: 'Upgraded every NA box to 2.7.1 (12 of 12).', llm: llmQuotes([{ evidenceId: 'ev-1', quote }]) });
      expect(outcome.decision, quote).toBe('request_changes');
      expect(outcome.critics.afterQuotes, quote).toBeUndefined();
      expect(d.ledger.proposedClaims.every((c) => c.decidedBy === undefined), quote).toBe(true);
    }
  });

  it('a quote never outweighs a failure the rules saw', () => {
    const d = new LedgerDriver();
    d.open('Roll out 2.7.1 to the NA fleet');
    d.record(ok('tool_result', 'fleet-ctl', 'fleet na-*: 12/12 servers report build 2.7.1'), { kind: 'tool_result', toolName: 'fleet-ctl', success: false, summary: 'rollout of 2.7.1 to na-*: rolled back, 12 servers on 2.7.0' });
    const outcome = d.propose({ summary: 'Rolled out 2.7.1 to all 12 NA servers.', llm: llmQuotes([{ evidenceId: 'ev-1', quote: 'fleet na-*: 12/12 servers report build 2.7.1' }]) });
    expect(outcome.decision).toBe('request_changes');
    expect(d.ledger.proposedClaims.find((c) => c.requiresEvidence)).toMatchObject({ status: 'contradicted' });
  });
});
