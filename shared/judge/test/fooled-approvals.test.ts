import type { CompletionEvidence, EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { coordinatedItems, readClaim } from '../src/judge-support.js';
import { readText } from '../src/read-text.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

// Each case here was a false approval found by probing the judge: one observation, or two together, "showed" a claim
// they do not show.

const AT = '2025-03-01T10:00:00.000Z';

function judge(summary: string, items: EvidenceInput[]) {
  const evidence: CompletionEvidence[] = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: AT, recordedAt: AT }));
  const [claim] = reconcileClaims(deriveClaims({ goal: 'g', summary }, { cycle: 1 }), evidence, 'full');
  return claim!;
}

describe('the items of a list each need showing', () => {
  it('reads the items an "and" or "or" joins, and those a comma sets off before them', () => {
    const text = 'Deployed release 2.3 to staging, the qa cluster and production or dev.';
    const words = readText(text).words;
    const named = coordinatedItems(words, text).map((g) => g.map((k) => words[k]!.text));
    expect(named).toContainEqual(['staging', 'cluster', 'production']);
    expect(named).toContainEqual(['production', 'dev']);
    // Two acts are two claims, not a list of things.
    expect(coordinatedItems(readText('built and deployed the api').words, 'built and deployed the api')).toEqual([]);
  });

  it('one item shown is not the list: "laptop and SSO access" against SSO alone', () => {
    const held = judge('Revoked laptop and SSO access for the departing contractor.', [ok('tool_result', 'idp', 'revoked SSO access for the departing contractor')]);
    expect(held).toMatchObject({ status: 'unverified', missingFeatures: ['laptop'] });
    const staging = judge('Deployed release 2.3 to staging and production.', [ok('tool_result', 'deploy', 'release 2.3 deployed to staging')]);
    expect(staging).toMatchObject({ status: 'unverified', missingFeatures: ['production'] });
    expect(judge('Deployed release 2.3 to staging, qa and production.', [ok('tool_result', 'deploy', 'release 2.3 deployed to staging and qa')]).missingFeatures).toEqual(['production']);
  });

  it('every item shown, by one observation or by several, is the list', () => {
    expect(judge('Deployed release 2.3 to staging and production.', [ok('tool_result', 'deploy', 'release 2.3 deployed to staging and production')]).status).toBe('supported');
    const together = judge('Deployed release 2.3 to staging, qa and production.', [
      ok('tool_result', 'deploy', 'release 2.3 deployed to staging and qa'),
      ok('tool_result', 'deploy', 'release 2.3 deployed to production'),
    ]);
    expect(together).toMatchObject({ status: 'supported', statusReason: 'shown together by ev-1, ev-2' });
    // A word another wording may stand for ("departing") is still forgiven where each part leaves out only an item.
    const parts = judge('Revoked laptop and SSO access for the departing contractor.', [
      ok('tool_result', 'mdm', 'laptop access revoked for the contractor'),
      ok('tool_result', 'idp', 'revoked SSO access for the contractor'),
    ]);
    expect(parts).toMatchObject({ status: 'supported', statusReason: 'shown together by ev-1, ev-2' });
  });

  it('a part that shows another act is no part of the claim', () => {
    const claim = judge('Emailed the report and the invoice to finance.', [ok('tool_result', 'docs', 'drafted the report for finance'), ok('tool_result', 'mail', 'emailed the invoice to finance')]);
    expect(claim).toMatchObject({ status: 'unverified', missingFeatures: ['report'] });
    const requested = judge('Laptop and SSO access revoked for the contractor.', [
      ok('tool_result', 'mdm', 'laptop access for the contractor: requested'),
      ok('tool_result', 'idp', 'revoked SSO access for the contractor'),
    ]);
    expect(requested.status).toBe('unverified');
  });
});

describe('an act told after its object', () => {
  it('reads "X revoked for Y" and "release 2.3 deployed to production" as the act, not as a word to forgive', () => {
    expect(readClaim('SSO access revoked for the contractor', 'action').action?.word.text).toBe('revoked');
    expect(readClaim('Release 2.3 deployed to production', 'action').action?.word.text).toBe('deployed');
    // A past tense with its object is a statement's verb, and "the test set" is a set.
    expect(readClaim('The announcement thread reached 12.4k impressions', 'action').action).toBeUndefined();
    expect(readClaim('The fraud screen on CLM-20944 flagged nothing', 'action').action).toBeUndefined();
    expect(readClaim('The model reaches 91.4% accuracy on the held-out test set', 'action').action).toBeUndefined();
  });

  it('so an observation of the thing without the act does not show it', () => {
    expect(judge('SSO access revoked for the contractor.', [ok('tool_result', 'idp', 'SSO access for the contractor: requested')]).missingFeatures).toEqual(['revoked']);
    expect(judge('SSO access revoked for the contractor.', [ok('tool_result', 'idp', 'SSO access for the contractor: revoked')]).status).toBe('supported');
  });
});

describe('a name in capitals is no state', () => {
  it('"SSO access for the contractor" does not show "Revoked SSO access"; "state: MERGED" still shows "Merged PR #311"', () => {
    expect(judge('Revoked SSO access for the contractor.', [ok('tool_result', 'idp', 'SSO access for the contractor')])).toMatchObject({ status: 'unverified', missingFeatures: ['Revoked'] });
    expect(judge('Merged PR #311.', [ok('tool_result', 'gh', 'PR #311 state: MERGED')]).status).toBe('supported');
  });
});

describe('what is not a list', () => {
  it('a clause before the list is not one of its items', () => {
    const text = 'Updated the nginx config, restarted api and worker';
    const words = readText(text).words;
    expect(coordinatedItems(words, text).map((g) => g.map((k) => words[k]!.text))).toEqual([['api', 'worker']]);
  });
});

describe('a word the tagger reads as a verb is still a thing the claim names', () => {
  it('"for prod" is not shown by "for staging"', () => {
    expect(judge('Rotated the API keys for prod.', [ok('tool_result', 'vault', 'rotated the API keys for staging')])).toMatchObject({ status: 'unverified', missingFeatures: ['prod'] });
    expect(judge('Rotated the API keys for prod.', [ok('tool_result', 'vault', 'rotated the API keys for prod')]).status).toBe('supported');
  });

  it('"read access" is not shown by "write access"', () => {
    expect(judge('Granted read access to the finance team.', [ok('tool_result', 'iam', 'granted write access to the finance team')])).toMatchObject({ status: 'unverified', missingFeatures: ['read'] });
    expect(judge('Granted read access to the finance team.', [ok('tool_result', 'iam', 'granted read access to the finance team')]).status).toBe('supported');
  });
});

describe('what the observation says beside the thing', () => {
  it('a name joined by hyphens is one thing: "finance-archive" is not "finance-reports"', () => {
    expect(judge('Uploaded report.pdf to bucket finance-reports.', [ok('tool_result', 's3', 'uploaded report.pdf to bucket finance-archive')])).toMatchObject({ status: 'unverified', missingFeatures: ['finance-reports'] });
    expect(judge('Uploaded report.pdf to bucket finance-reports.', [ok('tool_result', 's3', 'uploaded report.pdf to bucket finance-reports')]).status).toBe('supported');
  });

  it('an act done partly is not done: "paid … partially" against "Paid … in full"', () => {
    expect(judge('Paid invoice INV-22 in full.', [ok('tool_result', 'pay', 'paid invoice INV-22 partially ($50 of $200)')]).status).toBe('contradicted');
  });

  it('"with admin rights" is what was granted, not the tool it was done with', () => {
    expect(judge('Created user alice with admin rights.', [ok('tool_result', 'iam', 'created user alice')])).toMatchObject({ status: 'unverified', missingFeatures: ['admin', 'rights'] });
    expect(judge('Created user alice with admin rights.', [ok('tool_result', 'iam', 'created user alice with admin rights')]).status).toBe('supported');
  });

  it('the act as a noun with a removal beside it is not the act: "encryption disabled" for "Encrypted"', () => {
    expect(judge('Encrypted the backups.', [ok('tool_result', 'backup', 'backups: encryption disabled')])).toMatchObject({ status: 'unverified', missingFeatures: ['Encrypted'] });
    expect(judge('Encrypted the backups.', [ok('tool_result', 'backup', 'backups: encryption enabled')]).status).toBe('supported');
  });
});

describe('identifiers, directions and purposes', () => {
  it('a dotted identifier is compared whole: "orders.updated_at" is not "orders.created_at"', () => {
    expect(judge('Added the index on orders.created_at.', [ok('tool_result', 'psql', 'CREATE INDEX on orders.updated_at')]).status).not.toBe('supported');
    expect(judge('Added the index on orders.created_at.', [ok('tool_result', 'psql', 'CREATE INDEX on orders.created_at')]).status).toBe('supported');
    expect(readText('on orders.created_at').words.find((w) => w.text === 'orders.created_at')?.lemma).toBe('orders.created_at');
  });

  it('values moved the other way: "from /data to /tmp" does not show "from /tmp to /data"', () => {
    expect(judge('Moved the files from /tmp to /data.', [ok('tool_result', 'sh', 'moved the files from /data to /tmp')])).toMatchObject({ status: 'unverified', missingFeatures: ['from /tmp', 'to /data'] });
    expect(judge('Moved the files from /tmp to /data.', [ok('tool_result', 'sh', 'moved the files from /tmp to /data')]).status).toBe('supported');
  });

  it('the act as a noun after "for" is what it waits for: "submitted for approval", "queued for deletion"', () => {
    expect(judge('Approved the expense report ER-9.', [ok('tool_result', 'erp', 'expense report ER-9 submitted for approval')]).status).toBe('unverified');
    expect(judge('Deleted the user u-7.', [ok('tool_result', 'admin', 'user u-7 queued for deletion')]).status).toBe('unverified');
    expect(judge('Approved the expense report ER-9.', [ok('tool_result', 'erp', 'expense report ER-9: approval granted')]).status).toBe('supported');
  });
});

describe('"both" names two things', () => {
  it('one of them shown is not both', () => {
    expect(judge('Both tests pass.', [ok('tool_result', 'ci', 'test_a passed')])).toMatchObject({ status: 'unverified', missingFeatures: ['a second test'] });
    expect(judge('Both tests pass.', [ok('tool_result', 'ci', 'test_a passed in 3 s')]).status).toBe('unverified');
    expect(judge('Restarted both replicas.', [ok('tool_result', 'k8s', 'restarted replica db-a')]).status).toBe('unverified');
  });

  it('two named, in one observation or two, or a count of two, is both', () => {
    expect(judge('Both tests pass.', [ok('tool_result', 'ci', 'test_a passed; test_b passed')]).status).toBe('supported');
    expect(judge('Both tests pass.', [ok('tool_result', 'ci', 'test_a passed'), ok('tool_result', 'ci', 'test_b passed')]).status).toBe('supported');
    expect(judge('Both tests pass.', [ok('tool_result', 'ci', '2 tests passed')]).status).toBe('supported');
  });
});

describe('negations and counts written short', () => {
  it('"non-root" negates root: "user: root" contradicts it, "non-root" shows it', () => {
    expect(judge('The container runs as a non-root user.', [ok('tool_result', 'docker', 'container user: root')]).status).toBe('contradicted');
    expect(judge('The container runs as a non-root user.', [ok('tool_result', 'docker', 'container user: app (uid 1000, non-root)')]).status).toBe('supported');
  });

  it('"ready: 4/5" is a partial count, "ready: 5/5" all', () => {
    expect(judge('All pods are ready.', [ok('tool_result', 'k8s', 'pods ready: 4/5')]).status).toBe('contradicted');
    expect(judge('All pods are ready.', [ok('tool_result', 'k8s', 'pods ready: 5/5')]).status).toBe('supported');
  });
});

describe('a later reversal undoes the act', () => {
  it('"status changed: REVERSED", "refund … voided" after the act contradict it; the claim of a revert itself is shown', () => {
    const approved = ok('tool_result', 'mdm', 'match request MR-22817 status APPROVED');
    expect(judge('Approved match request MR-22817.', [approved, ok('tool_result', 'mdm', 'MR-22817 status changed: REVERSED - duplicate')]).status).toBe('contradicted');
    expect(judge('Approved match request MR-22817.', [approved]).status).toBe('supported');
    expect(judge('Refunded order #5520.', [ok('tool_result', 'pay', 'refund for order #5520 issued'), ok('tool_result', 'pay', 'refund for order #5520 voided')]).status).toBe('contradicted');
    expect(judge('Reverted the bad commit abc123.', [ok('tool_result', 'git', 'commit abc123 reverted')]).status).toBe('supported');
  });
});
