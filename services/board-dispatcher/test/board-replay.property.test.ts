import { VouchError } from '@vouch/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBoardEvent } from '../src/domain/board-events.js';
import { transitionAllowed } from '../src/domain/card-transitions.js';
import { applyEvents, replayBoard } from '../src/domain/replay-board.js';
import { BoardDriver } from './drive-board.js';

type Step =
  | { kind: 'add'; n: number; deps: number[]; assignee: number }
  | { kind: 'dispatch' }
  | { kind: 'claim'; card: number }
  | { kind: 'submit'; card: number; evidence: boolean; fail: boolean }
  | { kind: 'expire'; card: number }
  | { kind: 'review'; card: number; approve: boolean; self: boolean }
  | { kind: 'block'; card: number }
  | { kind: 'unblock'; card: number }
  | { kind: 'cancel'; card: number }
  | { kind: 'reassign'; card: number; assignee: number }
  | { kind: 'attach'; card: number };

const card = fc.integer({ min: 1, max: 12 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), n: fc.integer({ min: 1, max: 3 }), deps: fc.array(card, { maxLength: 2 }), assignee: fc.integer({ min: 0, max: 2 }) }),
  fc.constant({ kind: 'dispatch' as const }),
  fc.record({ kind: fc.constant('claim' as const), card }),
  fc.record({ kind: fc.constant('submit' as const), card, evidence: fc.boolean(), fail: fc.boolean() }),
  fc.record({ kind: fc.constant('expire' as const), card }),
  fc.record({ kind: fc.constant('review' as const), card, approve: fc.boolean(), self: fc.boolean() }),
  fc.record({ kind: fc.constant('block' as const), card }),
  fc.record({ kind: fc.constant('unblock' as const), card }),
  fc.record({ kind: fc.constant('cancel' as const), card }),
  fc.record({ kind: fc.constant('reassign' as const), card, assignee: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('attach' as const), card }),
);

/** Runs generated steps; a step the board refuses (a typed 4xx) changes nothing and is skipped, as a caller would see. */
function run(steps: Step[]): BoardDriver {
  const b = new BoardDriver();
  b.create({ maxFailures: 3, allowSelfVerify: false });
  for (const step of steps) {
    const id = 'card' in step ? `c-${step.card}` : '';
    try {
      switch (step.kind) {
        case 'add':
          b.add(Array.from({ length: step.n }, (_, k) => ({ title: `t${k}`, assignee: `w${step.assignee}`, dependsOn: step.deps.map((d) => `c-${d}`).filter((d) => b.board.cards[d]), evidenceRequirements: k % 2 ? ['the log'] : [] })));
          break;
        case 'dispatch':
          b.dispatch();
          break;
        case 'claim':
          if (b.board.cards[id]) b.claim(id);
          break;
        case 'submit':
          b.submit(id, b.board.cards[id]?.claim?.token ?? 'none', 'did it', step.evidence ? [{ kind: 'tool_result', summary: 'the log shows success', ref: 'call-1' }] : [], step.fail ? 'failed' : 'completed');
          break;
        case 'expire':
          if (b.board.cards[id]?.claim) b.expire(id);
          break;
        case 'review':
          b.review(id, step.self ? (b.board.cards[id]?.submittedBy ?? 'v') : 'verifier', step.approve ? 'approve' : 'request_changes', ['more evidence']);
          break;
        case 'block':
          b.update({ cardId: id, status: 'blocked', blockReason: 'external_dependency' });
          break;
        case 'unblock':
          b.update({ cardId: id, status: 'todo' });
          break;
        case 'cancel':
          b.update({ cardId: id, status: 'cancelled' });
          break;
        case 'reassign':
          b.update({ cardId: id, assignee: `w${step.assignee}` });
          break;
        case 'attach':
          b.attach(id, [{ kind: 'message', summary: 'operator confirmed the log' }]);
          break;
      }
    } catch (error) {
      if (!(error instanceof VouchError) || error.httpStatus >= 500) throw error;
    }
  }
  return b;
}

describe('replay properties', () => {
  it('replay from any snapshot plus the events after it equals the full replay, and the live state', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), fc.nat(), (steps, cut) => {
        const b = run(steps);
        const stored = JSON.parse(JSON.stringify(b.events)).map(parseBoardEvent);
        const full = replayBoard(stored);
        expect(full).toStrictEqual(b.state);
        const at = 1 + (cut % stored.length);
        const snapshot = JSON.parse(JSON.stringify(replayBoard(stored.slice(0, at))));
        expect(applyEvents(snapshot, stored.slice(at))).toStrictEqual(full);
      }),
      { numRuns: 300 },
    );
  });

  it('no card is verified without evidence, every change follows the table, and an attempt is dispatched once', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), (steps) => {
        const b = run(steps);
        for (const id of b.board.order) {
          const c = b.board.cards[id]!;
          if (c.status === 'verified') expect(c.evidence.length).toBeGreaterThan(0);
          if (c.status === 'verified') expect(c.lastReview?.reviewer).not.toBe(c.submittedBy);
        }
        const dispatched = new Set<string>();
        for (const e of b.events) {
          if (e.type === 'card_transitioned') expect(transitionAllowed(e.from, e.to, e.trigger)).toBe(true);
          if (e.type === 'card_dispatched') {
            const key = `${e.cardId}#${e.attempt}`;
            expect(dispatched.has(key)).toBe(false);
            dispatched.add(key);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
