import type { CompletionEvidence, EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import {
  MAX_EVIDENCE_IDS_PER_CLAIM,
  candidateSeqs,
  candidates,
  describeObservation,
  findCandidates,
  indexEvidence,
  isBlockingFailure,
  judgeCandidates,
  readEvidenceInMemory,
  reconcileClaims,
  requiresEvidence,
  unresolvedFailures,
} from '../src/reconcile-claims.js';
import { extractObservationFeatures } from '../src/observation-features.js';
import { failed, ok } from './evidence-input.js';

const AT = '2025-03-01T10:00:00.000Z';

function asEvidence(items: EvidenceInput[]): CompletionEvidence[] {
  return items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: AT, recordedAt: AT }));
}

function claimsOf(summary: string) {
  return deriveClaims({ goal: 'g', summary }, { cycle: 1 });
}

function reconcile(summary: string, items: EvidenceInput[], policy: 'full' | 'fast' = 'full') {
  return reconcileClaims(claimsOf(summary), asEvidence(items), policy);
}

/** Evidence items whose summaries do not matter: only their index keys (given by hand) and success flags do. */
function keyed(rows: Array<{ keys: string[]; success?: boolean; kind?: EvidenceInput['kind'] }>) {
  const evidence = asEvidence(rows.map((r) => ({ kind: r.kind ?? 'tool_result', toolName: 't', success: r.success ?? true, summary: r.keys.join(' ') })));
  return indexEvidence(
    evidence,
    rows.map((r) => r.keys),
  );
}

describe('indexEvidence', () => {
  it('refuses keys that do not cover every item, naming both counts', () => {
    const evidence = asEvidence([ok('tool_result', 't', 'a'), ok('tool_result', 't', 'b')]);
    expect(() => indexEvidence(evidence, [['w:a']])).toThrow('an evidence index needs the keys of all 2 items, got 1');
    expect(() => indexEvidence(evidence, [['w:a'], ['w:b'], []])).toThrow('an evidence index needs the keys of all 2 items, got 3');
  });

  it('posts each key to the ascending positions of the items that have it', () => {
    const index = keyed([{ keys: ['w:a', 'w:b'] }, { keys: ['w:b'] }, { keys: ['w:a', 'i:x'] }, { keys: [] }]);
    expect([...index.postings.entries()]).toEqual([
      ['w:a', [0, 2]],
      ['w:b', [0, 1]],
      ['i:x', [2]],
    ]);
    expect(index.keys).toEqual([['w:a', 'w:b'], ['w:b'], ['w:a', 'i:x'], []]);
    expect(index.evidence.map((e) => e.id)).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4']);
  });
});

describe('readEvidenceInMemory', () => {
  it('keys the features by seq and indexes by the stored keys where they are current', () => {
    const evidence = asEvidence([ok('tool_result', 'shell', 'built app.js'), ok('tool_result', 'shell', 'tested app.js')]).map((e, i) => ({ ...e, seq: 10 + i }));
    const stored = extractObservationFeatures('anything', 'shell');
    const custom = { ...stored, k: ['w:custom'] };
    const mem = readEvidenceInMemory(evidence, [custom, undefined]);
    expect([...mem.features.keys()]).toEqual([10, 11]);
    expect(mem.features.get(10)).toBe(custom);
    expect(mem.index.keys[0]).toEqual(['w:custom']);
    expect(mem.index.keys[1]).toEqual(extractObservationFeatures('tested app.js', 'shell').k);
    expect(mem.index.postings.get('w:custom')).toEqual([0]);
  });
});

describe('isBlockingFailure', () => {
  const one = (item: EvidenceInput) => asEvidence([item])[0] as CompletionEvidence;

  it('a failed human input always blocks; a successful one never does', () => {
    expect(isBlockingFailure(one(failed('human_input', 'operator', 'the disk was wiped')))).toBe(true);
    expect(isBlockingFailure(one(ok('human_input', 'operator', 'the disk was wiped')))).toBe(false);
    expect(isBlockingFailure(one(failed('tool_result', 'operator', 'the disk was wiped')))).toBe(false);
  });

  it('a failure that says access was denied or the service unavailable blocks', () => {
    expect(isBlockingFailure(one(failed('tool_result', 'api', 'GET /reports -> 403 forbidden')))).toBe(true);
    expect(isBlockingFailure(one(failed('tool_result', 'api', 'payments service unavailable')))).toBe(true);
    expect(isBlockingFailure(one(ok('tool_result', 'api', 'GET /reports -> 403 forbidden')))).toBe(false);
    expect(isBlockingFailure(one(failed('tool_result', 'api', 'awaiting manager approval')))).toBe(true);
  });
});

describe('requiresEvidence', () => {
  it('high claims always need evidence, medium ones under the full policy only, low ones never', () => {
    expect(requiresEvidence('high', 'full')).toBe(true);
    expect(requiresEvidence('high', 'fast')).toBe(true);
    expect(requiresEvidence('medium', 'full')).toBe(true);
    expect(requiresEvidence('medium', 'fast')).toBe(false);
    expect(requiresEvidence('low', 'full')).toBe(false);
    expect(requiresEvidence('low', 'fast')).toBe(false);
  });
});

describe('describeObservation', () => {
  const one = (item: EvidenceInput) => asEvidence([item])[0] as CompletionEvidence;

  it('names the item, its tool (else its kind) and its summary on one line', () => {
    expect(describeObservation(one(ok('tool_result', 'shell', '  built\n\tapp.js   ok  ')))).toBe('ev-1 (shell): built app.js ok');
    const { toolName: _drop, ...noTool } = ok('runtime_observation', 'x', 'pod is running');
    expect(describeObservation(one(noTool as EvidenceInput))).toBe('ev-1 (runtime_observation): pod is running');
  });

  it('clips a long summary to 160 characters ending in an ellipsis', () => {
    const exact = 'a'.repeat(160);
    expect(describeObservation(one(ok('tool_result', 't', exact)))).toBe(`ev-1 (t): ${exact}`);
    const long = 'b'.repeat(161);
    const text = describeObservation(one(ok('tool_result', 't', long)));
    expect(text).toBe(`ev-1 (t): ${'b'.repeat(159)}…`);
  });
});

describe('candidates', () => {
  it('returns every touched item in evidence order when they fit the limit', () => {
    const index = keyed([{ keys: ['w:b'] }, { keys: [] }, { keys: ['w:a'] }, { keys: ['w:a', 'w:b'] }]);
    expect(candidates(index, ['w:a', 'w:b', 'w:none'], 5)).toEqual([0, 2, 3]);
    expect(candidates(index, ['w:a', 'w:b'], 3)).toEqual([0, 2, 3]);
    expect(candidates(index, ['w:none'], 3)).toEqual([]);
  });

  it('keeps the best scored when more are touched, a rare key weighing more than a common one', () => {
    const index = keyed([{ keys: ['w:common'] }, { keys: ['w:rare'] }, { keys: ['w:common'] }, { keys: ['w:common'] }]);
    expect(candidates(index, ['w:common', 'w:rare'], 1)).toEqual([1]);
    expect(candidates(index, ['w:rare', 'w:common'], 2)).toEqual([1, 3]);
  });

  it('weighs an identifier three times a word of the same rarity', () => {
    const index = keyed([{ keys: ['i:x'] }, { keys: ['w:a', 'w:b'] }, { keys: [] }, { keys: [] }]);
    expect(candidates(index, ['i:x', 'w:a', 'w:b'], 1)).toEqual([0]);
    const words = keyed([{ keys: ['w:x'] }, { keys: ['w:a', 'w:b'] }, { keys: [] }, { keys: [] }]);
    expect(candidates(words, ['w:x', 'w:a', 'w:b'], 1)).toEqual([1]);
  });

  it('adds up the weights of every shared key', () => {
    const index = keyed([{ keys: ['w:a', 'w:b', 'w:c'] }, { keys: ['w:a'] }, { keys: ['w:b'] }, { keys: ['w:c'] }, { keys: ['w:a', 'w:b'] }]);
    expect(candidates(index, ['w:a', 'w:b', 'w:c'], 1)).toEqual([0]);
    expect(candidates(index, ['w:a', 'w:b', 'w:c'], 2)).toEqual([0, 4]);
  });

  it('breaks ties by recency, whatever order the items are touched in', () => {
    const index = keyed([{ keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:a'] }]);
    expect(candidates(index, ['w:a'], 2)).toEqual([3, 4]);
    expect(candidates(index, ['w:a'], 1)).toEqual([4]);
    // Touched out of order: the item with key b first, then those with a.
    const mixed = keyed([{ keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:b'] }, { keys: ['w:a'] }, { keys: ['w:b'] }, { keys: ['w:a'] }]);
    expect(candidates(mixed, ['w:b', 'w:a'], 3)).toEqual([2, 4, 5]);
    expect(candidates(mixed, ['w:a', 'w:b'], 2)).toEqual([2, 4]);
  });

  it('keeps the best few when a better item comes after the first ones fill the selection', () => {
    // Scores rise along the evidence: each new item must push out the weakest and sink into its place.
    const rows = [
      { keys: ['w:a'] },
      { keys: ['w:a', 'w:b'] },
      { keys: ['w:a', 'w:b', 'w:c'] },
      { keys: ['w:a', 'w:b', 'w:c', 'w:d'] },
      { keys: ['w:a', 'w:b', 'w:c', 'w:d', 'w:e'] },
      { keys: ['w:z'] },
    ];
    const index = keyed(rows);
    expect(candidates(index, ['w:a', 'w:b', 'w:c', 'w:d', 'w:e'], 2)).toEqual([3, 4]);
    expect(candidates(index, ['w:a', 'w:b', 'w:c', 'w:d', 'w:e'], 3)).toEqual([2, 3, 4]);
    // Falling scores: the first ones stay.
    const falling = keyed([...rows].reverse());
    expect(candidates(falling, ['w:a', 'w:b', 'w:c', 'w:d', 'w:e'], 2)).toEqual([1, 2]);
    expect(candidates(falling, ['w:a', 'w:b', 'w:c', 'w:d', 'w:e'], 3)).toEqual([1, 2, 3]);
  });

  it('a later item with the score of the weakest kept one replaces it, and sinks past older equals', () => {
    const index = keyed([{ keys: ['w:a', 'w:b'] }, { keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:a'] }, { keys: ['w:c'] }]);
    expect(candidates(index, ['w:a', 'w:b'], 2)).toEqual([0, 3]);
    expect(candidates(index, ['w:a', 'w:b'], 3)).toEqual([0, 2, 3]);
  });
});

describe('findCandidates and candidateSeqs', () => {
  it('adds the later observations of a record a candidate names, three per identifier', () => {
    const evidence = asEvidence([
      ok('tool_result', 'jira', 'closed ticket T-100 with order ORD-9'),
      ok('tool_result', 'x', 'ORD-9 shipped'),
      ok('tool_result', 'x', 'ORD-9 delivered'),
      ok('tool_result', 'x', 'ORD-9 invoiced'),
      ok('tool_result', 'x', 'ORD-9 archived'),
    ]);
    const { index } = readEvidenceInMemory(evidence);
    const [found] = findCandidates(claimsOf('Closed ticket T-100.'), index);
    expect(found!.candidates).toEqual([0, 1, 2, 3]);
    expect(found!.claim.text).toBe('Closed ticket T-100');
    expect(found!.reading.read.text).toBe('Closed ticket T-100');
  });

  it('adds no later observation of a record before the candidate', () => {
    const evidence = asEvidence([ok('tool_result', 'x', 'ORD-9 shipped'), ok('tool_result', 'jira', 'closed ticket T-100 with order ORD-9')]);
    const { index } = readEvidenceInMemory(evidence);
    expect(findCandidates(claimsOf('Closed ticket T-100.'), index)[0]!.candidates).toEqual([1]);
  });

  it('adds at most twelve later observations of records in all', () => {
    const ids = ['AA-1', 'BB-2', 'CC-3', 'DD-4', 'EE-5'];
    const items: EvidenceInput[] = [ok('tool_result', 'jira', `closed ticket T-100 with ${ids.join(' ')}`)];
    for (const id of ids) for (let n = 0; n < 4; n++) items.push(ok('tool_result', 'x', `${id} step ${n}`));
    const { index } = readEvidenceInMemory(asEvidence(items));
    const [found] = findCandidates(claimsOf('Closed ticket T-100.'), index);
    // Three per record, whole records until twelve: AA, BB, CC, DD.
    expect(found!.candidates).toEqual([0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15]);
  });

  it('judges at most the forty best candidates of a claim', () => {
    const items: EvidenceInput[] = [];
    for (let n = 0; n < 45; n++) items.push(ok('tool_result', 'x', `rotated keys batch ${n}`));
    const { index } = readEvidenceInMemory(asEvidence(items));
    const [found] = findCandidates(claimsOf('Rotated the keys.'), index);
    expect(found!.candidates).toEqual(Array.from({ length: 40 }, (_, i) => i + 5));
  });

  it('lists the seqs of every claim\'s candidates once, ascending', () => {
    const evidence = asEvidence([ok('tool_result', 'a', 'one'), ok('tool_result', 'a', 'two'), ok('tool_result', 'a', 'three'), ok('tool_result', 'a', 'four')]).map((e, i) => ({ ...e, seq: 100 + i }));
    const { index } = readEvidenceInMemory(evidence);
    const claims = claimsOf('Did it.');
    const found = [
      { claim: claims[0]!, reading: findCandidates(claims, index)[0]!.reading, candidates: [3, 1] },
      { claim: claims[0]!, reading: findCandidates(claims, index)[0]!.reading, candidates: [1, 0] },
    ];
    expect(candidateSeqs(found, index)).toEqual([100, 101, 103]);
  });
});

describe('unresolvedFailures', () => {
  it('a later success sharing an identifier settles a failure', () => {
    expect(unresolvedFailures(keyed([{ keys: ['i:x', 'w:a'], success: false }, { keys: ['i:x'] }])).map((e) => e.id)).toEqual([]);
  });

  it('a later success sharing three words settles a failure; two do not', () => {
    expect(unresolvedFailures(keyed([{ keys: ['w:a', 'w:b', 'w:c'], success: false }, { keys: ['w:a', 'w:b', 'w:c'] }])).map((e) => e.id)).toEqual([]);
    expect(unresolvedFailures(keyed([{ keys: ['w:a', 'w:b', 'w:c'], success: false }, { keys: ['w:a', 'w:b'] }])).map((e) => e.id)).toEqual(['ev-1']);
    // The three words must be shared with one observation, not spread over several.
    expect(unresolvedFailures(keyed([{ keys: ['w:a', 'w:b', 'w:c'], success: false }, { keys: ['w:a', 'w:b'] }, { keys: ['w:c'] }])).map((e) => e.id)).toEqual(['ev-1']);
  });

  it('only a later, decisive success settles a failure', () => {
    // An earlier success.
    expect(unresolvedFailures(keyed([{ keys: ['i:x'] }, { keys: ['i:x'], success: false }])).map((e) => e.id)).toEqual(['ev-2']);
    // A later failure.
    expect(unresolvedFailures(keyed([{ keys: ['i:x'], success: false }, { keys: ['i:x'], success: false }])).map((e) => e.id)).toEqual(['ev-1', 'ev-2']);
    // Later critic feedback.
    expect(unresolvedFailures(keyed([{ keys: ['i:x'], success: false }, { keys: ['i:x'], kind: 'critic_feedback' }])).map((e) => e.id)).toEqual(['ev-1']);
  });

  it('lists no failed critic feedback and no success', () => {
    expect(unresolvedFailures(keyed([{ keys: ['i:x'], success: false, kind: 'critic_feedback' }, { keys: ['i:y'] }])).map((e) => e.id)).toEqual([]);
  });

  it('finds the later success among many items, before and after the failure', () => {
    const rows: Array<{ keys: string[]; success?: boolean }> = [];
    for (let n = 0; n < 9; n++) rows.push({ keys: ['i:x'], success: n !== 4 ? false : true });
    rows.push({ keys: ['i:x'] });
    const out = unresolvedFailures(keyed(rows)).map((e) => e.id);
    expect(out).toEqual([]);
    const before = keyed([{ keys: ['i:x'] }, { keys: ['i:x'] }, { keys: ['i:x'] }, { keys: ['i:x'], success: false }, { keys: ['w:q'] }]);
    expect(unresolvedFailures(before).map((e) => e.id)).toEqual(['ev-4']);
  });

  it('scans at most 500 later items per key', () => {
    const rows: Array<{ keys: string[]; success?: boolean }> = [{ keys: ['w:a', 'w:b', 'w:c'], success: false }];
    for (let n = 0; n < 500; n++) rows.push({ keys: ['w:a'] });
    rows.push({ keys: ['w:a', 'w:b', 'w:c'] });
    // Key a's scan stops before the last item, so it shares only b and c with the failure as far as the scan sees.
    expect(unresolvedFailures(keyed(rows)).map((e) => e.id)).toEqual(['ev-1']);
    rows.splice(1, 1);
    expect(unresolvedFailures(keyed(rows)).map((e) => e.id)).toEqual([]);
  });
});

describe('evidence ids of a claim', () => {
  it('keeps the most recent twenty, ascending', () => {
    const items: EvidenceInput[] = [];
    for (let n = 0; n < 25; n++) items.push(ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive'));
    const [claim] = reconcile('Uploaded invoice-0425.pdf to the shared drive.', items);
    expect(MAX_EVIDENCE_IDS_PER_CLAIM).toBe(20);
    expect(claim!.evidenceIds).toEqual(Array.from({ length: 20 }, (_, i) => `ev-${i + 6}`));
  });
});

describe('judgeCandidates', () => {
  it('refuses to judge a candidate whose features were not read', () => {
    const evidence = asEvidence([ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive')]);
    const { index } = readEvidenceInMemory(evidence);
    const found = findCandidates(claimsOf('Uploaded invoice-0425.pdf to the shared drive.'), index);
    expect(() => judgeCandidates(found, index, new Map(), 'full')).toThrow('the features of evidence ev-1 were not read for the review');
  });
});

describe('verdicts and their reasons', () => {
  const upload = 'Uploaded invoice-0425.pdf to the shared drive.';

  it('a failed observation of the claim contradicts it, quoting the failure', () => {
    const [claim] = reconcile(upload, [failed('delivery_result', 'drive', 'upload of invoice-0425.pdf failed: timeout')]);
    expect(claim).toMatchObject({
      status: 'contradicted',
      statusReason: 'the latest observation of it failed: ev-1 (drive): upload of invoice-0425.pdf failed: timeout',
      missingFeatures: [],
      evidenceIds: ['ev-1'],
      evidenceSpans: [{ evidenceId: 'ev-1', start: 0, end: 42, text: 'upload of invoice-0425.pdf failed: timeout' }],
    });
  });

  it('a successful observation reporting a negative result contradicts the claim, saying what it reports', () => {
    const [claim] = reconcile(upload, [ok('delivery_result', 'drive', 'upload of invoice-0425.pdf to the shared drive failed: timeout')]);
    expect(claim).toMatchObject({
      status: 'contradicted',
      statusReason: 'the latest observation of it reports a negative result (it reports "fail"): ev-1 (drive): upload of invoice-0425.pdf to the shared drive failed: timeout',
      missingFeatures: [],
    });
  });

  it('a denial is a negative result when the observation succeeded, and blocks when it failed', () => {
    const denied = 'upload of invoice-0425.pdf: permission denied for the shared drive';
    expect(reconcile(upload, [ok('delivery_result', 'drive', denied)])[0]).toMatchObject({ status: 'contradicted' });
    expect(reconcile(upload, [failed('delivery_result', 'drive', denied)])[0]).toMatchObject({
      status: 'blocked',
      statusReason: `verification is blocked: ev-1 (drive): ${denied}`,
      missingFeatures: [],
      evidenceSpans: [{ evidenceId: 'ev-1', start: 0, end: 66, text: denied }],
    });
  });

  it('a supported claim quotes the segment that shows it, from its first word to its last', () => {
    const [claim] = reconcile(upload, [ok('tool_result', 'ls', 'listing: nothing'), ok('delivery_result', 'drive', 'step 1 ok; step 2 ok; uploaded invoice-0425.pdf and readme.txt to the shared drive')]);
    expect(claim).toMatchObject({
      status: 'supported',
      statusReason: 'shown by ev-2: "uploaded invoice-0425.pdf and readme.txt to the shared drive"',
      missingFeatures: [],
      evidenceIds: ['ev-2'],
      evidenceSpans: [{ evidenceId: 'ev-2', start: 22, end: 82, text: 'uploaded invoice-0425.pdf and readme.txt to the shared drive' }],
    });
  });

  it('a success after a failure of the claim wins; a failure after a success wins', () => {
    const fail = failed('delivery_result', 'drive', 'upload of invoice-0425.pdf failed: timeout');
    const success = ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive');
    expect(reconcile(upload, [fail, success])[0]).toMatchObject({ status: 'supported', statusReason: 'shown by ev-2: "uploaded invoice-0425.pdf to the shared drive"', evidenceIds: ['ev-1', 'ev-2'] });
    expect(reconcile(upload, [success, fail])[0]).toMatchObject({ status: 'contradicted', evidenceIds: ['ev-1', 'ev-2'] });
    expect(reconcile(upload, [success, fail])[0]!.statusReason).toContain('ev-2 (drive)');
  });

  it('only critic feedback about a claim leaves it unverified, linked to that feedback', () => {
    const [claim] = reconcile(upload, [ok('critic_feedback', 'reviewer', 'uploaded invoice-0425.pdf to the shared drive')]);
    expect(claim).toMatchObject({ status: 'unverified', statusReason: 'only critic feedback mentions it; no observation does', missingFeatures: [], evidenceSpans: [], evidenceIds: ['ev-1'] });
  });

  it('critic feedback beside an observation is passed over', () => {
    const [claim] = reconcile(upload, [ok('critic_feedback', 'reviewer', 'upload of invoice-0425.pdf failed: timeout'), ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive')]);
    expect(claim).toMatchObject({ status: 'supported', evidenceIds: ['ev-2'] });
  });

  it('a claim nothing is about is unsupported when evidence is needed, naming its stated values', () => {
    const [claim] = reconcile('Uploaded invoice-0425.pdf with 88 KB to the shared drive.', [ok('tool_result', 'shell', 'cleaned the cache')]);
    expect(claim).toMatchObject({ status: 'unsupported', statusReason: 'no recorded observation is about this claim', evidenceSpans: [], evidenceIds: [] });
    expect(claim!.missingFeatures).toEqual(['invoice-0425.pdf', '88']);
  });

  it('a claim nothing is about is unverified when the policy needs no evidence for it', () => {
    const [fact] = reconcile('The meeting room holds 12 people.', [ok('tool_result', 'shell', 'cleaned the cache')], 'fast');
    expect(fact).toMatchObject({ status: 'unverified', statusReason: 'no evidence needed by the review policy, and none recorded', missingFeatures: [], evidenceSpans: [] });
  });

  it('the closest observation names what it does not show, once each', () => {
    const [claim] = reconcile('Deployed the api service to production with kubectl.', [
      ok('tool_result', 'kubectl', 'kubectl apply: deployment api configured'),
      ok('tool_result', 'kubectl', 'kubectl apply -f staging.yaml: deployment api configured in namespace staging'),
    ]);
    expect(claim).toMatchObject({ status: 'unverified', evidenceSpans: [] });
    expect(claim!.statusReason).toMatch(/^no successful observation shows it: the closest, ev-\d, does not show "/);
    expect(new Set(claim!.missingFeatures).size).toBe(claim!.missingFeatures.length);
  });
});

describe('a later observation of the record that showed the claim', () => {
  const claim = 'Approved the donor match request MR-22817 for the Lyon clinic.';
  const approved = ok('tool_result', 'api', 'donor match request MR-22817 for the Lyon clinic: status APPROVED');

  it('failing outright contradicts it, though it says little else of the claim', () => {
    const [c] = reconcile(claim, [approved, failed('tool_result', 'api', 'GET MR-22817: timeout')]);
    expect(c).toMatchObject({
      status: 'contradicted',
      statusReason: 'the latest observation of it failed: ev-2 (api): GET MR-22817: timeout',
      evidenceIds: ['ev-1', 'ev-2'],
      evidenceSpans: [{ evidenceId: 'ev-2', start: 0, end: 21, text: 'GET MR-22817: timeout' }],
    });
  });

  it('reporting the record rejected contradicts it', () => {
    const [c] = reconcile(claim, [approved, ok('tool_result', 'api', 'MR-22817: REVERSED - duplicate entry rejected')]);
    expect(c).toMatchObject({
      status: 'contradicted',
      statusReason: 'the latest observation of it reports a negative result (it reports "reverse"): ev-2 (api): MR-22817: REVERSED - duplicate entry rejected',
      evidenceIds: ['ev-1', 'ev-2'],
    });
  });

  it('naming the record in its head counts a failure anywhere after it on the line', () => {
    const [c] = reconcile(claim, [approved, ok('tool_result', 'api', 'sync MR-22817 and MR-1: MR-1 error, MR-22817 rejected')]);
    expect(c).toMatchObject({ status: 'contradicted' });
    expect(c!.statusReason).toContain('(it reports "error")');
  });

  it('reporting a failure of another record, not this one, leaves the claim shown', () => {
    const [c] = reconcile(claim, [approved, ok('tool_result', 'api', 'sync of MR-1 failed; MR-22817 fine')]);
    expect(c).toMatchObject({ status: 'supported', evidenceIds: ['ev-1'] });
  });

  it('before the one that showed it is not the latest word', () => {
    const [c] = reconcile(claim, [failed('tool_result', 'api', 'GET MR-22817: timeout'), approved]);
    expect(c).toMatchObject({ status: 'supported' });
  });

  it('as critic feedback is not the latest word', () => {
    const [c] = reconcile(claim, [approved, { ...failed('critic_feedback', 'reviewer', 'MR-22817: REVERSED - duplicate entry rejected') }]);
    expect(c).toMatchObject({ status: 'supported' });
  });
});

describe('a value claimed of both sides', () => {
  const claim = 'Counted 2,481,907 orders on both sides.';

  it('stated once is not enough', () => {
    const [c] = reconcile(claim, [ok('tool_result', 'psql', 'source: 2,481,907 orders')]);
    expect(c).toMatchObject({
      status: 'unverified',
      statusReason: 'it is claimed of both, but only ev-1 states 2,481,907',
      missingFeatures: ['2,481,907 a second time'],
      evidenceSpans: [],
      evidenceIds: ['ev-1'],
    });
  });

  it('stated by two observations, or twice by one, is shown', () => {
    expect(reconcile(claim, [ok('tool_result', 'psql', 'source: 2,481,907 orders'), ok('tool_result', 'psql', 'target: 2,481,907 orders')])[0]).toMatchObject({ status: 'supported' });
    expect(reconcile(claim, [ok('tool_result', 'psql', 'source: 2,481,907 orders; target: 2,481,907 orders')])[0]).toMatchObject({ status: 'supported' });
  });
});

describe('a coordinated claim shown in parts', () => {
  const claim = 'Resized hero.png and logo.png.';

  it('is shown together by the observations of its parts', () => {
    const [c] = reconcile(claim, [ok('tool_result', 'im', 'resized hero.png to 1200x600'), ok('tool_result', 'im', 'resized logo.png to 200x200')]);
    expect(c).toMatchObject({
      status: 'supported',
      statusReason: 'shown together by ev-1, ev-2',
      missingFeatures: [],
      evidenceIds: ['ev-1', 'ev-2'],
      evidenceSpans: [
        { evidenceId: 'ev-1', start: 0, end: 28, text: 'resized hero.png to 1200x600' },
        { evidenceId: 'ev-2', start: 0, end: 27, text: 'resized logo.png to 200x200' },
      ],
    });
  });

  it('is not shown when no observation shows one of its parts', () => {
    const [c] = reconcile(claim, [ok('tool_result', 'im', 'resized hero.png to 1200x600'), ok('tool_result', 'im', 'resized hero.png to 600x300')]);
    expect(c).toMatchObject({ status: 'unverified', missingFeatures: ['logo.png'] });
  });

  it('is not shown by a part whose observation failed', () => {
    const [c] = reconcile(claim, [ok('tool_result', 'im', 'resized hero.png to 1200x600'), failed('tool_result', 'im', 'resized logo.png to 200x200, then lost it')]);
    expect(c!.status).not.toBe('supported');
  });

  it('is read from the last three observations of its parts only', () => {
    const hero = (n: string) => ok('tool_result', 'im', `resized hero.png ${n}`);
    const logo = ok('tool_result', 'im', 'resized logo.png');
    expect(reconcile(claim, [logo, hero('first'), hero('again'), hero('once more')])[0]).toMatchObject({
      status: 'unverified',
      statusReason: 'no successful observation shows it: the closest, ev-4, does not show "logo.png"',
      missingFeatures: ['logo.png'],
    });
    expect(reconcile(claim, [hero('first'), logo, hero('again'), hero('once more')])[0]).toMatchObject({ status: 'supported', statusReason: 'shown together by ev-2, ev-3, ev-4' });
  });

  it('is not shown by a part that reports a negative result', () => {
    const [c] = reconcile(claim, [ok('tool_result', 'im', 'resized hero.png'), ok('tool_result', 'im', 'resized logo.png: not sharp')]);
    expect(c).toMatchObject({ status: 'unverified', missingFeatures: ['hero.png'] });
  });

  it('is not shown when the observation of one part does not show the act', () => {
    const [c] = reconcile('Resized hero.png, logo.png and icon.png.', [ok('tool_result', 'im', 'resized hero.png and logo.png'), ok('tool_result', 'im', 'icon.png and logo.png at 200x200')]);
    expect(c).toMatchObject({
      status: 'unverified',
      statusReason: 'no successful observation shows it: the closest, ev-1, does not show "icon.png"',
      missingFeatures: ['icon.png'],
      evidenceIds: ['ev-1', 'ev-2'],
    });
  });
});

describe('reconcileClaims', () => {
  it('judges evidence already read into memory as it judges the raw items', () => {
    const evidence = asEvidence([ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive')]);
    const claims = claimsOf('Uploaded invoice-0425.pdf to the shared drive.');
    const raw = reconcileClaims(claims, evidence, 'full');
    expect(raw[0]).toMatchObject({ status: 'supported', evidenceIds: ['ev-1'] });
    expect(reconcileClaims(claims, readEvidenceInMemory(evidence), 'full')).toEqual(raw);
  });

  it('links a later success that settles a failure and an earlier one it follows', () => {
    const [claim] = reconcile('Uploaded invoice-0425.pdf to the shared drive.', [
      ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive'),
      failed('delivery_result', 'drive', 'upload of invoice-0425.pdf failed: timeout'),
      ok('delivery_result', 'drive', 'uploaded invoice-0425.pdf to the shared drive again'),
    ]);
    expect(claim).toMatchObject({ status: 'supported', evidenceIds: ['ev-1', 'ev-2', 'ev-3'] });
  });
});

describe('later observations and second statements that count', () => {
  it('a later observation sharing only a word with a candidate is not a later observation of its record', () => {
    const evidence = asEvidence([ok('tool_result', 'jira', 'closed ticket T-100 with order ORD-9'), ok('tool_result', 'x', 'order shipped')]);
    const { index } = readEvidenceInMemory(evidence);
    expect(findCandidates(claimsOf('Closed ticket T-100.'), index)[0]!.candidates).toEqual([0]);
  });

  it('a value claimed of both sides is not stated a second time by an observation that does not show the claim', () => {
    const [c] = reconcile('Counted 2,481,907 orders on both sides.', [failed('tool_result', 'psql', 'target: count of 2,481,907 orders timed out'), ok('tool_result', 'psql', 'source: 2,481,907 orders')]);
    expect(c).toMatchObject({ status: 'unverified', statusReason: 'it is claimed of both, but only ev-2 states 2,481,907' });
  });
});
