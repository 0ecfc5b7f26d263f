import { eventually, testActor } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDiagnostics, readEvents } from '../src/board-store.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * The service in this process with short timings: claims that stop
 * heartbeating, the diagnostics the leader stores and resolves, and the
 * no-leader diagnostic read from the lease.
 */
describe('the board service: claim leases and stored diagnostics', () => {
  let svc: BoardServiceUnderTest;
  let n = 0;
  /** A command as the gateway would send it, from `agent`'s key. */
  const caller = (agent = 'planner') => ({ tenant: 'acme', jobId: `svc-${++n}`, actor: testActor(agent) });

  beforeAll(async () => {
    svc = await startBoardServiceUnderTest('board_svc', { BOARD_STRANDED_AFTER_MS: '300', BOARD_CONSUMER_TTL_MS: '1000' });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const create = (boardId: string, policy: Partial<{ claimTtlSeconds: number; maxFailures: number }> = {}) =>
    svc.service.commands.create(caller(), {
      boardId,
      title: boardId,
      goal: '',
      scope: { kind: 'run', ref: boardId },
      owner: 'planner',
      policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 5, ...policy },
    });
  const add = (boardId: string, cards: Array<{ title: string; key?: string; assignee?: string; dependsOn?: string[] }>) =>
    svc.service.commands.addCards(caller(), {
      boardId,
      by: 'planner',
      cards: cards.map((c) => ({ description: '', lane: 'worker' as const, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [], ...c })),
    });
  const diagnostics = (boardId: string, includeResolved = false) => listDiagnostics(svc.service.pool, { tenant: 'acme', boardId }, includeResolved);

  it('a claim that stops heartbeating returns the card to ready after its lease, is diagnosed as ghost running, and is dispatched again', async () => {
    await create('ghost', { claimTtlSeconds: 5 });
    await add('ghost', [{ title: 'flaky work', assignee: 'w-ghost' }]);
    const claim = await svc.service.commands.claimCard(caller('w-ghost'), { assignee: 'w-ghost', waitSeconds: 10 });
    expect(claim).toMatchObject({ claimed: true, attempt: 1 });
    // Heartbeats keep it: one now, then silence.
    await svc.service.commands.heartbeat(caller('w-ghost'), { boardId: 'ghost', cardId: 'c-1', claimToken: claim.claimToken! });
    const again = await eventually(
      'the card dispatched again',
      async () => {
        const state = await svc.service.commands.load({ tenant: 'acme', boardId: 'ghost' });
        return state?.cards['c-1']?.attempt === 2 ? state.cards['c-1'] : undefined;
      },
      20_000,
    );
    expect(again).toMatchObject({ status: 'dispatched', failures: 1 });
    const events = await readEvents(svc.service.pool, { tenant: 'acme', boardId: 'ghost' });
    expect(events.map((e) => e.type)).toEqual(['board_created', 'card_added', 'card_dispatched', 'card_claimed', 'card_failed', 'card_dispatched']);
    expect(events[4]).toMatchObject({ trigger: 'claim_expired', to: 'ready', by: 'dispatcher' });
    expect(await diagnostics('ghost')).toContainEqual(expect.objectContaining({ kind: 'ghost_running', subject: 'c-1', severity: 'warning', count: 1 }));

    // The stale token is refused; a new claim resolves the ghost diagnostic.
    await expect(svc.service.commands.heartbeat(caller('w-ghost'), { boardId: 'ghost', cardId: 'c-1', claimToken: claim.claimToken! })).rejects.toThrow(/no longer holds card c-1/);
    await svc.service.commands.claimCard(caller('w-ghost'), { assignee: 'w-ghost', waitSeconds: 5 });
    await eventually('the ghost diagnostic resolved', async () => ((await diagnostics('ghost')).some((d) => d.kind === 'ghost_running') ? undefined : true), 20_000);
    expect(await diagnostics('ghost', true)).toContainEqual(expect.objectContaining({ kind: 'ghost_running', resolvedAt: expect.any(String) }));
  });

  it('stores stranded and deadlock diagnostics once each, counts completions without evidence, and resolves them with their condition', async () => {
    await create('stuck');
    await add('stuck', [{ title: 'nobody takes this', assignee: 'w-absent' }, { key: 'first', title: 'first' }, { title: 'second', dependsOn: ['first'] }]);
    await svc.service.commands.updateCard(caller(), { boardId: 'stuck', cardId: 'c-2', by: 'planner', status: 'cancelled', reason: 'out of scope' });
    const found = await eventually(
      'stranded and deadlock diagnostics',
      async () => {
        const d = await diagnostics('stuck');
        return d.some((x) => x.kind === 'stranded_ready') && d.some((x) => x.kind === 'dependency_deadlock') ? d : undefined;
      },
      20_000,
    );
    expect(found.find((d) => d.kind === 'stranded_ready')).toMatchObject({
      subject: 'c-1',
      count: 1,
      suggestedAction: 'start a worker that calls board.claimCard as w-absent, or reassign the card (board.updateCard assignee)',
    });
    expect(found.find((d) => d.kind === 'dependency_deadlock')).toMatchObject({ subject: 'c-3', severity: 'error' });
    // Still one row each after more sweeps: deduplicated, not appended.
    await new Promise((r) => setTimeout(r, 600));
    expect((await diagnostics('stuck')).filter((d) => d.kind === 'stranded_ready')).toHaveLength(1);

    // A worker shows up: the card is claimed, and stranded resolves. Its completion without evidence is refused and counted.
    const claim = await svc.service.commands.claimCard(caller('w-absent'), { assignee: 'w-absent', waitSeconds: 5 });
    for (let i = 0; i < 2; i++) {
      await expect(svc.service.commands.submitCard(caller('w-absent'), { boardId: 'stuck', cardId: 'c-1', claimToken: claim.claimToken!, outcome: 'completed', summary: 'done', evidence: [] })).rejects.toThrow(
        /cannot be submitted as completed without evidence/,
      );
    }
    expect(await diagnostics('stuck')).toContainEqual(expect.objectContaining({ kind: 'completion_without_evidence', subject: 'c-1', count: 2 }));
    await svc.service.commands.submitCard(caller('w-absent'), { boardId: 'stuck', cardId: 'c-1', claimToken: claim.claimToken!, outcome: 'completed', summary: 'done', evidence: [{ kind: 'message', summary: 'the owner confirmed it is done' }] });
    await svc.service.commands.updateCard(caller(), { boardId: 'stuck', cardId: 'c-3', by: 'planner', status: 'cancelled' });
    await eventually(
      'the conditions resolved',
      async () => {
        const open = await diagnostics('stuck');
        return open.length === 0 ? true : undefined;
      },
      20_000,
    );
    // Diagnostics changed no card: the card is submitted because its worker submitted it.
    const state = await svc.service.commands.load({ tenant: 'acme', boardId: 'stuck' });
    expect(state?.cards['c-1']?.status).toBe('submitted');
  });

  it('reports no leader, read from the lease, once it has been missing for two TTLs', async () => {
    await create('leaderless');
    const healthy = await svc.service.commands.diagnostics(caller(), { boardId: 'leaderless', includeResolved: false });
    expect(healthy.leader.healthy).toBe(true);
    await svc.service.dispatcher.stop();
    const missing = await eventually(
      'the no-leader diagnostic',
      async () => {
        const d = await svc.service.commands.diagnostics(caller(), { boardId: 'leaderless', includeResolved: false });
        return d.diagnostics.some((x) => x.kind === 'no_leader') ? d : undefined;
      },
      20_000,
    );
    expect(missing.leader.healthy).toBe(false);
    expect(missing.diagnostics[0]).toMatchObject({ kind: 'no_leader', subject: 'dispatcher', severity: 'error' });
  });
});
