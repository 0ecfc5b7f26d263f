import type { EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { failed, ok } from './evidence-input.js';

/** The judge on the five false-hold patterns of issue 16, and the traps beside each, one claim at a time. */
function judge(claim: string, items: EvidenceInput[]) {
  const evidence = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' }));
  const [reconciled] = reconcileClaims(deriveClaims({ goal: 'g', summary: claim }, { cycle: 1 }).slice(0, 1), evidence, 'full');
  return reconciled!;
}

describe('1: a later success of the same act supersedes a failure', () => {
  it('a failed apply followed by a successful one supports the claim, with the later words', () => {
    const claim = judge('Applied the terraform plan for vpc-main.', [
      failed('tool_result', 'terraform', 'terraform apply vpc-main: Error: timeout while waiting for state'),
      ok('tool_result', 'terraform', 'terraform apply vpc-main: Apply complete! Resources: 3 added, 0 changed, 0 destroyed.'),
    ]);
    expect(claim).toMatchObject({ status: 'supported', evidenceSpans: [{ evidenceId: 'ev-2' }] });
  });

  it('a success followed by a failure of the same act is contradicted by the failure', () => {
    const claim = judge('Applied the terraform plan for vpc-main.', [
      ok('tool_result', 'terraform', 'terraform apply vpc-main: Apply complete! Resources: 3 added, 0 changed, 0 destroyed.'),
      failed('tool_result', 'terraform', 'terraform apply vpc-main: Error: state lock held, apply rolled back'),
    ]);
    expect(claim.status).toBe('contradicted');
    expect(claim.statusReason).toMatch(/^the latest observation of it failed: ev-2/);
  });
});

describe('2: an absence the claim also asserts is support', () => {
  it('"found no vulnerabilities" and "0 vulnerabilities found"', () => {
    expect(judge('The scan found no vulnerabilities in api:1.4.', [ok('tool_result', 'trivy', 'trivy image api:1.4: scan complete, 0 vulnerabilities found')]).status).toBe('supported');
  });

  it('zero counts of other things beside the result are not a negative result', () => {
    expect(judge('Applied the terraform plan for vpc-main.', [ok('tool_result', 'terraform', 'terraform apply vpc-main: Apply complete! Resources: 3 added, 0 changed, 0 destroyed.')]).status).toBe('supported');
  });

  it('a zero count of the claimed thing is still a negative result', () => {
    const claim = judge('Delivered the newsletter to the EU subscribers list.', [ok('delivery_result', 'mailer', 'newsletter to EU subscribers list: 0 delivered')]);
    expect(claim.status).not.toBe('supported');
  });

  it('"no vulnerabilities" is not shown by three of them', () => {
    expect(judge('The scan found no vulnerabilities in api:1.4.', [ok('tool_result', 'trivy', 'trivy image api:1.4: scan complete, 3 high vulnerabilities found')]).status).not.toBe('supported');
  });
});

describe('3: the verb is a soft cue when object, identifiers and outcome are shown', () => {
  it('"merged PR #311" and a record whose state is MERGED', () => {
    expect(judge('Merged PR #311.', [ok('tool_result', 'gh', 'gh pr view 311: state: MERGED')]).status).toBe('supported');
  });

  it('a removal needs a removal\'s outcome: "confirmed" never shows "cancelled"', () => {
    expect(judge('Cancelled appointment V-3320.', [ok('tool_result', 'pms', 'appointment V-3320: confirmed by owner')]).status).not.toBe('supported');
  });

  it('another act in its place does not show it', () => {
    expect(judge('Sent the offer letter to Priya Nair.', [ok('tool_result', 'docs', 'drafted offer letter for Priya Nair')]).status).not.toBe('supported');
    expect(judge('Refunded order #5520 for $42.10.', [ok('tool_result', 'shop', 'looked up order #5520: $42.10')]).status).not.toBe('supported');
  });

  it('a stated state that is not the act\'s outcome keeps it held, whatever a field name spells', () => {
    expect(judge('Published the school closures story (88240).', [ok('tool_result', 'cms', 'story 88240 "Snow closes 40 schools": workflow state SCHEDULED, publish_at 2025-06-12 06:00')]).status).not.toBe('supported');
  });
});

describe('4: other words for the same thing (WordNet)', () => {
  it('a synonym of the act, with the object and identifier shown', () => {
    expect(judge('Repaired pump P-12 at the east station.', [ok('tool_result', 'cmms', 'work order WO-88: fixed pump P-12 at the east station, pressure normal')]).status).toBe('supported');
  });

  it('a word of another kind in the same place is a different thing: staging is not production', () => {
    expect(judge('Flushed the DNS cache on the production resolvers.', [ok('tool_result', 'rndc', 'rndc flush on staging resolvers ns1-stg, ns2-stg: DNS cache flushed')]).status).not.toBe('supported');
  });
});

describe('numbers and polarity', () => {
  it('a number counts the noun beside it: "0 failures" is not shown by "14 failures, 0 passed"', () => {
    const claim = judge('npm test shows 0 failures.', [ok('tool_result', 'npm', 'npm test output: 14 failures, 0 passed')]);
    expect(claim.status).not.toBe('supported');
  });

  it('a bound is shown by a value within it, and not by one outside', () => {
    expect(judge('The API error rate is under 1%.', [ok('tool_result', 'prometheus', 'API error rate (5m): 0.0042')]).status).toBe('supported');
    expect(judge('The API error rate is under 1%.', [ok('tool_result', 'prometheus', 'API error rate (5m): 0.042')]).status).not.toBe('supported');
  });
});
