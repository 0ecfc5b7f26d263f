/**
 * Actors are keys (DESIGN.md), over the real gateway and board service: who
 * claims, submits and reviews is the agent of the caller's key. A body that
 * names another agent is a 403 that changes nothing; the submitter's key
 * never reviews its own card unless the board allows it; the built-in
 * verifier's name is nobody's to send; the events name the key's agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { connectMcp, textOf } from '../../gateway/test/mcp-client.js';
import { createApiKey } from '../../gateway/src/api-keys.js';
import { readEvents } from '../src/board-store.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const BOARD = 'actors';
const REQUIREMENT = 'the inventory output';
const EVIDENCE = [{ kind: 'tool_result', ref: 'call-17', summary: 'the inventory output: 12 routers, 3 on firmware 1.2', covers: ['r1'] }];

describe('actors are keys: boards over the real gateway', () => {
  let gw: GatewayUnderTest;
  let svc: BoardServiceUnderTest;
  let claimToken: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('board_actors');
    svc = await startBoardServiceUnderTest('board_actors', {}, { prefix: gw.prefix });
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  /** Calls as `agent`, with its own key. */
  const call = async (agent: string, path: string, json?: unknown) => {
    const res = await gw.fetch(path, { key: await gw.agentKey('acme', agent), ...(json !== undefined ? { json } : {}) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const events = (boardId = BOARD) => readEvents(svc.service.pool, { tenant: 'acme', boardId });
  const card = async (cardId: string, boardId = BOARD) => (await svc.service.commands.load({ tenant: 'acme', boardId }))!.cards[cardId]!;
  const dispatched = (cardId: string, boardId = BOARD) =>
    eventually(`${cardId} dispatched`, async () => ((await card(cardId, boardId)).status === 'dispatched' ? true : undefined));

  /** A board whose c-1 is dispatched to `worker`, and c-2 is unassigned. */
  const boardFor = async (boardId: string, worker: string, allowSelfVerify: boolean) => {
    const created = await call('planner', '/v1/boards', { boardId, title: boardId, scope: { kind: 'run', ref: boardId }, owner: 'planner', policy: { allowSelfVerify } });
    expect(created.status).toBe(200);
    const added = await call('planner', `/v1/boards/${boardId}/cards`, {
      cards: [
        { title: 'List the routers', assignee: worker, evidenceRequirements: [REQUIREMENT] },
        { title: 'Keep notes', lane: 'verifier' },
      ],
    });
    expect(added.status).toBe(200);
    await dispatched('c-1', boardId);
  };

  it('claiming as another agent is a 403 naming the field and the way out, over HTTP and MCP, and the card stays as it was', async () => {
    await boardFor(BOARD, 'w9', false);
    const before = await events();

    const stolen = await call('w1', '/v1/board-claims', { assignee: 'w9', waitSeconds: 0 });
    expect(stolen.status).toBe(403);
    expect(stolen.body).toMatchObject({
      code: 'FORBIDDEN',
      detail: "this key acts as agent w1: omit `assignee` or send w1; to claim as w9, use w9's own key",
      fields: [{ path: 'assignee', message: 'w9 is not this key\'s agent (w1): omit it or send w1' }],
    });
    const mcp = await connectMcp(gw.url, await gw.agentKey('acme', 'w1'), 'current');
    try {
      const viaMcp = await mcp.callTool({ name: 'board_claimCard', arguments: { assignee: 'w9', waitSeconds: 0 } });
      expect(viaMcp.isError).toBe(true);
      expect(textOf(viaMcp)).toContain("(FORBIDDEN): this key acts as agent w1: omit `assignee` or send w1; to claim as w9, use w9's own key");
    } finally {
      await mcp.close();
    }
    // Its own claim finds nothing: nothing was dispatched to w1.
    expect(await call('w1', '/v1/board-claims', { waitSeconds: 0 })).toMatchObject({ status: 200, body: { claimed: false } });

    expect(await card('c-1')).toMatchObject({ status: 'dispatched', assignee: 'w9', attempt: 1, claim: null });
    expect(await events()).toEqual(before);

    // w9's key claims it, the assignee left out: it defaults to the key's agent.
    const claimed = await call('w9', '/v1/board-claims', { boardId: BOARD, waitSeconds: 10 });
    expect(claimed).toMatchObject({ status: 200, body: { claimed: true, card: { id: 'c-1', status: 'running' } } });
    claimToken = claimed.body.claimToken;
  });

  it('an Idempotency-Key is bound to the agent: another agent reusing it gets a 409, never the first agent\'s answer', async () => {
    const send = async (agent: string) =>
      gw.fetch('/v1/board-claims', { key: await gw.agentKey('acme', agent), json: { boardId: BOARD, waitSeconds: 0 }, headers: { 'Idempotency-Key': 'claim-once' } });
    const first = await send('w5');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ claimed: false });
    const other = await send('w6');
    expect(other.status).toBe(409);
    expect(((await other.json()) as Json).code).toBe('IDEMPOTENCY_CONFLICT');
    expect((await send('w5')).headers.get('idempotent-replayed')).toBe('true');
  });

  it('only the claim holder\'s key heartbeats and submits, even with the token', async () => {
    const beat = await call('w1', `/v1/boards/${BOARD}/cards/c-1/heartbeat`, { claimToken });
    expect(beat).toMatchObject({ status: 403, body: { code: 'FORBIDDEN', detail: "w9 holds the claim on card c-1, and this key acts as agent w1: heartbeat with w9's own key" } });
    const submit = await call('w1', `/v1/boards/${BOARD}/cards/c-1/submission`, { claimToken, summary: 'inventory: 12 routers, 3 on firmware 1.2', evidence: EVIDENCE });
    expect(submit).toMatchObject({ status: 403, body: { detail: "w9 holds the claim on card c-1, and this key acts as agent w1: submit with w9's own key" } });
    expect(await card('c-1')).toMatchObject({ status: 'running', evidence: [] });

    const submitted = await call('w9', `/v1/boards/${BOARD}/cards/c-1/submission`, { claimToken, summary: 'inventory: 12 routers, 3 on firmware 1.2', evidence: EVIDENCE });
    expect(submitted).toMatchObject({ status: 200, body: { card: { status: 'submitted', submittedBy: 'w9', evidence: [{ id: 'e-1', attachedBy: 'w9' }] } } });
  });

  it('a reviewer named in the body must be the key\'s agent: w1 reviewing as w1-reviewer is a 403, and the card stays submitted', async () => {
    const before = await events();
    const review = await call('w1', `/v1/boards/${BOARD}/cards/c-1/review`, { reviewer: 'w1-reviewer', decision: 'approve' });
    expect(review).toMatchObject({
      status: 403,
      body: { code: 'FORBIDDEN', detail: "this key acts as agent w1: omit `reviewer` or send w1; to review as w1-reviewer, use w1-reviewer's own key", fields: [{ path: 'reviewer' }] },
    });
    expect(await card('c-1')).toMatchObject({ status: 'submitted', lastReview: null });
    expect(await events()).toEqual(before);
  });

  it('the submitter\'s key may not review its own card, auto included, while allowSelfVerify is false', async () => {
    const before = await events();
    const auto = await call('w9', `/v1/boards/${BOARD}/cards/c-1/review`, { decision: 'auto' });
    expect(auto).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect(auto.body.detail).toBe(
      "w9 submitted card c-1 and may not ask the built-in verifier about it: the board's policy does not allow self-verification. Another agent's key must ask (approve, request_changes, or auto for the built-in verifier)",
    );
    const approve = await call('w9', `/v1/boards/${BOARD}/cards/c-1/review`, { reviewer: 'w9', decision: 'approve' });
    expect(approve.status).toBe(403);
    expect(approve.body.detail).toMatch(/^w9 submitted card c-1 and may not review it: /);
    const changes = await call('w9', `/v1/boards/${BOARD}/cards/c-1/review`, { decision: 'request_changes', missing: ['more'] });
    expect(changes.status).toBe(403);
    expect(await card('c-1')).toMatchObject({ status: 'submitted', lastReview: null });
    expect(await events()).toEqual(before);

    // Another agent's key asks the built-in verifier: allowed, and recorded as its request.
    const reviewed = await call('verifier-1', `/v1/boards/${BOARD}/cards/c-1/review`, { decision: 'auto' });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.card.lastReview).toMatchObject({ reviewer: 'builtin-verifier', requestedBy: 'verifier-1', notes: 'built-in verifier, asked by verifier-1' });
  });

  it('with allowSelfVerify the submitter\'s key may approve its own card, and ask the built-in verifier about it', async () => {
    await call('planner', '/v1/boards', { boardId: 'lax', title: 'lax', scope: { kind: 'run', ref: 'lax' }, owner: 'planner', policy: { allowSelfVerify: true } });
    await call('planner', '/v1/boards/lax/cards', {
      cards: [
        { title: 'List the routers', assignee: 'w7', evidenceRequirements: [REQUIREMENT] },
        { title: 'List the routers again', assignee: 'w7', evidenceRequirements: [REQUIREMENT] },
      ],
    });
    const work = async (cardId: string) => {
      const claimed = await call('w7', '/v1/board-claims', { boardId: 'lax', waitSeconds: 10 });
      expect(claimed.body).toMatchObject({ claimed: true, card: { id: cardId } });
      const submitted = await call('w7', `/v1/boards/lax/cards/${cardId}/submission`, { claimToken: claimed.body.claimToken, summary: 'inventory: 12 routers, 3 on firmware 1.2', evidence: EVIDENCE });
      expect(submitted.status).toBe(200);
    };

    await work('c-1');
    const approved = await call('w7', '/v1/boards/lax/cards/c-1/review', { decision: 'approve' });
    expect(approved).toMatchObject({ status: 200, body: { decision: 'approve', card: { status: 'verified', submittedBy: 'w7', lastReview: { reviewer: 'w7', decision: 'approve' } } } });

    await work('c-2');
    const auto = await call('w7', '/v1/boards/lax/cards/c-2/review', { decision: 'auto' });
    expect(auto.status).toBe(200);
    expect(auto.body.card.lastReview).toMatchObject({ reviewer: 'builtin-verifier', requestedBy: 'w7' });
  });

  it('nobody sends the built-in verifier\'s (or the dispatcher\'s) name, in a body or as a key\'s agent', async () => {
    const before = await events();
    const reviewer = await call('verifier-1', `/v1/boards/${BOARD}/cards/c-2/review`, { reviewer: 'builtin-verifier', decision: 'approve' });
    expect(reviewer).toMatchObject({
      status: 400,
      body: { fields: [{ path: 'reviewer', message: '"builtin-verifier" is the board\'s own verifier and cannot be named by a caller: ask for it with board.reviewCard decision auto' }] },
    });
    const assignee = await call('planner', `/v1/boards/${BOARD}/cards`, { cards: [{ title: 'Verify everything', assignee: 'builtin-verifier' }] });
    expect(assignee).toMatchObject({ status: 400, body: { fields: [{ path: 'cards.0.assignee' }] } });
    const by = await call('planner', `/v1/boards/${BOARD}/cards/c-2/changes`, { by: 'dispatcher', priority: 'high' });
    expect(by).toMatchObject({ status: 400, body: { fields: [{ path: 'by', message: '"dispatcher" is the board\'s own dispatcher and cannot be named by a caller: it acts on its own' }] } });
    expect(await events()).toEqual(before);
    await expect(createApiKey(gw.gateway.pool, { tenant: 'acme', agent: 'builtin-verifier' })).rejects.toThrow(/"builtin-verifier" is reserved for the board's own verifier: no key may act as it/);
  });

  it('the events name the key\'s agent, and a field left out is the key\'s agent (key-<id> for a key made without --agent)', async () => {
    const stream = await events();
    expect(stream.filter((e) => e.type === 'card_added').map((e) => (e as { by: string }).by)).toEqual(['planner', 'planner']);
    expect(stream.find((e) => e.type === 'card_claimed')).toMatchObject({ cardId: 'c-1', by: 'w9' });
    expect(stream.find((e) => e.type === 'card_submitted')).toMatchObject({ cardId: 'c-1', by: 'w9' });
    expect(stream.find((e) => e.type === 'evidence_attached')).toMatchObject({ by: 'w9', items: [{ attachedBy: 'w9' }] });
    expect(stream.find((e) => e.type === 'card_reviewed')).toMatchObject({ review: { reviewer: 'builtin-verifier', requestedBy: 'verifier-1' } });

    const anonymous = await createApiKey(gw.gateway.pool, { tenant: 'acme' });
    const agent = `key-${anonymous.record.id}`;
    const attach = async (json: unknown) => {
      const res = await gw.fetch(`/v1/boards/${BOARD}/cards/c-2/evidence`, { key: anonymous.key, json });
      return { status: res.status, body: (await res.json()) as Json };
    };
    expect(await attach({ items: [{ kind: 'message', summary: 'noted by a key without an agent' }] })).toMatchObject({ status: 200 });
    expect(await attach({ by: agent, items: [{ kind: 'message', summary: 'the same agent, named' }] })).toMatchObject({ status: 200 });
    expect(await attach({ by: 'planner', items: [{ kind: 'message', summary: 'not this key' }] })).toMatchObject({ status: 403, body: { fields: [{ path: 'by' }] } });
    const updated = await call('planner', `/v1/boards/${BOARD}/cards/c-2/changes`, { assignee: 'w3', reason: 'w3 takes the notes' });
    expect(updated).toMatchObject({ status: 200, body: { card: { assignee: 'w3' } } });

    // Assigned, c-2 can be dispatched: the dispatcher's card_dispatched (by no agent) may land before this read, or after.
    const tail = (await events()).slice(stream.length).filter((e) => e.type !== 'card_dispatched');
    expect(tail.map((e) => [e.type, (e as { by?: string }).by])).toEqual([
      ['evidence_attached', agent],
      ['evidence_attached', agent],
      ['card_updated', 'planner'],
    ]);
    expect((await card('c-2')).evidence.map((e) => e.attachedBy)).toEqual([agent, agent]);
  });

  it('a board created without an owner is owned by the agent of the creating key', async () => {
    const created = await call('lead-7', '/v1/boards', { boardId: 'owned-by-key', title: 'Owned', goal: 'g', scope: { kind: 'run', ref: 'owned-by-key' } });
    expect(created).toMatchObject({ status: 200, body: { boardId: 'owned-by-key', owner: 'lead-7' } });
    const named = await call('lead-7', '/v1/boards', { boardId: 'owned-by-name', title: 'Owned', goal: 'g', scope: { kind: 'run', ref: 'owned-by-name' }, owner: 'fleet-team' });
    expect(named).toMatchObject({ status: 200, body: { owner: 'fleet-team' } });
  });
});
