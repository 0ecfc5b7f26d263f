import type { CompletionClaim, CompletionEvidence, MissingEvidence, UnresolvedItem } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { combineVerdicts, planLlmCritic, stricterDecision } from '../src/domain/combine-verdicts.js';
import { ruleCritic, type CritiqueVerdict } from '../src/domain/rule-critic.js';
import { LEDGER_TRANSITIONS, canTransition, isClosed, statusAfterCritique } from '../src/domain/terminal-status.js';
import { MAX_UNRESOLVED_FAILURES, trackUnresolved, unresolvedKey } from '../src/domain/unresolved-items.js';

// The verdict side of a review: the rule floor, how the LLM critic may tighten it, the status it
// leaves, and the loops it keeps open. Each case is the exact answer the caller gets, found
// unpinned by mutation testing (npm run test:mutation).

function claim(over: Partial<CompletionClaim> & Pick<CompletionClaim, 'id' | 'text' | 'status'>): CompletionClaim {
  return {
    source: 'task_complete_summary',
    kind: 'action',
    materiality: 'medium',
    evidenceRequirement: 'a successful observation of it',
    requiresEvidence: true,
    features: [],
    evidenceIds: [],
    missingFeatures: [],
    statusReason: 'no observation mentions it',
    evidenceSpans: [],
    ...over,
  } as CompletionClaim;
}

const verdict = (decision: CritiqueVerdict['decision'], reasons: string[] = [], missingEvidence: MissingEvidence[] = []): CritiqueVerdict => ({ decision, reasons, missingEvidence });
const need = (text: string, claimId?: string): MissingEvidence => ({ ...(claimId ? { claimId } : {}), need: text, features: [] });

describe('the rule critic', () => {
  it('approves when every claim that needs evidence is supported, and says how many under which policy', () => {
    expect(ruleCritic({ claims: [claim({ id: 'c1', text: 'Deployed v2', status: 'supported' }), claim({ id: 'c2', text: 'aside', status: 'unsupported', requiresEvidence: false })], openItems: [], policy: 'full' })).toEqual({
      decision: 'approve',
      reasons: ['every claim that needs evidence under the full policy is supported (1)'],
      missingEvidence: [],
    });
    expect(ruleCritic({ claims: [claim({ id: 'c1', text: 'hello', status: 'unsupported', requiresEvidence: false })], openItems: [], policy: 'fast' })).toEqual({
      decision: 'approve',
      reasons: ['no claim needs evidence under the fast policy'],
      missingEvidence: [],
    });
  });

  it('holds a claim the policy lets through on the agent\'s word when recorded evidence contradicts it', () => {
    const said = claim({ id: 'c1', text: 'Checkout is at noon', status: 'contradicted', requiresEvidence: false, statusReason: 'ev-1 states 11:00 where the claim says noon' });
    const result = ruleCritic({ claims: [said], openItems: [], policy: 'fast' });
    expect(result.decision).toBe('request_changes');
    expect(result.reasons).toEqual(['"Checkout is at noon" is contradicted: ev-1 states 11:00 where the claim says noon. Fix it and record the successful observation, or correct the claim.']);
  });

  it('asks for what each unsupported, contradicted or unverified claim lacks, quoting it', () => {
    const claims = [
      claim({ id: 'c1', text: ' Deployed   v2\nto prod ', status: 'unsupported', evidenceRequirement: 'a deploy log' }),
      claim({ id: 'c2', text: 'Tests pass', status: 'contradicted', statusReason: 'ev-3 failed: 2 tests failing' }),
      claim({ id: 'c3', text: 'Emailed 40 owners', status: 'unverified', statusReason: 'nothing mentions 40', missingFeatures: ['40', 'owners.csv'] }),
      claim({ id: 'c4', text: 'Checked the backup', status: 'unverified', statusReason: 'too vague', evidenceRequirement: 'the backup check output' }),
    ];
    const result = ruleCritic({ claims, openItems: [], policy: 'full' });
    expect(result.decision).toBe('request_changes');
    expect(result.reasons).toEqual([
      '"Deployed v2 to prod" has no supporting evidence: record a deploy log, or remove the claim.',
      '"Tests pass" is contradicted: ev-3 failed: 2 tests failing. Fix it and record the successful observation, or correct the claim.',
      '"Emailed 40 owners" is not verified: nothing mentions 40. Record a successful observation that mentions 40, owners.csv, or drop the unverified detail.',
      '"Checked the backup" is not verified: too vague. Record the backup check output, or drop the unverified detail.',
    ]);
    expect(result.missingEvidence).toEqual([
      { claimId: 'c1', claimText: ' Deployed   v2\nto prod ', features: [], need: 'a deploy log' },
      { claimId: 'c2', claimText: 'Tests pass', features: [], need: 'a successful observation after the failure (2 tests failing), or a corrected claim' },
      { claimId: 'c3', claimText: 'Emailed 40 owners', features: ['40', 'owners.csv'], need: 'a successful observation that mentions 40, owners.csv' },
      { claimId: 'c4', claimText: 'Checked the backup', features: [], need: 'the backup check output' },
    ]);
  });

  it('blocks on a high-materiality claim it cannot verify, keeping the other reasons after it', () => {
    const claims = [
      claim({ id: 'c1', text: 'Tests pass', status: 'unsupported', evidenceRequirement: 'the test output' }),
      claim({ id: 'c2', text: 'Prod is healthy', status: 'blocked', materiality: 'high', statusReason: 'ev-2: access denied to prod' }),
      claim({ id: 'c3', text: 'Staging is healthy', status: 'blocked', materiality: 'medium', statusReason: 'ev-4: timeout' }),
    ];
    const result = ruleCritic({ claims, openItems: [], policy: 'full' });
    expect(result.decision).toBe('blocked');
    expect(result.reasons).toEqual([
      '"Prod is healthy" cannot be verified in this run: ev-2: access denied to prod.',
      '"Tests pass" has no supporting evidence: record the test output, or remove the claim.',
      '"Staging is healthy" cannot be verified in this run: ev-4: timeout.',
    ]);
    expect(result.missingEvidence.map((m) => m.need)).toEqual(['the test output', 'access to verify it (access denied to prod)', 'access to verify it (timeout)']);
    expect(ruleCritic({ claims: [claims[2]!], openItems: [], policy: 'full' }).decision).toBe('request_changes');
  });

  it('holds back open todos and board cards, and clips a long quote to 200 characters', () => {
    const long = `Migrate ${'x'.repeat(300)}`;
    const result = ruleCritic({ claims: [], openItems: [{ text: 'Update the changelog', kind: 'todo' }, { text: long, kind: 'board_card' }], policy: 'full' });
    expect(result.decision).toBe('request_changes');
    expect(result.reasons[0]).toBe('open todo "Update the changelog": finish it and record the evidence, or remove it from the open items.');
    expect(result.reasons[1]).toBe(`open board card "${long.slice(0, 199)}…": finish it and record the evidence, or remove it from the open items.`);
    expect(result.missingEvidence[0]).toEqual({ claimText: 'Update the changelog', need: 'the open todo "Update the changelog" finished (with evidence) or removed', features: [] });
    expect(ruleCritic({ claims: [], openItems: [{ text: 'x'.repeat(200), kind: 'todo' }], policy: 'full' }).reasons[0]).toContain(`"${'x'.repeat(200)}"`);
  });
});

describe('combining the rule floor with the LLM critic', () => {
  it('ranks approve < request_changes < blocked', () => {
    expect(stricterDecision('approve', 'request_changes')).toBe('request_changes');
    expect(stricterDecision('blocked', 'request_changes')).toBe('blocked');
    expect(stricterDecision('request_changes', 'request_changes')).toBe('request_changes');
  });

  it('without an LLM verdict, the rule verdict stands as it is', () => {
    const rule = verdict('request_changes', ['r'], [need('x')]);
    expect(combineVerdicts(rule, undefined)).toEqual({ ...rule, floor: 'request_changes', tightened: false });
  });

  it('a looser LLM verdict is noted and its missing evidence is not asked for', () => {
    const rule = verdict('blocked', ['rule says blocked'], [need('access to prod', 'c1')]);
    expect(combineVerdicts(rule, verdict('approve', ['fine'], [need('ignored')]))).toEqual({
      decision: 'blocked',
      reasons: ['rule says blocked', 'the LLM critic would approve, but the rule floor (blocked) holds'],
      missingEvidence: [need('access to prod', 'c1')],
      floor: 'blocked',
      tightened: false,
    });
    expect(combineVerdicts(rule, verdict('request_changes', ['more'])).reasons.at(-1)).toBe('the LLM critic would request changes, but the rule floor (blocked) holds');
  });

  it('a stricter LLM verdict tightens the decision, adds its reasons and its missing evidence, once each', () => {
    const rule = verdict('request_changes', ['rule reason'], [need('the test output', 'c1')]);
    const llm = verdict('blocked', ['cannot reach prod'], [need('The  test output', 'c1'), need('access to prod', 'c2'), need('access to prod', 'c2')]);
    expect(combineVerdicts(rule, llm)).toEqual({
      decision: 'blocked',
      reasons: ['rule reason', 'LLM critic: cannot reach prod'],
      missingEvidence: [need('the test output', 'c1'), need('access to prod', 'c2')],
      floor: 'request_changes',
      tightened: true,
    });
    // The same need for another claim is asked for again.
    expect(combineVerdicts(verdict('request_changes', [], [need('a log', 'c1')]), verdict('request_changes', [], [need('a log', 'c2'), need('a log')])).missingEvidence).toEqual([
      need('a log', 'c1'),
      need('a log', 'c2'),
      need('a log'),
    ]);
  });

  it('an LLM that agrees to approve adds nothing', () => {
    expect(combineVerdicts(verdict('approve', ['ok']), verdict('approve', ['also ok'], [need('x')]))).toEqual({ decision: 'approve', reasons: ['ok'], missingEvidence: [], floor: 'approve', tightened: false });
  });

  it('plans the LLM critic only where it can change something, and says why not', () => {
    expect(planLlmCritic('fast', 'approve', true)).toEqual({ run: false, reason: 'fast policy: the rule critic decides alone' });
    expect(planLlmCritic('full', 'blocked', true)).toEqual({ run: false, reason: 'the rule critic blocked: no critic can tighten that' });
    expect(planLlmCritic('full', 'approve', false)).toEqual({ run: false, reason: 'no LLM critic configured (Ollama): the rule critic decided alone' });
    expect(planLlmCritic('full', 'request_changes', true)).toEqual({ run: true });
  });
});

describe('terminal discipline', () => {
  it('only open and request_changes ledgers move, never to blocked', () => {
    expect(LEDGER_TRANSITIONS).toEqual({
      open: ['approved', 'request_changes', 'incomplete_verification'],
      request_changes: ['approved', 'request_changes', 'incomplete_verification'],
      approved: [],
      blocked: [],
      incomplete_verification: [],
    });
    expect(canTransition('open', 'blocked')).toBe(false);
    expect(canTransition('request_changes', 'request_changes')).toBe(true);
    expect(['open', 'request_changes', 'approved', 'blocked', 'incomplete_verification'].map((s) => isClosed(s as never))).toEqual([false, false, true, true, true]);
  });

  it('says why a review left the status it did', () => {
    expect(statusAfterCritique('approve', 2, 3)).toEqual({ status: 'approved', completed: true, reason: 'review 2 approved every claim that needs evidence' });
    expect(statusAfterCritique('blocked', 1, 3)).toEqual({ status: 'incomplete_verification', completed: false, reason: 'review 1 found verification blocked' });
    expect(statusAfterCritique('request_changes', 2, 3)).toEqual({ status: 'request_changes', completed: false, reason: 'review 2 of 3 requested changes' });
    expect(statusAfterCritique('request_changes', 3, 3)).toEqual({ status: 'incomplete_verification', completed: false, reason: 'review 3 of 3 still requested changes: the review budget is spent' });
  });
});

describe('loops still open', () => {
  const failure = (seq: number, summary = 'exit 1', toolName?: string): CompletionEvidence => ({
    id: `ev-${seq}`,
    seq,
    kind: 'tool_result',
    ...(toolName ? { toolName } : {}),
    success: false,
    summary,
    observedAt: '2025-03-01T10:00:00.000Z',
    recordedAt: '2025-03-01T10:00:00.000Z',
  });

  it('numbers new items per review, and keeps the id and counts the reviews of an item raised again', () => {
    const first = trackUnresolved({
      prior: [],
      cycle: 1,
      missingEvidence: [{ claimId: 'c1', claimText: 'Deployed v2', need: 'a deploy log', features: [] }],
      failures: [failure(3, 'deploy   failed:\nexit 1', 'kubectl')],
      openItems: [{ text: 'Update the changelog', kind: 'todo' }],
    });
    expect(first).toEqual([
      { kind: 'open_item', text: 'Update the changelog', evidenceIds: [], id: 'un-1-1', firstRaisedCycle: 1, timesRaised: 1 },
      { kind: 'missing_evidence', text: 'a deploy log', claimText: 'Deployed v2', evidenceIds: [], id: 'un-1-2', firstRaisedCycle: 1, timesRaised: 1 },
      { kind: 'failed_observation', text: 'kubectl failed: deploy failed: exit 1', evidenceIds: ['ev-3'], id: 'un-1-3', firstRaisedCycle: 1, timesRaised: 1 },
    ]);
    const second = trackUnresolved({
      prior: first,
      cycle: 2,
      missingEvidence: [{ claimId: 'c7', claimText: 'deployed V2!', need: 'the deploy log, please', features: [] }, { need: 'a screenshot', features: [] }],
      failures: [failure(3, 'deploy failed: exit 1', 'kubectl'), failure(5)],
      openItems: [],
    });
    expect(second).toEqual([
      { kind: 'missing_evidence', text: 'the deploy log, please', claimText: 'deployed V2!', evidenceIds: [], id: 'un-1-2', firstRaisedCycle: 1, timesRaised: 2 },
      { kind: 'missing_evidence', text: 'a screenshot', evidenceIds: [], id: 'un-2-2', firstRaisedCycle: 2, timesRaised: 1 },
      { kind: 'failed_observation', text: 'kubectl failed: deploy failed: exit 1', evidenceIds: ['ev-3'], id: 'un-1-3', firstRaisedCycle: 1, timesRaised: 2 },
      { kind: 'failed_observation', text: 'tool_result failed: exit 1', evidenceIds: ['ev-5'], id: 'un-2-4', firstRaisedCycle: 2, timesRaised: 1 },
    ]);
  });

  it('an open item\'s own request is not asked for twice, and the same loop is listed once', () => {
    const items = trackUnresolved({
      prior: [],
      cycle: 1,
      missingEvidence: [
        { claimText: 'Update the changelog', need: 'the open todo finished', features: [] },
        { claimId: 'c2', claimText: 'Update the changelog', need: 'a changelog diff', features: [] },
        { claimText: 'Fix the build', need: 'a green build', features: [] },
        { claimText: 'fix the build.', need: 'a green build again', features: [] },
      ],
      failures: [failure(2), failure(2)],
      openItems: [{ text: 'Update the changelog', kind: 'todo' }],
    });
    expect(items.map((i) => [i.id, i.kind, i.text])).toEqual([
      ['un-1-1', 'open_item', 'Update the changelog'],
      ['un-1-2', 'missing_evidence', 'a changelog diff'],
      ['un-1-3', 'missing_evidence', 'a green build'],
      ['un-1-4', 'failed_observation', 'tool_result failed: exit 1'],
    ]);
  });

  it('keys a failure by its evidence, an open item and missing evidence by what they are about', () => {
    expect(unresolvedKey({ kind: 'failed_observation', text: 't', evidenceIds: ['ev-4', 'ev-5'] })).toBe('f|ev-4');
    expect(unresolvedKey({ kind: 'failed_observation', text: 'orphan', evidenceIds: [] })).toBe('f|orphan');
    expect(unresolvedKey({ kind: 'open_item', text: 'Fix the build.', evidenceIds: [] })).toBe(unresolvedKey({ kind: 'open_item', text: 'fix the build', evidenceIds: [] }));
    expect(unresolvedKey({ kind: 'missing_evidence', text: 'need', claimText: 'Fix the build', evidenceIds: [] })).not.toBe(unresolvedKey({ kind: 'missing_evidence', text: 'need', evidenceIds: [] }));
  });

  it('carries the 50 most recent failures, clipping each summary to 200 characters', () => {
    const failures = Array.from({ length: 52 }, (_, i) => failure(i + 1, i === 51 ? 'y'.repeat(300) : 'exit 1'));
    const items = trackUnresolved({ prior: [], cycle: 1, missingEvidence: [], failures, openItems: [] });
    expect(MAX_UNRESOLVED_FAILURES).toBe(50);
    expect(items).toHaveLength(50);
    expect(items[0]!.evidenceIds).toEqual(['ev-3']);
    expect(items.at(-1)!.text).toBe(`tool_result failed: ${'y'.repeat(199)}…`);
    const exact = trackUnresolved({ prior: [], cycle: 1, missingEvidence: [], failures: [failure(1, 'z'.repeat(200))], openItems: [] });
    expect(exact[0]!.text).toBe(`tool_result failed: ${'z'.repeat(200)}`);
  });

  it('drops a loop that closed since: an item not raised again is gone', () => {
    const prior: UnresolvedItem[] = [{ id: 'un-1-1', kind: 'open_item', text: 'Old todo', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 }];
    expect(trackUnresolved({ prior, cycle: 2, missingEvidence: [], failures: [], openItems: [] })).toEqual([]);
  });
});
