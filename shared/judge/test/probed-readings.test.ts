import type { CompletionEvidence, EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { isOpposite } from '../src/judge-support.js';
import { readText } from '../src/read-text.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * Ways an observation of the right act on the right thing still does not
 * show the claim, found by probing the judge with claims a user would make
 * (not from a corpus case):
 *
 * - another thing in the claim's slot: the same preposition, filled with
 *   something else ("deployed to staging" for "deployed to production");
 * - the act not done: after a modal ("will deploy", "would delete"), as an
 *   infinitive ("ready to publish"), in a rehearsal ("dry run"), or beside a
 *   word saying it began, waits, was asked for, planned, tried or drafted
 *   ("deploy started", "refund requested", "awaiting merge"), with nothing
 *   saying it got done.
 *
 * - the wrong way round ("from staging to prod" for "from prod to staging"),
 *   another word in a verb's place ("write access" for "read access"),
 *   another removal ("disabled" for "removed");
 * - opposites: "unlocked", "disabled", "deactivated", "turned on" for "off",
 *   "scaled down" for "up"; a problem claimed absent and counted ("no
 *   errors" against "errors: 3"); a failure count anywhere against "all";
 * - a value that only rounds to a bound ("89.5%" for "above 90%"), an HTTP
 *   error status ("returned 503"), a degraded state, a remainder ("12
 *   remain", "2 still open") against "all" or a removal.
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

describe('an act begun, planned, asked for or rehearsed is not an act done', () => {
  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deploy started'],
    ['Deployed release 4.2 to production.', 'release 4.2 deploy to production started'],
    ['Deployed release 4.2.', 'will deploy release 4.2 tomorrow'],
    ['Deployed release 4.2.', 'deploy of release 4.2 planned for Friday'],
    ['Deleted the old backups.', 'dry run: would delete 12 old backups'],
    ['Fixed the login bug.', 'attempted fix for the login bug'],
    ['Refunded order #5520.', 'refund requested for order #5520'],
    ['Published the blog post.', 'blog post ready to publish'],
    ['Merged PR #311.', 'PR #311 approved, awaiting merge'],
    ['Upgraded the cluster to 1.29.', 'cluster upgrade to 1.29 in progress'],
    ['Emailed the report to the board.', 'report email drafted for the board'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Deployed release 4.2 to production.', 'release 4.2 deploy to production started 10:02, finished 10:09'],
    ['Started the nightly export.', 'nightly export started'],
    ['Queued the nightly export.', 'nightly export queued'],
    ['Restarted the api service.', 'api service restarted; started at 10:02'],
    ['Replied to all 14 open tickets in the billing queue.', 'billing queue: replied to 14 of 14 open tickets, 0 unanswered'],
    ['Requested a refund for order #5520.', 'refund requested for order #5520'],
    ['Translated the chapter "Getting Started" into German.', 'translated chapter "Getting Started" into German'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('the wrong way round, another word in its place, another removal', () => {
  it.each([
    ['Copied the data from prod to staging.', 'copied data from staging to prod'],
    ['Granted Dana read access.', 'granted Dana write access'],
    ['Removed the feature flag.', 'feature flag disabled'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Copied the data from prod to staging.', 'copied data from prod to staging'],
    ['Migrated users from MySQL to Postgres.', 'migrated users from mysql to postgres: 1,204 rows'],
    ['Moved the files into the archive.', 'files moved to archive'],
    ['Granted Dana read access.', 'granted Dana read access'],
    ['Removed the feature flag.', 'feature flag removed'],
    ['Deleted the temp files.', 'temp files removed'],
    ['Revoked the API token.', 'API token revoked'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('bounds, error statuses, degraded states and remainders', () => {
  it.each([
    ['Coverage is above 90%.', 'coverage: 89.5%'],
    ['Coverage is above 90%.', 'coverage: 90%'],
    ['Verified the site is up.', 'site returned 503'],
    ['The server is healthy.', 'server health check: degraded'],
    ['Deleted all stale branches.', 'deleted 3 stale branches, 12 remain'],
    ['Closed all open incidents.', 'closed 4 incidents; 2 still open'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).not.toBe('supported');
  });

  it.each([
    ['Coverage is above 90%.', 'coverage: 91.2%'],
    ['Error rate is under 1%.', 'error rate 0.4%'],
    ['Verified the site is up.', 'site returned 200'],
    ['The server is healthy.', 'server health check: ok'],
    ['Deleted all stale branches.', 'deleted 15 stale branches, 0 remain'],
    ['Deleted 40 stale branches.', 'deleted 40 stale branches'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('opposites, problems claimed absent, failures against all', () => {
  it.each([
    ['No errors in the last 24 hours.', 'errors in the last 24 hours: 3'],
    ['The page loads without errors.', 'page load: 2 console errors'],
    ['Uploaded all 12 photos.', 'uploaded 12 photos (3 failed to process)'],
    ['Turned off debug logging.', 'debug logging turned on'],
    ['Scaled up the web tier.', 'web tier scaled down'],
    ['Locked the account.', 'account unlocked'],
    ['Enabled MFA for the admins.', 'MFA disabled for admins'],
    ['Activated the license.', 'license deactivated'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).not.toBe('supported');
  });

  it.each([
    ['No errors in the last 24 hours.', 'no errors in the last 24 hours'],
    ['The page loads without errors.', 'page load: 0 console errors'],
    ['Uploaded all 12 photos.', 'uploaded 12 photos (0 failed)'],
    ['Turned off debug logging.', 'debug logging turned off'],
    ['Scaled up the web tier.', 'web tier scaled up to 6 nodes'],
    ['Locked the account.', 'account locked'],
    ['Enabled MFA for the admins.', 'MFA enabled for admins'],
    ['Activated the license.', 'license activated'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });

  it('pairs a word with its opposite by prefix, on a stem of four letters or more', () => {
    expect([isOpposite('lock', 'unlock'), isOpposite('activate', 'deactivate'), isOpposite('enable', 'disable'), isOpposite('able', 'unable'), isOpposite('active', 'inactive')]).toEqual([true, true, true, true, true]);
    expect([isOpposite('do', 'undo'), isOpposite('lock', 'lock'), isOpposite('lock', 'block'), isOpposite('restart', 'start'), isOpposite('enable', 'enabled')]).toEqual([false, false, false, false, false]);
  });
});

describe('a version that writes its minor part names that release', () => {
  it.each([
    ['Deployed v2.0 to production.', 'deploy complete: api v2.0.1 live in production'],
    ['Upgraded the API to 3.8.', 'api upgraded to 3.8.2'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Deployed v2.0 to production.', 'deploy complete: api v2.0.0 live in production'],
    ['Upgraded the database to Postgres 15.', 'database upgraded to postgres 15.4'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('a two-letter name in the claim word\'s place', () => {
  it.each([
    ['Created the bucket in the eu region.', 'bucket created in us region'],
    ['Created the eu bucket.', 'created the us bucket'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('unverified');
  });

  it.each([
    ['Created the bucket in the eu region.', 'bucket created in eu region'],
    ['Your fare includes one checked bag of up to 23 kg.', 'fare class K: checked baggage allowance 1 bag, 23 kg'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });

  it('reads a pronoun before a noun as a name, unless it is possessive or a verb\'s object', () => {
    const pos = (text: string, word: string) => readText(text).words.find((w) => w.text === word)?.pos;
    expect(pos('bucket created in us region', 'us')).toBe('PROPN');
    expect(pos('moved to the IT team', 'IT')).toBe('PROPN');
    expect(pos('moved to the IT team', 'team')).toBe('NOUN');
    expect(pos('Us region: ok', 'Us')).toBe('PROPN');
    expect(pos('Your fare includes one bag', 'Your')).toBe('PRON');
    expect(pos('granted us access', 'us')).toBe('PRON');
    expect(pos('it works', 'it')).toBe('PRON');
  });
});

describe('a bound against every measurement in its unit', () => {
  it.each([
    ['The API responds in under 100 ms.', 'API p50 80 ms, p99 450 ms'],
    ['The upload finished in under 2 s.', 'upload finished: part 1 in 1.2 s, part 2 in 3.4 s'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).not.toBe('supported');
  });

  it.each([
    ['The API responds in under 100 ms.', 'API p50 80 ms, p99 95 ms'],
    ['The upload finished in under 2 s.', 'upload finished: part 1 in 1.2 s, part 2 in 1.4 s'],
    ['The API responds in under 100 ms.', 'API p99 95 ms over 1200 requests'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });
});

describe('nobody, no one: a negated subject against a count', () => {
  it.each([
    ['Nobody has access to the old bucket.', 'old bucket access: 2 users'],
    ['No one has access to the old bucket.', 'old bucket access: 2 users'],
  ])('holds "%s" against "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).not.toBe('supported');
  });

  it.each([
    ['Nobody has access to the old bucket.', 'old bucket access: none'],
    ['No one has access to the old bucket.', 'old bucket access: none'],
  ])('supports "%s" by "%s"', (claim, observed) => {
    expect(statusOf(claim, observed)).toBe('supported');
  });

  it('reads "no one" as a pronoun that negates what follows, and "one" elsewhere as a count', () => {
    const words = readText('No one has access').words;
    expect(words.find((w) => w.text === 'one')).toMatchObject({ pos: 'PRON' });
    expect(words.find((w) => w.text === 'one')?.value).toBeUndefined();
    expect(words.find((w) => w.text === 'access')?.neg).toBe(true);
    expect(readText('one bag').words[0]?.value).toEqual({ k: 'num', n: 1, step: 1, plain: true });
    expect(readText('every one of them').words[1]?.value).toBeUndefined();
  });
});
