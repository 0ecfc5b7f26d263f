import type { CompletionEvidence, EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { isBlockingFailure, readEvidenceInMemory, reconcileClaims, unresolvedFailures } from '../src/reconcile-claims.js';
import { failed, ok } from './evidence-input.js';
import { TASK_DOMAINS } from '@vouch/testing';

const AT = '2025-03-01T10:00:00.000Z';

function asEvidence(items: EvidenceInput[]): CompletionEvidence[] {
  return items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: AT, recordedAt: AT }));
}

function reconcile(summary: string, items: EvidenceInput[], policy: 'full' | 'fast' = 'full') {
  return reconcileClaims(deriveClaims({ goal: 'g', summary }, { cycle: 1 }), asEvidence(items), policy);
}

describe('evidence map', () => {
  for (const domain of TASK_DOMAINS) {
    it(`attaches the tool results of a ${domain.name} task to the claims they back`, () => {
      const claims = reconcileClaims(deriveClaims({ goal: domain.goal, summary: domain.summary }, { cycle: 1 }), asEvidence(domain.evidence), 'full');
      for (const claim of claims.filter((c) => c.materiality === 'high')) {
        expect(claim.status, claim.text).toBe('supported');
        expect(claim.evidenceIds.length, claim.text).toBeGreaterThan(0);
      }
    });
  }

  it('maps each claim to the observations that share its details', () => {
    const [changed, flashed, boots] = reconcileClaims(deriveClaims({ goal: TASK_DOMAINS[0]!.goal, summary: TASK_DOMAINS[0]!.summary }, { cycle: 1 }), asEvidence(TASK_DOMAINS[0]!.evidence), 'full');
    expect(changed).toMatchObject({ status: 'supported', evidenceIds: ['ev-1', 'ev-3'], missingFeatures: [] });
    expect(flashed).toMatchObject({ status: 'supported', evidenceIds: ['ev-2', 'ev-3'] });
    // "verified it boots" names no detail of its own: only the boot log is about it.
    expect(boots).toMatchObject({ status: 'supported', evidenceIds: ['ev-3'] });
    expect(boots!.evidenceSpans).toEqual([{ evidenceId: 'ev-3', start: 0, end: expect.any(Number), text: 'board-7 boot log: firmware v2.1.0 started' }]);
  });

  it('does not link evidence that shares only common words', () => {
    const [claim] = reconcile('Updated the release notes for the mobile app.', [ok('tool_result', 'shell', 'updated the package index')]);
    expect(claim).toMatchObject({ status: 'unsupported', evidenceIds: [] });
  });

  it('does not count an observation of the same tool on another subject as support', () => {
    const [deploy] = reconcile('Deployed the api service to production with kubectl.', [ok('tool_result', 'kubectl', 'kubectl apply -f staging.yaml: deployment api configured in namespace staging')]);
    expect(deploy).toMatchObject({ status: 'unverified', missingFeatures: ['service', 'production'], evidenceSpans: [] });
    expect(deploy!.statusReason).toBe('no successful observation shows it: the closest, ev-1, does not show "service", "production"');
    const [restart] = reconcile('Restarted the nginx proxy on the edge host.', [ok('tool_result', 'ssh', 'systemctl restart nginx on build host: active (running)')]);
    expect(restart).toMatchObject({ status: 'unverified', missingFeatures: ['edge', 'proxy'] });
  });

  it('supports the same claims when the observation is about their subject', () => {
    expect(reconcile('Deployed the api service to production with kubectl.', [ok('tool_result', 'kubectl', 'kubectl apply: deployment of api service configured in namespace production')])[0]).toMatchObject({
      status: 'supported',
    });
    expect(reconcile('Restarted the nginx proxy on the edge host.', [ok('tool_result', 'ssh', 'systemctl restart nginx proxy on edge host: active (running)')])[0]).toMatchObject({ status: 'supported' });
  });

  it('links a claim to a tool it names', () => {
    const [claim] = reconcile('Ran rubocop over the project.', [ok('tool_result', 'rubocop', 'inspected the project: no offenses detected')]);
    expect(claim).toMatchObject({ status: 'supported', evidenceIds: ['ev-1'] });
  });
});

describe('success flags and order', () => {
  const summary = 'Uploaded invoice-0425.pdf to the shared drive.';

  it('a failed observation with no later success contradicts the claim', () => {
    const [claim] = reconcile(summary, [failed('delivery_result', 'drive', 'upload of invoice-0425.pdf failed: timeout after 30 s')]);
    expect(claim?.status).toBe('contradicted');
    expect(claim?.statusReason).toContain('ev-1 (drive)');
  });

  it('a later success clears the failure', () => {
    const [claim] = reconcile(summary, [
      failed('delivery_result', 'drive', 'upload of invoice-0425.pdf failed: timeout after 30 s'),
      ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive (88 KB)'),
    ]);
    expect(claim).toMatchObject({ status: 'supported', evidenceIds: ['ev-1', 'ev-2'] });
  });

  it('a failure after the success contradicts it again', () => {
    const [claim] = reconcile(summary, [ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf (88 KB)'), failed('runtime_observation', 'drive', 'invoice-0425.pdf not found on the shared drive')]);
    expect(claim?.status).toBe('contradicted');
  });

  it('a failure that says the observation could not be made blocks verification', () => {
    const [claim] = reconcile(summary, [failed('delivery_result', 'drive', 'upload of invoice-0425.pdf: permission denied for the shared drive')]);
    expect(claim?.status).toBe('blocked');
  });

  it('a failure that waits on a person blocks, however the system words it; one that waits on a thing does not', () => {
    const blocking = (summary: string) => isBlockingFailure({ ...asEvidence([failed('tool_result', 'api', summary)])[0]! });
    expect(blocking('DELETE /donors/D-30018 -> 409: erasure requires DPO review')).toBe(true);
    expect(blocking('POST /jobs/24-1211/release -> 409: job cannot be released to press until the customer approves the current proof (v2)')).toBe(true);
    expect(blocking('REG-55120 status PENDING_CONSENT reason: guardian consent not signed')).toBe(true);
    expect(blocking('order 5520 status PENDING_CONSENT')).toBe(true);
    expect(blocking('POST /jobs/24-1211/release -> 409: job cannot be released until the file upload finishes')).toBe(false);
    expect(blocking('release of 24-1211 failed: proof v2 not found')).toBe(false);
    // A success never blocks, whatever it says.
    expect(isBlockingFailure(asEvidence([ok('tool_result', 'api', 'erasure requires DPO review: review requested')])[0]!)).toBe(false);
  });

  it('critic feedback neither supports nor contradicts', () => {
    const [claim] = reconcile(summary, [ok('critic_feedback', 'reviewer', 'invoice-0425.pdf looks uploaded')]);
    expect(claim).toMatchObject({ status: 'unverified', evidenceIds: ['ev-1'] });
  });

  it('a claim detail no successful observation mentions leaves the claim unverified', () => {
    const [claim] = reconcile('Deployed web-ui v5.2.0 to https://prod.example.org.', [ok('delivery_result', 'deploy', 'web-ui v5.2.0 live on https://staging.example.org')]);
    expect(claim).toMatchObject({ status: 'unverified', missingFeatures: ['https://prod.example.org'] });
  });

  it('a failure on one detail contradicts the claim even when another detail succeeded', () => {
    const [claim] = reconcile('Resized hero.png and logo.png.', [ok('tool_result', 'imagemagick', 'resized hero.png to 1200x600'), failed('tool_result', 'imagemagick', 'logo.png: unsupported colour profile')]);
    expect(claim?.status).toBe('contradicted');
  });

  it('evidence needs depend on the policy', () => {
    const [fact] = reconcile('The meeting room holds 12 people.', [], 'fast');
    expect(fact).toMatchObject({ materiality: 'medium', requiresEvidence: false, status: 'unverified' });
    const [strict] = reconcile('The meeting room holds 12 people.', [], 'full');
    expect(strict).toMatchObject({ requiresEvidence: true, status: 'unsupported', missingFeatures: ['12'] });
  });
});

describe('failed observations', () => {
  it('lists failures that no later success about the same subject followed', () => {
    const evidence = asEvidence([
      failed('tool_result', 'shell', 'npm test: 3 failing in cart.spec.ts'),
      failed('tool_result', 'shell', 'lint: 2 errors in app.ts'),
      ok('tool_result', 'shell', 'npm test: 48 passing, cart.spec.ts green'),
      ok('tool_result', 'shell', 'ls dist'),
    ]);
    expect(unresolvedFailures(readEvidenceInMemory(evidence).index).map((e) => e.id)).toEqual(['ev-2']);
  });
});

// The cost of a review against the evidence count is measured by `npm run bench:ledger`
// (10 … 10,000 items beside raw Postgres reads), not by a timed assertion here.
