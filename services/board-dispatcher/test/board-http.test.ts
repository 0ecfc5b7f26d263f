import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { readEvents } from '../src/board-store.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const BOARD = 'run-7f3a';

describe('the board over HTTP through the real gateway', () => {
  let gw: GatewayUnderTest;
  let svc: BoardServiceUnderTest;
  let key: string;
  let other: string;
  /** Actors are keys: each agent of the run (planner, workers, verifier) calls with its own key. */
  const as = (agent: string) => gw.agentKey('acme', agent);

  beforeAll(async () => {
    gw = await startGatewayUnderTest('board_http');
    svc = await startBoardServiceUnderTest('board_http', {}, { prefix: gw.prefix });
    key = await as('planner');
    other = await gw.createKey('globex');
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  const call = async (path: string, init: { key?: string; json?: unknown; method?: string } = {}) => {
    const res = await gw.fetch(path, { key: init.key ?? key, ...(init.json !== undefined ? { json: init.json } : {}), ...(init.method ? { method: init.method } : {}) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const version = async () => (await call(`/v1/boards/${BOARD}?limit=0`)).body.board.version as number;

  it('runs a board end to end: create, add, dispatch, claim, heartbeat, submit, review, synthesize', async () => {
    const created = await call('/v1/boards', { json: { boardId: BOARD, title: 'Check the router fleet', scope: { kind: 'run', ref: BOARD }, owner: 'planner' } });
    expect(created).toMatchObject({ status: 200, body: { boardId: BOARD, version: 1, status: 'open', alreadyCreated: false, policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1 } } });

    const added = await call(`/v1/boards/${BOARD}/cards`, {
      json: {
        by: 'planner',
        cards: [
          { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the inventory output'] },
          { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
        ],
      },
    });
    expect(added).toMatchObject({ status: 200, body: { version: 3, cards: [{ key: 'list', id: 'c-1', status: 'ready' }, { key: 'report', id: 'c-2', status: 'todo' }] } });

    const worker1 = await as('worker-1');
    const claim = await call('/v1/board-claims', { key: worker1, json: { waitSeconds: 10 } });
    expect(claim).toMatchObject({ status: 200, body: { claimed: true, boardId: BOARD, attempt: 1, leaseSeconds: 120, card: { id: 'c-1', status: 'running' } } });
    const token = claim.body.claimToken as string;
    expect(token).toMatch(/^ct_/);

    const beat = await call(`/v1/boards/${BOARD}/cards/c-1/heartbeat`, { key: worker1, json: { claimToken: token } });
    expect(beat).toMatchObject({ status: 200, body: { cardId: 'c-1', status: 'running' } });
    expect(Date.parse(beat.body.leaseExpiresAt)).toBeGreaterThan(Date.now());

    const submitted = await call(`/v1/boards/${BOARD}/cards/c-1/submission`, {
      key: worker1,
      json: { claimToken: token, summary: 'Listed 12 routers; 3 run firmware 1.2', evidence: [{ kind: 'tool_result', ref: 'call-17', summary: 'inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }] },
    });
    expect(submitted).toMatchObject({ status: 200, body: { alreadySubmitted: false, card: { status: 'submitted', submittedBy: 'worker-1', evidence: [{ id: 'e-1' }] } } });
    expect(submitted.body.card).not.toHaveProperty('submittedUnder');

    // The same submission again, as a client whose answer was lost would send it: recorded once, answered as the success it was.
    const again = await call(`/v1/boards/${BOARD}/cards/c-1/submission`, {
      key: worker1,
      json: { claimToken: token, summary: 'Listed 12 routers; 3 run firmware 1.2', evidence: [{ kind: 'tool_result', ref: 'call-17', summary: 'inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }] },
    });
    expect(again).toMatchObject({ status: 200, body: { alreadySubmitted: true, version: submitted.body.version, card: { status: 'submitted', evidence: [{ id: 'e-1' }] } } });
    expect(again.body.card.evidence).toHaveLength(1);
    // Another summary under the ended claim is another submission: refused.
    const other = await call(`/v1/boards/${BOARD}/cards/c-1/submission`, { key: worker1, json: { claimToken: token, summary: 'Listed 13 routers' } });
    expect(other.status).toBe(409);

    const selfReview = await call(`/v1/boards/${BOARD}/cards/c-1/review`, { key: worker1, json: { decision: 'approve' } });
    expect(selfReview.status).toBe(403);
    expect(selfReview.body.detail).toMatch(/^worker-1 submitted card c-1 and may not review it/);

    const verifier = await as('verifier-1');
    const reviewed = await call(`/v1/boards/${BOARD}/cards/c-1/review`, { key: verifier, json: { reviewer: 'verifier-1', decision: 'auto' } });
    expect(reviewed).toMatchObject({ status: 200, body: { decision: 'approve', card: { status: 'verified' } } });
    expect(reviewed.body.reasons).toEqual(['requirement r1 (the inventory output) is shown by e-1: "inventory: 12 routers"', 'OLLAMA_HOST is not set: the rule check decided alone']);

    // c-2 became ready when c-1 was verified; the dispatcher gives it to worker-2.
    const worker2 = await as('worker-2');
    const second = await call('/v1/board-claims', { key: worker2, json: { boardId: BOARD, waitSeconds: 10 } });
    expect(second.body).toMatchObject({ claimed: true, card: { id: 'c-2' } });
    await call(`/v1/boards/${BOARD}/cards/c-2/submission`, { key: worker2, json: { claimToken: second.body.claimToken, summary: 'c-4 and c-9 run 1.2', evidence: [{ kind: 'message', summary: 'routers c-4 and c-9 are on 1.2' }] } });
    const changes = await call(`/v1/boards/${BOARD}/cards/c-2/review`, { key: verifier, json: { decision: 'request_changes', missing: ['the third outdated router'] } });
    expect(changes.body).toMatchObject({ decision: 'request_changes', card: { status: 'changes_requested', lastReview: { missing: ['the third outdated router'] } } });

    const shown = await call(`/v1/boards/${BOARD}`);
    expect(shown.status).toBe(200);
    expect(shown.body.text.split('\n')[0]).toMatch(/^Board run-7f3a "Check the router fleet" open, v\d+: 2 cards \(1 (changes_requested|dispatched), 1 verified\)$/);
    expect(shown.body.totalCards).toBe(2);

    const synthesis = await call(`/v1/boards/${BOARD}/synthesis`, { json: {} });
    expect(synthesis.body).toMatchObject({ complete: false, verified: [{ cardId: 'c-1' }], unresolved: [{ cardId: 'c-2' }] });
    expect(synthesis.body.text).toContain('Listed 12 routers; 3 run firmware 1.2');
    expect(synthesis.body.text).not.toContain('c-4 and c-9 run 1.2');
  });

  it('answers bad input with a clear 4xx that names the field and the way out, and changes nothing', async () => {
    // The dispatcher gives c-2 back to worker-2 after its changes were
    // requested, in its own time: wait for that write, or it lands in the middle.
    await eventually('c-2 to be dispatched again', async () => {
      const events = await readEvents(svc.service.pool, { tenant: 'acme', boardId: BOARD });
      const last = events.findLast((e) => 'cardId' in e && e.cardId === 'c-2');
      return last?.type === 'card_dispatched' ? true : undefined;
    });
    const before = await version();
    const events = (await readEvents(svc.service.pool, { tenant: 'acme', boardId: BOARD })).length;

    const unknown = await call(`/v1/boards/${BOARD}/cards/c-21/evidence`, { json: { items: [{ kind: 'message', summary: 'done' }] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe(`board "${BOARD}" has no card "c-21" (cardId): did you mean c-2, c-1, list? List the cards with board.show.`);

    const cycle = await call(`/v1/boards/${BOARD}/cards`, { json: { by: 'planner', cards: [{ key: 'a', title: 'A', dependsOn: ['b'] }, { key: 'b', title: 'B', dependsOn: ['a'] }] } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.fields).toEqual([{ path: 'cards.0.dependsOn', message: 'cycle c-3 (a) → c-4 (b) → c-3 (a)' }]);

    const empty = await call(`/v1/boards/${BOARD}/cards/c-2/evidence`, { json: { items: [{ kind: 'tool_result', summary: '   ' }] } });
    expect(empty.status).toBe(400);
    expect(empty.body.fields[0]).toMatchObject({ path: 'items.0.summary' });
    expect(empty.body.fields[0].message).toMatch(/evidence without content is not evidence/);

    const illegal = await call(`/v1/boards/${BOARD}/cards/c-1/changes`, { json: { by: 'planner', status: 'ready' } });
    expect(illegal.status).toBe(409);
    expect(illegal.body.detail).toMatch(/^card c-1 is verified and cannot go to ready/);

    const stale = await call(`/v1/boards/${BOARD}/cards/c-1/heartbeat`, { json: { claimToken: 'ct_notmine' } });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/call board\.claimCard for new work$/);

    const foreign = await call(`/v1/boards/${BOARD}`, { key: other });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe(`no board "${BOARD}": create it with board.create first (board ids are per tenant)`);
    const foreignWrite = await call(`/v1/boards/${BOARD}/cards/c-1/evidence`, { key: other, json: { items: [{ kind: 'message', summary: 'hi' }] } });
    expect(foreignWrite.status).toBe(404);

    expect(await version()).toBe(before);
    expect(await readEvents(svc.service.pool, { tenant: 'acme', boardId: BOARD })).toHaveLength(events);

    // The hallucinated id is on record, deduplicated, with the closest ids.
    await call(`/v1/boards/${BOARD}/cards/c-21/evidence`, { json: { items: [{ kind: 'message', summary: 'done' }] } });
    const diagnostics = await call(`/v1/boards/${BOARD}/diagnostics`);
    expect(diagnostics.status).toBe(200);
    expect(diagnostics.body.diagnostics).toContainEqual(
      expect.objectContaining({ kind: 'unknown_card', subject: 'c-21', count: 2, severity: 'error', suggestedAction: 'use a real card id (closest: c-2, c-1, list); list them with board.show' }),
    );
    expect(diagnostics.body.leader).toMatchObject({ healthy: true });
  });

  it('a claim with nothing to do waits, then answers claimed: false', async () => {
    const res = await call('/v1/board-claims', { key: await as('idle-worker'), json: { waitSeconds: 1 } });
    expect(res).toMatchObject({ status: 200, body: { claimed: false } });
  });

  it('puts each dispatched attempt on its assignee\'s work queue and takes it off when claimed', async () => {
    await call(`/v1/boards/${BOARD}/cards`, { json: { by: 'planner', cards: [{ title: 'Reboot r-3', assignee: 'worker-9' }] } });
    const queue = svc.service.dispatcher;
    expect(queue.isLeader).toBe(true);
    const { Queue } = await import('bullmq');
    const work = new Queue('board-work.acme.worker-9', { connection: { url: svc.env.REDIS_URL }, prefix: svc.prefix });
    try {
      await eventually('the dispatch job', async () => ((await work.getJob(`${BOARD}.c-3.1`)) ? true : undefined));
      const claimed = await call('/v1/board-claims', { key: await as('worker-9'), json: { waitSeconds: 5 } });
      expect(claimed.body).toMatchObject({ claimed: true, card: { id: 'c-3' } });
      await eventually('the job to leave the queue', async () => ((await work.getJob(`${BOARD}.c-3.1`)) ? undefined : true));
    } finally {
      await work.close();
    }
  });
});
