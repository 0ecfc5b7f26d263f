import { Redis } from 'ioredis';
import { eventually, testActor } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workQueueName } from '../src/work-queues.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * Issue 17: per-assignee state is released once idle. Fifty assignees each
 * get a card, claim it and submit it; past the (test-short) idle TTL their
 * work queues' Redis keys are gone and the dispatcher holds no Queue object
 * for them, and a later card for one of them is queued and claimed as usual.
 */
describe('idle work queues are released', () => {
  let svc: BoardServiceUnderTest;
  let redis: Redis;
  let n = 0;
  const caller = (agent = 'planner') => ({ tenant: 'acme', jobId: `rel-${++n}`, actor: testActor(agent) });
  const assignees = Array.from({ length: 50 }, (_, k) => `idle-${k}`);

  beforeAll(async () => {
    svc = await startBoardServiceUnderTest('board_release', { BOARD_WORK_QUEUE_IDLE_MS: '500' });
    redis = new Redis(svc.env.REDIS_URL);
  });
  afterAll(async () => {
    redis?.disconnect();
    await svc?.stop();
  });

  /** Every Redis key under the work queues of these assignees (SCAN, with this test's prefix). */
  const keysOf = async (names: string[]): Promise<string[]> => {
    const found: string[] = [];
    for (const assignee of names) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${svc.prefix}:${workQueueName('acme', assignee)}:*`, 'COUNT', 1000);
        found.push(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    return found;
  };

  const addCards = (boardId: string, cards: Array<{ title: string; assignee: string }>) =>
    svc.service.commands.addCards(caller(), {
      boardId,
      by: 'planner',
      cards: cards.map((c) => ({ description: '', lane: 'worker' as const, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [], ...c })),
    });

  const claimAndSubmit = async (boardId: string, assignee: string) => {
    const claim = await svc.service.commands.claimCard(caller(assignee), { assignee, waitSeconds: 10 });
    expect(claim).toMatchObject({ claimed: true, boardId });
    await svc.service.commands.submitCard(caller(assignee), {
      boardId,
      cardId: claim.card!.id,
      claimToken: claim.claimToken!,
      outcome: 'completed',
      summary: 'done',
      evidence: [{ kind: 'message', summary: 'the owner confirmed it is done' }],
    });
  };

  it('drops the Queue objects and obliterates the empty queues of idle assignees, and a later card recreates its queue', async () => {
    await svc.service.commands.create(caller(), {
      boardId: 'many',
      title: 'many assignees',
      goal: '',
      scope: { kind: 'run', ref: 'many' },
      owner: 'planner',
      policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 30 },
    });
    await addCards(
      'many',
      assignees.map((assignee) => ({ title: `work for ${assignee}`, assignee })),
    );
    // Every assignee's job reaches its queue: that is the per-assignee state to release.
    // (Not the dispatcher's Queue objects: with the test's 500 ms idle TTL, a busy machine may already have released
    // some of them by now, which is the behaviour under test; CI once saw 43 of 50 here.)
    await eventually('all 50 work queues in Redis', async () => ((await keysOf(assignees)).filter((k) => k.endsWith(':meta')).length === 50 ? true : undefined), 20_000);

    for (const assignee of assignees) await claimAndSubmit('many', assignee);

    // Past the 500 ms idle TTL, a sweep releases them all.
    await eventually('the idle work queues released', async () => ((await keysOf(assignees)).length === 0 && svc.service.queues.size === 0 ? true : undefined), 20_000);
    expect(await keysOf(assignees)).toEqual([]);
    expect(svc.service.queues.size).toBe(0);

    // A new card for one of them is dispatched to a queue made again, and claimed.
    const again = assignees[7]!;
    await addCards('many', [{ title: 'more work', assignee: again }]);
    const job = await eventually(
      'the new job queued',
      async () => {
        const keys = await keysOf([again]);
        return keys.some((k) => k.endsWith(':wait')) ? keys : undefined;
      },
      20_000,
    );
    expect(job).toContain(`${svc.prefix}:${workQueueName('acme', again)}:meta`);
    const claim = await svc.service.commands.claimCard(caller(again), { assignee: again, waitSeconds: 10 });
    expect(claim).toMatchObject({ claimed: true, boardId: 'many', card: { id: 'c-51' }, attempt: 1 });
  });
});
