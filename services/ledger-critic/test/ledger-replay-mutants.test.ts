import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ResultTooLargeError, jsonBytes } from '@vouch/contracts';
import { parseLedgerEvent, type LedgerEvent } from '../src/domain/ledger-events.js';
import { LedgerStreamError, applyEvents, replayLedger, toLedgerView, type LedgerState } from '../src/domain/replay-ledger.js';
import { lacksBaseVersions, upcastSnapshot } from '../src/domain/upcast-snapshot.js';
import { LedgerDriver, ok } from './drive-ledger.js';

// Replay, stored events and stored snapshots of a ledger: the exact refusals and reads that the
// replay properties left unpinned, found by mutation testing (npm run test:mutation).

interface Fixture {
  events: unknown[];
  snapshot: Record<string, unknown>;
}
const fixture = (name: string): Fixture => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Fixture;

function reviewedTwice(): LedgerDriver {
  const run = new LedgerDriver();
  run.open('Rename the files');
  run.record(ok('tool_result', 'shell', 'renamed a.txt to b.txt'));
  run.propose({ summary: 'Renamed a.txt to b.txt and c.txt to d.txt.' });
  run.record(ok('tool_result', 'shell', 'renamed c.txt to d.txt'));
  run.propose({ summary: 'Renamed a.txt to b.txt and c.txt to d.txt.' });
  return run;
}
// seq: 1 opened, 2 evidence, 3 proposed, 4 critique, 5 status, 6 evidence, 7 proposed, 8 critique, 9 status

function refusal(events: LedgerEvent[]): Error {
  try {
    replayLedger(events);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the stream to be refused');
}

const replace = (events: readonly LedgerEvent[], seq: number, change: (e: LedgerEvent) => LedgerEvent): LedgerEvent[] => events.map((e) => (e.seq === seq ? change(e) : e));

describe('replay refuses a corrupt stream, naming the event', () => {
  it.each([
    ['a stream that does not start with its opening', (e: LedgerEvent[]) => e.slice(1), 'a evidence_recorded event (seq 2) arrived before the ledger was opened'],
    ['an opening that is not seq 1', (e: LedgerEvent[]) => [{ ...e[0]!, seq: 2 } as LedgerEvent], 'ledger run-1: the opening event has seq 2, not 1'],
    ['a second opening', (e: LedgerEvent[]) => [e[0]!, { ...e[0]!, seq: 2 } as LedgerEvent], 'ledger run-1 is opened twice (seq 2)'],
    ['a gap', (e: LedgerEvent[]) => e.filter((x) => x.seq !== 2), 'ledger run-1: event seq 3 does not follow version 1'],
    [
      'evidence out of sequence',
      (e: LedgerEvent[]) => replace(e, 6, (x) => ({ ...x, items: (x as Extract<LedgerEvent, { type: 'evidence_recorded' }>).items.map((i) => ({ ...i, seq: 3 })) }) as LedgerEvent),
      'ledger run-1: evidence ev-2 has seq 3, expected 2',
    ],
    [
      'an attempt of another cycle',
      (e: LedgerEvent[]) => replace(e, 7, (x) => ({ ...x, proposal: { ...(x as Extract<LedgerEvent, { type: 'completion_proposed' }>).proposal, cycle: 3 } }) as LedgerEvent),
      'ledger run-1: completion attempt of cycle 3, expected 2',
    ],
    [
      'a critique of another cycle',
      (e: LedgerEvent[]) => replace(e, 8, (x) => ({ ...x, critique: { ...(x as Extract<LedgerEvent, { type: 'critique_recorded' }>).critique, cycle: 1 } }) as LedgerEvent),
      'ledger run-1: critique of cycle 1, expected 2',
    ],
    [
      'a critique that read a version after its own proposal',
      (e: LedgerEvent[]) => replace(e, 8, (x) => ({ ...x, critique: { ...(x as Extract<LedgerEvent, { type: 'critique_recorded' }>).critique, baseVersion: 7 } }) as LedgerEvent),
      'ledger run-1: critique at seq 8 says it read version 7 with 2 evidence items',
    ],
    [
      'a critique that saw evidence the ledger did not have',
      (e: LedgerEvent[]) => replace(e, 8, (x) => ({ ...x, critique: { ...(x as Extract<LedgerEvent, { type: 'critique_recorded' }>).critique, evidenceSeqAtCritique: 3 } }) as LedgerEvent),
      'ledger run-1: critique at seq 8 says it read version 6 with 3 evidence items',
    ],
    [
      'a status change from a status the ledger is not in',
      (e: LedgerEvent[]) => replace(e, 5, (x) => ({ ...x, from: 'request_changes' }) as LedgerEvent),
      'ledger run-1: status change request_changes → request_changes does not apply to status open',
    ],
  ])('%s', (_what, mutate, message) => {
    const error = refusal(mutate(reviewedTwice().events));
    expect(error).toBeInstanceOf(LedgerStreamError);
    expect(error.name).toBe('LedgerStreamError');
    expect(error.message).toBe(message);
  });

  it('accepts a critique that read exactly up to its proposal, with every evidence item', () => {
    const events = replace(reviewedTwice().events, 8, (x) => ({ ...x, critique: { ...(x as Extract<LedgerEvent, { type: 'critique_recorded' }>).critique, baseVersion: 6, evidenceSeqAtCritique: 2 } }) as LedgerEvent);
    expect(replayLedger(events)!.critiques[1]).toMatchObject({ baseVersion: 6, evidenceSeqAtCritique: 2 });
  });

  it('a status change the table does not allow is refused even from the status the ledger is in', () => {
    const run = reviewedTwice();
    expect(replayLedger(run.events.slice(0, 5))!.status).toBe('request_changes');
    const events = replace(run.events, 5, (x) => ({ ...x, to: 'blocked' }) as LedgerEvent);
    expect(refusal(events).message).toBe('ledger run-1: status change open → blocked does not apply to status open');
  });

  it('a ledger is completed exactly when it is approved', () => {
    const run = new LedgerDriver();
    run.open('Say hello', 'fast');
    run.propose({ summary: 'Hello there!' });
    expect(run.ledger).toMatchObject({ status: 'approved', completed: true });
    const twice = reviewedTwice();
    expect(replayLedger(twice.events.slice(0, 5))).toMatchObject({ status: 'request_changes', completed: false });
    expect(twice.ledger).toMatchObject({ status: 'approved', completed: true });
  });

  it('applies events on top of a state, or returns the state when there are none', () => {
    const run = reviewedTwice();
    const mid = replayLedger(run.events.slice(0, 5))!;
    expect(applyEvents(mid, run.events.slice(5))).toStrictEqual(run.ledger);
    expect(applyEvents(mid, [])).toBe(mid);
    expect(replayLedger([])).toBeUndefined();
  });
});

describe('reading a page of evidence', () => {
  function withEvidence(n: number): LedgerState {
    const run = new LedgerDriver();
    run.open('Collect readings');
    run.record(...Array.from({ length: n }, (_, i) => ok('runtime_observation', 'probe', `reading ${i + 1}`)));
    return run.ledger;
  }

  it('pages through the evidence in seq order, saying where the next page starts', () => {
    const state = withEvidence(5);
    const first = toLedgerView(state, { after: 0, limit: 2 });
    expect(first.evidence.map((e) => e.seq)).toEqual([1, 2]);
    expect(first.evidencePage).toEqual({ total: 5, after: 0, limit: 2, nextAfter: 2, truncated: false });
    expect(toLedgerView(state, { after: 2, limit: 2 }).evidencePage.nextAfter).toBe(4);
    const last = toLedgerView(state, { after: 3, limit: 2 });
    expect(last.evidence.map((e) => e.seq)).toEqual([4, 5]);
    expect(last.evidencePage).toEqual({ total: 5, after: 3, limit: 2, nextAfter: null, truncated: false });
    expect(toLedgerView(state, { after: 5, limit: 2 })).toMatchObject({ evidence: [], evidencePage: { total: 5, after: 5, limit: 2, nextAfter: null } });
    expect(toLedgerView(state, { after: 9, limit: 100 }).evidence).toEqual([]);
    expect(toLedgerView(state, { after: 0, limit: 3 }).evidencePage.nextAfter).toBe(3);
    expect(toLedgerView(state).evidencePage).toEqual({ total: 5, after: 0, limit: 100, nextAfter: null, truncated: false });
    expect(toLedgerView(state)).not.toHaveProperty('packets');
  });

  it('stops a page before the item that would pass its byte budget, and always takes the first', () => {
    const state = withEvidence(5);
    const bare = jsonBytes(toLedgerView(state, { after: 0, limit: 5 }, 1_000_000)) - jsonBytes(state.evidence) + 2;
    const itemBytes = state.evidence.map((e) => jsonBytes(e));
    // Room for exactly the first two items and the comma between them.
    const two = toLedgerView(state, { after: 0, limit: 5 }, bare + itemBytes[0]! + 1 + itemBytes[1]!);
    expect(two.evidence.map((e) => e.seq)).toEqual([1, 2]);
    expect(two.evidencePage).toEqual({ total: 5, after: 0, limit: 5, nextAfter: 2, truncated: true });
    expect(jsonBytes(two)).toBeLessThanOrEqual(bare + itemBytes[0]! + 1 + itemBytes[1]! + 2);
    expect(toLedgerView(state, { after: 0, limit: 5 }, bare + itemBytes[0]! + itemBytes[1]!).evidence).toHaveLength(1);
    // No room for any item: the first still comes, so paging moves on.
    expect(toLedgerView(state, { after: 4, limit: 5 }, bare).evidencePage).toEqual({ total: 5, after: 4, limit: 5, nextAfter: null, truncated: false });
    expect(toLedgerView(state, { after: 2, limit: 5 }, bare).evidencePage).toEqual({ total: 5, after: 2, limit: 5, nextAfter: 3, truncated: true });
    // A page its limit ended is not truncated, whatever its bytes.
    expect(toLedgerView(state, { after: 3, limit: 1 }, bare).evidencePage).toEqual({ total: 5, after: 3, limit: 1, nextAfter: 4, truncated: false });
  });

  it('refuses, naming the limit, a ledger whose parts that are not paged pass the budget', () => {
    const state = withEvidence(1);
    const bare = jsonBytes({ ...toLedgerView(state, { after: 0, limit: 1 }, 1_000_000), evidence: [] });
    expect(() => toLedgerView(state, { after: 0, limit: 1 }, bare - 10)).toThrow(ResultTooLargeError);
    expect(() => toLedgerView(state, { after: 0, limit: 1 }, bare - 10)).toThrow(`run "run-1": its claims, critiques and open items alone take ${bare} bytes as JSON, past the ${bare - 10}-byte limit on one answer`);
    expect(toLedgerView(state, { after: 0, limit: 1 }, bare).evidence).toHaveLength(1);
  });
});

describe('stored events and snapshots of earlier versions', () => {
  it('reads a stored critique without a base version as one that read two events before it', () => {
    const run = reviewedTwice();
    const stored = JSON.parse(JSON.stringify(run.events)) as Array<Record<string, unknown> & { critique?: Record<string, unknown> }>;
    delete stored[7]!.critique!.baseVersion;
    expect(parseLedgerEvent(stored[7])).toMatchObject({ seq: 8, critique: { baseVersion: 6 } });
    // A base version that is there is kept as it is.
    expect(parseLedgerEvent({ ...stored[3], critique: { ...stored[3]!.critique, baseVersion: 1 } })).toMatchObject({ critique: { baseVersion: 1 } });
  });

  it('refuses what is not an event, naming the field', () => {
    expect(() => parseLedgerEvent(null)).toThrow(/^not a ledger event: /);
    expect(() => parseLedgerEvent('evidence')).toThrow(/^not a ledger event: /);
    expect(() => parseLedgerEvent({ type: 'critique_recorded', seq: 'x', critique: {} })).toThrow(/^not a ledger event: /);
    expect(() => parseLedgerEvent({ type: 'critique_recorded', seq: 4, critique: null })).toThrow(/^not a ledger event: /);
  });

  it('brings a snapshot written before formats were numbered to the state replaying its events gives', () => {
    for (const name of ['ledger-written-before-issue-8.json', 'ledger-written-by-issue-8.json']) {
      const { events, snapshot } = fixture(name);
      const version = snapshot['version'] as number;
      const replayed = replayLedger(events.slice(0, version).map(parseLedgerEvent))!;
      const critiqueSeqs = events.map(parseLedgerEvent).filter((e) => e.type === 'critique_recorded').map((e) => e.seq);
      expect(upcastSnapshot(snapshot, critiqueSeqs)).toStrictEqual(replayed);
    }
  });

  it('knows which stored snapshots need their critique seqs, and says when one is missing', () => {
    const { snapshot } = fixture('ledger-written-before-issue-8.json');
    expect(lacksBaseVersions(snapshot)).toBe(true);
    expect(lacksBaseVersions({ ...snapshot, critiques: [] })).toBe(false);
    expect(lacksBaseVersions({ ...snapshot, critiques: [{ cycle: 1, baseVersion: 2 }] })).toBe(false);
    expect(lacksBaseVersions({ ...snapshot, critiques: [null, 'x'] })).toBe(false);
    expect(lacksBaseVersions(null)).toBe(false);
    expect(lacksBaseVersions({})).toBe(false);
    expect(() => upcastSnapshot(snapshot, [])).toThrow('a stored snapshot holds the critique of cycle 1, but its stream has no critique event for that cycle');
    expect(() => upcastSnapshot({ ...snapshot, runId: 7 }, [4])).toThrow(/^not a ledger snapshot: runId: /);
    expect(() => upcastSnapshot(null, [])).toThrow(/^not a ledger snapshot: /);
    expect(() => upcastSnapshot({ ...snapshot, critiques: ['x'] }, [4])).toThrow(/^not a ledger snapshot: critiques\.0: /);
    expect(() => upcastSnapshot({ ...snapshot, critiques: [null] }, [4])).toThrow(/^not a ledger snapshot: critiques\.0: /);
    const today = reviewedTwice().ledger;
    expect(upcastSnapshot(JSON.parse(JSON.stringify(today)), [])).toStrictEqual(today);
  });
});
