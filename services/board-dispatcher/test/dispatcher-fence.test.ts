import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceRejected, listDiagnostics, recordDiagnostic, withFencedTransaction } from '../src/board-store.js';
import { readLease, releaseLease, renewLease, tryAcquireLease, type LeaseTerm } from '../src/dispatcher-lease.js';
import { LeaseKeeper, type LeaseKeeperDeps } from '../src/lease-keeper.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * The fence a dispatcher write passes: one check, first in its transaction
 * (board-store.ts withFencedTransaction). These tests hold the lease
 * themselves, with the service's own dispatcher stopped, and show the two
 * things that make one check enough: a deposed leader's write is refused and
 * writes nothing, and while a fenced write is open no one can take the lease
 * over, even after it has run out, so nothing it writes later in the
 * transaction can land beside a new leader's writes.
 */
describe('the dispatcher fence, checked once per write', () => {
  let svc: BoardServiceUnderTest;
  const key = { tenant: 'acme', boardId: 'fence' };
  const finding = (subject: string) => ({ kind: 'unknown_card' as const, subject, severity: 'warning' as const, message: 'm', suggestedAction: 'a', details: {} });

  beforeAll(async () => {
    svc = await startBoardServiceUnderTest('dispatcher_fence');
    await svc.service.dispatcher.stop();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /** Waits until the lease is free, then takes it as `holder`. */
  async function take(holder: string, ttlMs: number) {
    for (let i = 0; i < 100; i++) {
      const term = await tryAcquireLease(svc.service.pool, holder, ttlMs, 100);
      if (term) return term;
      await sleep(50);
    }
    throw new Error(`${holder} never took the lease`);
  }

  it("a deposed leader's write is refused, and nothing of it is written", async () => {
    const pool = svc.service.pool;
    const a = await take('a', 200);
    const b = await take('b', 60_000);
    expect(b.epoch).toBe(a.epoch + 1);
    const refused = await withFencedTransaction(pool, { holder: 'a', epoch: a.epoch, idleInTransactionMs: 5_000 }, (tx) => recordDiagnostic(tx, key, finding('from-a'), { bump: false })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(FenceRejected);
    await withFencedTransaction(pool, { holder: 'b', epoch: b.epoch }, (tx) => recordDiagnostic(tx, key, finding('from-b'), { bump: false }));
    expect((await listDiagnostics(pool, key, true)).map((d) => d.subject)).toEqual(['from-b']);
    await releaseLease(pool, b);
  });

  it('while a fenced write is open, its lease cannot be taken over, even after it ran out; once it commits, it can', async () => {
    const pool = svc.service.pool;
    const a = await take('a', 300);
    let takenInside: unknown = 'not tried';
    await withFencedTransaction(pool, { holder: 'a', epoch: a.epoch, idleInTransactionMs: 5_000 }, async (tx) => {
      await sleep(500);
      const lease = await readLease(pool);
      expect(lease.expiresAt.getTime()).toBeLessThanOrEqual(lease.now.getTime());
      takenInside = await tryAcquireLease(pool, 'b', 60_000, 200);
      await recordDiagnostic(tx, key, finding('late-from-a'), { bump: false });
    });
    expect(takenInside).toBeUndefined();
    const b = await tryAcquireLease(pool, 'b', 60_000, 200);
    expect(b?.epoch).toBe(a.epoch + 1);
    await releaseLease(pool, b!);
  });

  it('the lease keeper stops leading once it stalled past the time it trusts the lease, before the lease runs out; its fence is then refused, and it takes the lease again at a new epoch', async () => {
    const pool = svc.service.pool;
    const warnings: string[] = [];
    const lost: LeaseTerm[] = [];
    const keeper = new LeaseKeeper({
      holder: 'keeper',
      // Long enough that a busy machine's stall between the take and the first keep stays inside the trusted 0.9 of it.
      ttlMs: 3_000,
      lease: {
        tryAcquire: (holder, ttlMs, lockTimeoutMs) => tryAcquireLease(pool, holder, ttlMs, lockTimeoutMs),
        renew: (term, ttlMs) => renewLease(pool, term, ttlMs),
        release: (term) => releaseLease(pool, term),
        read: () => readLease(pool),
      },
      logger: { info: () => {}, warn: (_obj: unknown, msg?: string) => void warnings.push(msg ?? '') } as LeaseKeeperDeps['logger'],
      metrics: { leader: { set: () => {} }, takeovers: { inc: () => {} } } as unknown as LeaseKeeperDeps['metrics'],
      onLost: (term) => lost.push(term),
    });
    let term: LeaseTerm | undefined;
    for (let i = 0; i < 100 && !term; i++) {
      term = await keeper.acquire();
      if (!term) await sleep(50);
    }
    expect(keeper.isLeader).toBe(true);
    expect(await keeper.keep()).toBe(true);
    const fence = keeper.fence();
    // Past 0.9 of the TTL without a renewal: the keeper no longer trusts the lease, though its row has not run out yet.
    await sleep(2_850);
    expect(await keeper.keep()).toBe(false);
    expect(warnings).toEqual(['the dispatcher lease may have expired while this replica was stalled: taking it again before any write']);
    expect(lost).toEqual([term]);
    expect(keeper.isLeader).toBe(false);
    // Now past the TTL since the last renewal: the row has run out, so the old term's fence is refused.
    await sleep(300);
    await expect(withFencedTransaction(pool, fence, (tx) => recordDiagnostic(tx, key, finding('stalled'), { bump: false }))).rejects.toBeInstanceOf(FenceRejected);
    const again = await keeper.acquire();
    expect(again?.epoch).toBe(term!.epoch + 1);
    await keeper.release();
    expect(keeper.isLeader).toBe(false);
  });
});
