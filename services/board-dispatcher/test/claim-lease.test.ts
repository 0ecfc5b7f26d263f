import { ConflictError } from '@vouch/contracts';
import { testActor } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimExpiry, readEvents } from '../src/board-store.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * Issue 17 item 5: a claim's lease is checked in the statement that extends
 * it (heartbeat) or the transaction that uses it (submit), by the database's
 * clock. The sweep that ends expired claims runs once a minute here, so any
 * refusal below is the check's own, not the sweep's.
 */
describe('claim leases are checked where they are extended or used', () => {
  let svc: BoardServiceUnderTest;
  let n = 0;
  const caller = (agent = 'planner') => ({ tenant: 'acme', jobId: `lease-${++n}`, actor: testActor(agent) });

  beforeAll(async () => {
    svc = await startBoardServiceUnderTest('claim_lease', { BOARD_SWEEP_MS: '60000' });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /** A board with one card for `worker`, claimed by it: the claim token. */
  async function claimed(boardId: string, worker: string): Promise<string> {
    await svc.service.commands.create(caller(), {
      boardId,
      title: boardId,
      goal: '',
      scope: { kind: 'run', ref: boardId },
      owner: 'planner',
      policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 5 },
    });
    await svc.service.commands.addCards(caller(), {
      boardId,
      by: 'planner',
      cards: [{ title: 'work', description: '', lane: 'worker', priority: 'normal', dependsOn: [], evidenceRequirements: [], assignee: worker }],
    });
    const claim = await svc.service.commands.claimCard(caller(worker), { assignee: worker, waitSeconds: 10 });
    expect(claim).toMatchObject({ claimed: true, boardId, attempt: 1 });
    return claim.claimToken!;
  }

  /** Moves the lease's end to `ms` before now, as for a 500 ms lease used at 700 ms: expired, and not yet swept. */
  async function lapse(boardId: string, ms: number): Promise<string> {
    const { rows } = await svc.service.pool.query<{ expires_at: Date }>(
      `UPDATE board_claims SET expires_at = clock_timestamp() - make_interval(secs => $3) WHERE tenant = 'acme' AND board_id = $1 AND card_id = $2 RETURNING expires_at`,
      [boardId, 'c-1', ms / 1000],
    );
    return rows[0]!.expires_at.toISOString();
  }

  const status = async (boardId: string) => (await svc.service.commands.load({ tenant: 'acme', boardId }))?.cards['c-1']?.status;
  const refusal = async (run: Promise<unknown>) => {
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConflictError);
    return { message: (err as ConflictError).message, details: (err as ConflictError).details };
  };

  it('accepts a heartbeat before the lease ends, and refuses one after it even though no sweep has ended the claim', async () => {
    const token = await claimed('lease-beat', 'w-beat');
    const beat = await svc.service.commands.heartbeat(caller('w-beat'), { boardId: 'lease-beat', cardId: 'c-1', claimToken: token });
    expect(beat).toMatchObject({ boardId: 'lease-beat', cardId: 'c-1', status: 'running' });
    expect(Date.parse(beat.leaseExpiresAt)).toBeGreaterThan(Date.now());

    const expiredAt = await lapse('lease-beat', 200);
    expect(await refusal(svc.service.commands.heartbeat(caller('w-beat'), { boardId: 'lease-beat', cardId: 'c-1', claimToken: token }))).toEqual({
      message: `the claim lease on card c-1 on board "lease-beat" expired at ${expiredAt} (no heartbeat extended it in time): this claim is over; stop heartbeating, and call board.claimCard to claim the card again`,
      details: { boardId: 'lease-beat', cardId: 'c-1', attempt: 1, reason: 'lease_expired', leaseExpiresAt: expiredAt },
    });
    // Refused, not revived: the lease still ends when it did, and only the sweep ends the claim.
    expect(await claimExpiry(svc.service.pool, { tenant: 'acme', boardId: 'lease-beat' }, 'c-1')).toBe(expiredAt);
    expect(await status('lease-beat')).toBe('running');
  });

  it('accepts a submission before the lease ends, and refuses one after it, changing nothing', async () => {
    const evidence = [{ kind: 'message' as const, summary: 'the owner confirmed it is done' }];
    const onTime = await claimed('lease-submit-on-time', 'w-on-time');
    const submitted = await svc.service.commands.submitCard(caller('w-on-time'), { boardId: 'lease-submit-on-time', cardId: 'c-1', claimToken: onTime, outcome: 'completed', summary: 'done', evidence });
    expect(submitted.card).toMatchObject({ id: 'c-1', status: 'submitted' });

    const late = await claimed('lease-submit-late', 'w-late');
    const expiredAt = await lapse('lease-submit-late', 200);
    const before = (await readEvents(svc.service.pool, { tenant: 'acme', boardId: 'lease-submit-late' })).length;
    expect(await refusal(svc.service.commands.submitCard(caller('w-late'), { boardId: 'lease-submit-late', cardId: 'c-1', claimToken: late, outcome: 'completed', summary: 'done', evidence }))).toEqual({
      message: `the claim lease on card c-1 on board "lease-submit-late" expired at ${expiredAt} (no heartbeat extended it in time): this claim is over; stop submitting it, and call board.claimCard to claim the card again`,
      details: { boardId: 'lease-submit-late', cardId: 'c-1', attempt: 1, reason: 'lease_expired', leaseExpiresAt: expiredAt },
    });
    expect((await readEvents(svc.service.pool, { tenant: 'acme', boardId: 'lease-submit-late' })).length).toBe(before);
    expect(await status('lease-submit-late')).toBe('running');
  });
});
