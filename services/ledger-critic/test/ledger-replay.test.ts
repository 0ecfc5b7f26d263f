import { EVIDENCE_KINDS, VouchError, type EvidenceInput } from '@vouch/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concludeCompletionReview, reviewInMemory, reviewStanding } from '../src/domain/ledger-commands.js';
import { parseLedgerEvent, type LedgerEvent } from '../src/domain/ledger-events.js';
import { LedgerStreamError, applyEvent, replayLedger, toLedgerSnapshot, type LedgerState } from '../src/domain/replay-ledger.js';
import { canTransition } from '../src/domain/terminal-status.js';
import { deepFreeze } from '../src/ledger-cache.js';
import { LedgerDriver, llmSays, ok } from './drive-ledger.js';
import { TASK_DOMAINS } from '@vouch/testing';

function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

describe('the ledger serializes and replays', () => {
  it('rebuilds the snapshot exactly from its stored events', () => {
    const domain = TASK_DOMAINS[1]!;
    const run = new LedgerDriver('deploy-42');
    run.open(domain.goal);
    run.record(domain.evidence[0]!);
    run.propose({ summary: domain.summary });
    run.record(domain.evidence[1]!);
    run.propose({ summary: domain.summary });

    const stored = roundTrip(run.events).map(parseLedgerEvent);
    expect(stored.map((e) => [e.seq, e.type])).toEqual([
      [1, 'ledger_opened'],
      [2, 'evidence_recorded'],
      [3, 'completion_proposed'],
      [4, 'critique_recorded'],
      [5, 'status_changed'],
      [6, 'evidence_recorded'],
      [7, 'completion_proposed'],
      [8, 'critique_recorded'],
      [9, 'status_changed'],
    ]);
    expect(replayLedger(stored)).toStrictEqual(run.state);
    expect(roundTrip(run.state)).toStrictEqual(run.state);
    expect(run.ledger).toMatchObject({ status: 'approved', completed: true, version: 9 });
    expect(toLedgerSnapshot(run.ledger)).not.toHaveProperty('packets');
  });

  it('refuses a stream with a gap, a second opening or a transition outside the table', () => {
    const run = new LedgerDriver();
    run.open('Rename the files');
    run.record(ok('tool_result', 'shell', 'renamed a.txt'));
    const [opened, recorded] = run.events as [LedgerEvent, LedgerEvent];
    expect(() => replayLedger([opened, { ...recorded, seq: 3 }])).toThrow(LedgerStreamError);
    expect(() => replayLedger([opened, { ...opened, seq: 2 }])).toThrow(/opened twice/);
    const state = replayLedger([opened]) as LedgerState;
    expect(() => applyEvent(state, { type: 'status_changed', seq: 2, at: opened.at, from: 'open', to: 'blocked', reason: 'x' })).toThrow(/does not apply/);
    expect(() => parseLedgerEvent({ type: 'evidence_recorded', seq: 2 })).toThrow(/not a ledger event/);
  });
});

describe('a review that evidence overtakes while the critics run', () => {
  const domain = TASK_DOMAINS[1]!;

  it('decides on the version it read, is appended at the head, and leaves the later evidence to the next cycle', () => {
    const run = new LedgerDriver('deploy-43');
    run.open(domain.goal);
    run.record(domain.evidence[0]!);
    const first = run.propose({ summary: domain.summary, during: [domain.evidence[1]!] });
    expect(first).toMatchObject({ cycle: 1, decision: 'request_changes' });
    expect(run.events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'ledger_opened'],
      [2, 'evidence_recorded'],
      [3, 'evidence_recorded'],
      [4, 'completion_proposed'],
      [5, 'critique_recorded'],
      [6, 'status_changed'],
    ]);
    expect(run.ledger.critiques[0]).toMatchObject({ baseVersion: 2, evidenceSeqAtCritique: 1 });
    expect(run.ledger.packets[0]!.evidence.map((e) => e.id)).toEqual(['ev-1']);

    expect(run.propose({ summary: domain.summary })).toMatchObject({ cycle: 2, decision: 'approve', completed: true });
    expect(run.ledger.packets[1]!.priorCritique).toMatchObject({ noEvidenceSince: false, evidenceSince: [{ id: 'ev-2' }] });
    const stored = roundTrip(run.events).map(parseLedgerEvent);
    expect(replayLedger(stored)).toStrictEqual(run.state);
  });

  it('is superseded only by another review concluded meanwhile, and a retried one finds its own', () => {
    const run = new LedgerDriver('deploy-44');
    run.open(domain.goal);
    run.record(domain.evidence[0]!);
    const plan = (proposalId: string) => {
      const planned = reviewInMemory(run.ledger, { runId: run.runId, proposalId, summary: domain.summary, openItems: [], at: run.now() }, { llmConfigured: false }, run.observations);
      if (planned.kind !== 'review') throw new Error('expected a review');
      return planned.review;
    };
    const a = plan('job-a');
    const b = plan('job-b');
    run.record(domain.evidence[1]!);
    expect(reviewStanding(run.ledger, a)).toEqual({ kind: 'current' });
    const concluded = concludeCompletionReview(run.ledger, a, { ran: false, note: 'rule only' });
    run.events.push(...concluded.events);
    run.state = concluded.state;
    expect(reviewStanding(run.ledger, b)).toEqual({ kind: 'superseded' });
    expect(() => concludeCompletionReview(run.ledger, b, { ran: false, note: 'rule only' })).toThrow(/reviewed by another completion attempt/);
    expect(reviewStanding(run.ledger, a)).toMatchObject({ kind: 'already_reviewed', outcome: { cycle: 1, alreadyReviewed: true } });
  });

  it('reads a critique stored before reviews recorded their base version as one appended at it', () => {
    const run = new LedgerDriver('deploy-45');
    run.open(domain.goal);
    run.record(domain.evidence[0]!);
    run.propose({ summary: domain.summary });
    const stored = roundTrip(run.events) as Array<Record<string, unknown> & { critique?: Record<string, unknown> }>;
    delete stored[3]!.critique!.baseVersion;
    expect(replayLedger(stored.map(parseLedgerEvent))).toStrictEqual(run.state);
  });
});

// Generated runs mix features from a small vocabulary so claims and evidence often, but not always, link.
const FEATURES = ['main.c', 'report.csv', 'v2.1.0', 'node-7', '115200', 'https://site.example.com', '"Quarterly Review"', 'build_42', '#17', '3.5'];
const TOOLS = ['shell', 'curl', 'editor', 'translator', 'flash_tool'];
const featureArb = fc.constantFrom(...FEATURES);

const evidenceArb: fc.Arbitrary<EvidenceInput> = fc.record(
  {
    kind: fc.constantFrom(...EVIDENCE_KINDS),
    toolName: fc.constantFrom(...TOOLS),
    success: fc.boolean(),
    summary: fc.tuple(fc.constantFrom('wrote', 'checked', 'sent', 'failed on', 'denied access to', 'measured'), fc.array(featureArb, { minLength: 1, maxLength: 3 })).map(([verb, fs]) => `${verb} ${fs.join(' and ')}`),
    rawRef: fc.constantFrom('blob://raw/1', 's3://bucket/raw/2.json'),
  },
  { requiredKeys: ['kind', 'summary'] },
);

const sentenceArb = fc
  .tuple(fc.constantFrom('Updated', 'Verified', 'Deployed', 'I might change', 'I will check', 'The value is', 'Could not open', 'Sent'), fc.array(featureArb, { minLength: 0, maxLength: 2 }))
  .map(([lead, fs]) => `${lead} ${fs.length ? fs.join(' and ') : 'the thing'}.`);

type Step =
  | { kind: 'record'; items: EvidenceInput[] }
  | { kind: 'propose'; sentences: string[]; todo: string | null; llm: 'none' | 'approve' | 'request_changes' | 'blocked' | 'garbled'; during: EvidenceInput[] | null };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('record' as const), items: fc.array(evidenceArb, { minLength: 1, maxLength: 4 }) }),
  fc.record({
    kind: fc.constant('propose' as const),
    sentences: fc.array(sentenceArb, { minLength: 1, maxLength: 3 }),
    todo: fc.option(fc.constantFrom('write the changelog', 'review the PR'), { nil: null }),
    llm: fc.constantFrom('none', 'approve', 'request_changes', 'blocked', 'garbled'),
    // Evidence that lands while the critics run.
    during: fc.option(fc.array(evidenceArb, { minLength: 1, maxLength: 3 }), { nil: null }),
  }),
);

/** With `freeze`, every state and event is deep-frozen before the next step, as the service's cache holds them. */
function runSteps(policy: 'full' | 'fast', budget: number, steps: Step[], opts: { freeze?: boolean } = {}): { run: LedgerDriver; snapshots: LedgerState[] } {
  const run = new LedgerDriver('prop-run');
  const freeze = () => {
    if (opts.freeze) for (const value of [run.state, ...run.events]) if (value) deepFreeze(value);
  };
  run.open('Make the change and report it', policy, budget);
  freeze();
  const snapshots = [run.ledger];
  for (const step of steps) {
    try {
      if (step.kind === 'record') run.record(...step.items);
      else {
        const { llm } = step;
        run.propose({
          summary: step.sentences.join(' '),
          openItems: step.todo ? [{ text: step.todo, kind: 'todo' }] : [],
          ...(step.during ? { during: step.during } : {}),
          ...(llm === 'none' ? {} : { llm: llm === 'garbled' ? () => ({ ran: true as const, model: 'm', error: 'not JSON' }) : llmSays(llm) }),
        });
      }
    } catch (error) {
      // A closed ledger refuses more work with a typed conflict and appends nothing.
      expect(error).toBeInstanceOf(VouchError);
      expect((error as VouchError).code).toBe('CONFLICT');
    }
    freeze();
    snapshots.push(run.ledger);
  }
  return { run, snapshots };
}

describe('replay equals the incrementally applied snapshot (property)', () => {
  it('for any valid sequence of commands', () => {
    fc.assert(
      fc.property(fc.constantFrom('full' as const, 'fast' as const), fc.integer({ min: 1, max: 4 }), fc.array(stepArb, { minLength: 1, maxLength: 12 }), (policy, budget, steps) => {
        const { run, snapshots } = runSteps(policy, budget, steps);
        const stored = roundTrip(run.events).map(parseLedgerEvent);
        expect(replayLedger(stored)).toStrictEqual(run.state);
        expect(roundTrip(run.state)).toStrictEqual(run.state);
        // Every prefix of the stream rebuilds the snapshot of that moment.
        for (const snapshot of snapshots) expect(replayLedger(stored.slice(0, snapshot.version))).toStrictEqual(snapshot);
        expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
      }),
      { numRuns: 150 },
    );
  });

  // The service caches states and hands the same object to every later command: none may change it.
  it('never changes a state or event it is given: every command and replay runs on deep-frozen ones, to the same result', () => {
    fc.assert(
      fc.property(fc.constantFrom('full' as const, 'fast' as const), fc.integer({ min: 1, max: 4 }), fc.array(stepArb, { minLength: 1, maxLength: 12 }), (policy, budget, steps) => {
        const frozen = runSteps(policy, budget, steps, { freeze: true });
        const plain = runSteps(policy, budget, steps);
        expect(frozen.run.state).toStrictEqual(plain.run.state);
        expect(frozen.run.events).toStrictEqual(plain.run.events);
        expect(replayLedger(frozen.run.events)).toStrictEqual(plain.run.state);
        // Each state taken along the way is still the replay of the events up to it.
        for (const snapshot of frozen.snapshots) expect(replayLedger(frozen.run.events.slice(0, snapshot.version))).toStrictEqual(snapshot);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps the terminal discipline on every generated run', () => {
    fc.assert(
      fc.property(fc.constantFrom('full' as const, 'fast' as const), fc.integer({ min: 1, max: 4 }), fc.array(stepArb, { minLength: 1, maxLength: 12 }), (policy, budget, steps) => {
        const { run } = runSteps(policy, budget, steps);
        const state = run.ledger;
        expect(state.completed).toBe(state.status === 'approved');
        expect(state.critiques.length).toBeLessThanOrEqual(budget);
        for (const event of run.events) if (event.type === 'status_changed') expect(canTransition(event.from, event.to)).toBe(true);
        const proposed = run.events.filter((e) => e.type === 'completion_proposed');
        for (const critique of state.critiques) {
          const claims = proposed[critique.cycle - 1]!.claims;
          const floorHolds = claims.some((c) => c.requiresEvidence && c.status !== 'supported');
          // The rule floor: nothing unsupported is ever approved, whatever the LLM critic said.
          if (floorHolds) expect(critique.decision).not.toBe('approve');
          if (critique.decision === 'approve') expect(critique.status).toBe('approved');
          else expect(critique.status).not.toBe('approved');
          if (critique.decision === 'blocked') expect(critique.status).toBe('incomplete_verification');
          if (critique.decision === 'request_changes') expect(critique.status).toBe(critique.cycle >= budget ? 'incomplete_verification' : 'request_changes');
        }
      }),
      { numRuns: 150 },
    );
  });
});
