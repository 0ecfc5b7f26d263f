import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, testActor } from '@vouch/testing';
import { SNAPSHOT_EVERY, loadBoard, loadSnapshot, readEvents, readHead, saveSnapshot } from '../src/board-store.js';
import { replayBoard } from '../src/domain/replay-board.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * Snapshots are written after the write that made them due has committed,
 * outside the board's head lock, by the command handlers and the dispatcher
 * alike; racing writers never put an older snapshot over a newer one.
 */
describe('board snapshots', () => {
  let svc: BoardServiceUnderTest;
  let jobs = 0;
  const caller = () => ({ tenant: 'acme', jobId: `snap-${++jobs}`, actor: testActor('planner') });
  const policy = { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60 };
  const cards = (n: number, from: number) =>
    Array.from({ length: n }, (_, i) => ({ title: `card ${from + i}`, description: '', lane: 'worker' as const, assignee: `agent-${from + i}`, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [] }));

  beforeAll(async () => {
    svc = await startBoardServiceUnderTest('board_snapshots');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('are written once a board passes SNAPSHOT_EVERY events, by writes and dispatch passes, and equal the replay of the events up to them', async () => {
    const key = { tenant: 'acme', boardId: 'snapped' };
    const { commands } = svc.service;
    await commands.create(caller(), { boardId: key.boardId, title: 'snapshots', goal: '', scope: { kind: 'project', ref: 'snap' }, owner: 'planner', policy });
    // Three batches of 150 cards: the second write passes 200 events, and each
    // dispatch pass (150 card_dispatched events) brings the next snapshot due.
    for (let from = 0; from < 450; from += 150) await commands.addCards(caller(), { boardId: key.boardId, by: 'planner', cards: cards(150, from) });
    await eventually('every card to be dispatched', async () => ((await loadBoard(svc.service.pool, key))?.cards['c-450']?.status === 'dispatched' ? true : undefined), 30_000);
    // The dispatcher writes its snapshot beside its loop, after its commit: one still in flight may land between two
    // reads (the head named 751, the snapshot read next was 901), so the head and the snapshot are taken as a pair,
    // read twice over the snapshot.
    const { head, snapshot } = await eventually('a snapshot within SNAPSHOT_EVERY events of the head, the one the head names', async () => {
      const h = await readHead(svc.service.pool, key);
      if (!h || h.version - h.snapshotVersion >= SNAPSHOT_EVERY) return undefined;
      const s = await loadSnapshot(svc.service.pool, key);
      const again = await readHead(svc.service.pool, key);
      return s && again?.snapshotVersion === h.snapshotVersion ? { head: h, snapshot: s } : undefined;
    });
    expect(head.version).toBe(1 + 450 + 450);
    expect(snapshot.version).toBe(head.snapshotVersion);
    const events = await readEvents(svc.service.pool, key);
    expect(snapshot).toStrictEqual(replayBoard(events.slice(0, snapshot.version)));
    expect(await loadBoard(svc.service.pool, key)).toStrictEqual(replayBoard(events));
  });

  it('keep the newer of two racing snapshots, in whichever order they land', async () => {
    const key = { tenant: 'acme', boardId: 'raced' };
    const { commands } = svc.service;
    await commands.create(caller(), { boardId: key.boardId, title: 'race', goal: '', scope: { kind: 'project', ref: 'race' }, owner: 'planner', policy });
    await commands.addCards(caller(), { boardId: key.boardId, by: 'planner', cards: cards(3, 0) });
    const events = await readEvents(svc.service.pool, key);
    const older = replayBoard(events.slice(0, 2))!;
    const newer = replayBoard(events.slice(0, 4))!;

    await saveSnapshot(svc.service.pool, key, newer);
    await saveSnapshot(svc.service.pool, key, older);
    expect((await loadSnapshot(svc.service.pool, key))!.version).toBe(4);
    expect((await readHead(svc.service.pool, key))!.snapshotVersion).toBe(4);

    // Side by side, many times over: the newest always stays.
    await Promise.all([2, 3, 4, 2, 3].map((v) => saveSnapshot(svc.service.pool, key, replayBoard(events.slice(0, v))!)));
    expect((await loadSnapshot(svc.service.pool, key))!.version).toBe(4);
    // The service's dispatcher may append (cards dispatched) between two reads: compare at the version loaded.
    const loaded = (await loadBoard(svc.service.pool, key))!;
    expect(loaded).toStrictEqual(replayBoard((await readEvents(svc.service.pool, key)).filter((e) => e.seq <= loaded.version)));
  });

  it('are not another tenant’s: the same board id in another tenant has its own', async () => {
    const { commands } = svc.service;
    await commands.create({ tenant: 'globex', jobId: `snap-${++jobs}` }, { boardId: 'raced', title: 'theirs', goal: '', scope: { kind: 'project', ref: 'race' }, owner: 'them', policy });
    expect(await loadSnapshot(svc.service.pool, { tenant: 'globex', boardId: 'raced' })).toBeUndefined();
    expect((await readHead(svc.service.pool, { tenant: 'globex', boardId: 'raced' }))!.snapshotVersion).toBe(0);
    expect((await loadBoard(svc.service.pool, { tenant: 'globex', boardId: 'raced' }))!.title).toBe('theirs');
  });
});
