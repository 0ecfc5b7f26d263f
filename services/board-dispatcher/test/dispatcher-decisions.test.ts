import { describe, expect, it } from 'vitest';
import { leaderStatus, noLeaderDiagnostic, type LeaseReading } from '../src/domain/leader-status.js';
import { mergeVerdicts, verifierPlan } from '../src/domain/verifier-verdict.js';
import { ruleVerify } from '../src/domain/verify-card.js';
import { BoardDriver } from './drive-board.js';

// The decisions board.diagnostics and board.reviewCard (decision auto) make, without Postgres or a model.

const TTL = 10_000;
const NOW = new Date('2026-01-02T03:04:05.000Z');
const lease = (over: Partial<LeaseReading>): LeaseReading => ({ holder: 'host:1:abc', epoch: 7, expiresAt: new Date(NOW.getTime() + 5_000), now: NOW, ...over });

describe('the no_leader diagnostic and the leader status', () => {
  it('a held lease is healthy and raises nothing', () => {
    expect(leaderStatus(lease({}))).toEqual({ holder: 'host:1:abc', epoch: 7, healthy: true, leaderlessSince: null });
    expect(noLeaderDiagnostic(lease({}), TTL)).toBeUndefined();
  });

  it('a lease that ran out is unhealthy at once, but no_leader waits for two TTLs', () => {
    const ranOut = new Date(NOW.getTime() - 2 * TTL + 1);
    expect(leaderStatus(lease({ expiresAt: ranOut }))).toEqual({ holder: 'host:1:abc', epoch: 7, healthy: false, leaderlessSince: ranOut.toISOString() });
    expect(noLeaderDiagnostic(lease({ expiresAt: ranOut }), TTL)).toBeUndefined();
    const longAgo = new Date(NOW.getTime() - 2 * TTL);
    expect(noLeaderDiagnostic(lease({ expiresAt: longAgo }), TTL)).toEqual({
      kind: 'no_leader',
      subject: 'dispatcher',
      severity: 'error',
      message: `no board-dispatcher has held the dispatcher lease since ${longAgo.toISOString()}: nothing is being dispatched`,
      suggestedAction: 'start a board-dispatcher replica (or check that the running ones reach Postgres); cards stay ready until one takes the lease',
      details: { lastHolder: 'host:1:abc', epoch: 7, leaderlessSeconds: 20 },
      firstSeen: longAgo.toISOString(),
      lastSeen: NOW.toISOString(),
      count: 1,
      resolvedAt: null,
    });
  });

  it('a lease with no holder is no leader, however far off its expiry; one never taken dates from now', () => {
    expect(leaderStatus(lease({ holder: null })).healthy).toBe(false);
    const never = lease({ holder: null, epoch: 0, expiresAt: new Date(0) });
    expect(leaderStatus(never)).toEqual({ holder: null, epoch: 0, healthy: false, leaderlessSince: NOW.toISOString() });
    expect(noLeaderDiagnostic(never, TTL)).toMatchObject({ firstSeen: NOW.toISOString(), details: { lastHolder: null, epoch: 0, leaderlessSeconds: Math.round(NOW.getTime() / 1000) } });
  });
});

function submittedCard(requirement: string, evidence: string) {
  const b = new BoardDriver();
  b.create();
  b.add([{ title: 'Do the thing', assignee: 'worker-1', evidenceRequirements: [requirement] }]);
  b.dispatch();
  const token = b.claim('c-1');
  b.submit('c-1', token, 'done', [{ kind: 'tool_result', summary: evidence, ref: 'call-1' }]);
  return b.card('c-1');
}

const shown = () => submittedCard('the dump file size', 'dump file size 2.3 GB');
// Nothing contradicts the requirement; the rules alone cannot see it.
const unseen = () => submittedCard('all 12 NA game servers upgraded to 2.7.1', 'fleetctl status na-*: 12/12 NA hosts report build 2.7.1');

describe('the built-in verifier: when the model is asked, and how its opinion merges with the rules', () => {
  it('asks the model when the rules approve, or when a quote could show what they could not see; otherwise says why not', () => {
    expect(verifierPlan(ruleVerify(shown()), false)).toEqual({ ask: true });
    const rule = ruleVerify(unseen());
    expect(rule.decision).toBe('request_changes');
    expect(verifierPlan(rule, true)).toEqual({ ask: true });
    expect(verifierPlan(rule, false)).toEqual({ ask: false, opinion: { ran: false, note: 'OLLAMA_HOST is not set: the rule check decided alone' } });
    const contradicted = { ...rule, judgement: { ...rule.judgement, requirements: rule.judgement.requirements.map((r) => ({ ...r, status: 'contradicted' as const })) } };
    expect(verifierPlan(contradicted, true)).toEqual({
      ask: false,
      opinion: { ran: false, note: 'the evidence contradicts a requirement: the LLM was not asked (no quote outweighs a contradiction)' },
    });
  });

  it('approves only when the rules approve and the model does not object', () => {
    const card = shown();
    const rule = ruleVerify(card);
    expect(mergeVerdicts(card, rule, { ran: true, model: 'm', decision: 'approve', reasons: ['fine'] })).toEqual({
      decision: 'approve',
      missing: [],
      reasons: [...rule.reasons, 'LLM verifier: fine'],
      verifier: { rule: { decision: 'approve', reasons: rule.reasons }, llm: { ran: true, model: 'm', decision: 'approve' } },
    });
    const off = mergeVerdicts(card, rule, { ran: false, note: 'OLLAMA_HOST is not set: the rule check decided alone' });
    expect(off).toMatchObject({ decision: 'approve', reasons: [...rule.reasons, 'OLLAMA_HOST is not set: the rule check decided alone'], verifier: { llm: { ran: false, note: 'OLLAMA_HOST is not set: the rule check decided alone' } } });
  });

  it("the model's objection asks for changes: its missing items, else its reasons, else a default", () => {
    const card = shown();
    const rule = ruleVerify(card);
    expect(mergeVerdicts(card, rule, { ran: true, decision: 'request_changes', reasons: ['no size unit'], missing: ['the size in bytes'] })).toMatchObject({ decision: 'request_changes', missing: ['the size in bytes'] });
    expect(mergeVerdicts(card, rule, { ran: true, decision: 'request_changes', reasons: ['no size unit'], missing: [] })).toMatchObject({ decision: 'request_changes', missing: ['no size unit'] });
    expect(mergeVerdicts(card, rule, { ran: true, decision: 'request_changes' })).toMatchObject({ decision: 'request_changes', missing: ['the verifier model asked for more evidence'] });
  });

  it("the model's approval never outweighs the rules: what they miss stays missing without a checked quote", () => {
    const card = unseen();
    const rule = ruleVerify(card);
    const merged = mergeVerdicts(card, rule, { ran: true, decision: 'approve', reasons: ['looks done'] });
    expect(merged).toMatchObject({ decision: 'request_changes', missing: rule.missing });
    expect(merged.verifier).not.toHaveProperty('afterQuotes');
    expect(merged).not.toHaveProperty('quotes');
  });

  it("a quote the judge accepts shows the requirement: the verdict after quotes is recorded, and the quotes go to the review", () => {
    const card = unseen();
    const rule = ruleVerify(card);
    const quotes = [{ requirementId: 'r1', shown: true, evidenceId: card.evidence[0]!.id, quote: '12/12 NA hosts report build 2.7.1' }];
    const merged = mergeVerdicts(card, rule, { ran: true, decision: 'approve', reasons: ['the fleet status shows it'], requirements: quotes });
    expect(merged).toMatchObject({ decision: 'approve', missing: [], quotes, verifier: { rule: { decision: 'request_changes' }, afterQuotes: { decision: 'approve' }, llm: { ran: true, decision: 'approve' } } });
    expect(merged.reasons).toContain(`requirement r1 (all 12 NA game servers upgraded to 2.7.1) is shown by ${card.evidence[0]!.id}, quoted by the LLM verifier and checked by the judge: "12/12 NA hosts report build 2.7.1"`);
    expect(merged.reasons.at(-1)).toBe('LLM verifier: the fleet status shows it');
  });
});
