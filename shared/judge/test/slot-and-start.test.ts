import type { CompletionEvidence, EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * Two ways an observation of the right act on the right thing still does not
 * show the claim, found by probing the judge (not from a corpus case):
 *
 * - another thing in the claim's slot: the same preposition, filled with
 *   something else ("deployed to staging" for "deployed to production");
 * - the act begun, not done: the act's word beside "started", "queued",
 *   "scheduled" or "triggered", and nothing saying it got done.
 *
 * Each held case was supported before; each supported one is its control.
 */
const AT = '2025-03-01T10:00:00.000Z';
const statusOf = (summary: string, observed: string): string => {
  const evidence = [ok('tool_result', 'deploy', observed)].map((item: EvidenceInput, i): CompletionEvidence => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: AT, recordedAt: AT }));
  const claims = reconcileClaims(deriveClaims({ goal: 'g', summary }, { cycle: 1 }), evidence, 'full');
  expect(claims).toHaveLength(1);
  return claims[0]!.status;
};

describe('another thing in the slot the claim names', () => {
  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deployed to staging'],
    ['Deployed the billing service to production.', 'billing service deployed to staging'],
    ['Deployed release 4.2 to production.', 'deploy release 4.2 to staging: done'],
    ['Uploaded the report to the shared drive.', 'report.pdf uploaded to personal drive'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deployed to production'],
    ['Deployed release 4.2 to production.', 'deployed release 4.2 to the production cluster'],
    ['Uploaded the report to the shared drive.', 'report.pdf uploaded to shared drive'],
    ['Sent the invoice to the customer.', 'invoice INV-9 sent to customer billing contact'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('an act begun is not an act done', () => {
  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deploy started'],
    ['Deployed release 4.2 to production.', 'release 4.2 deploy to production started'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deploy to production started 10:02, finished 10:09'],
    ['Started the nightly export.', 'nightly export started'],
    ['Queued the nightly export.', 'nightly export queued'],
    ['Restarted the api service.', 'api service restarted; started at 10:02'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});
