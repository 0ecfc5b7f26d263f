import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { startLedgerServiceUnderTest, type LedgerServiceUnderTest } from '../../ledger-critic/test/ledger-test-env.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

/**
 * The spec's "runner includes board status in critic context": a ledger bound
 * to a board gets the board's unverified and blocked cards as open items of
 * every review, read by the ledger-critic through board.synthesize over the
 * queues (never the board's tables), and they keep the run from approval.
 */
describe('the completion critic sees the bound board', () => {
  let gw: GatewayUnderTest;
  let board: BoardServiceUnderTest;
  let ledger: LedgerServiceUnderTest;
  let key: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('critic_board');
    board = await startBoardServiceUnderTest('critic_board', {}, { prefix: gw.prefix });
    ledger = await startLedgerServiceUnderTest('critic_board', {}, { prefix: gw.prefix });
    key = await gw.agentKey('acme', 'planner');
  });
  afterAll(async () => {
    await ledger?.stop();
    await board?.stop();
    await gw?.stop();
  });

  /** Calls as the planner, or as `agent` with its own key (actors are keys). */
  const call = async (path: string, json?: unknown, agent?: string) => {
    const res = await gw.fetch(path, { key: agent ? await gw.agentKey('acme', agent) : key, ...(json !== undefined ? { json } : {}) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const propose = async (runId: string, summary: string) => {
    const accepted = await call(`/v1/ledgers/${runId}/completion`, { summary });
    expect(accepted.status).toBe(202);
    return (await call(`${accepted.body.statusUrl}?wait=20`)).body.result;
  };

  it('puts unverified and blocked cards into the critic packet as open items, and approves once they are verified', async () => {
    const boardId = 'fleet-run';
    await call('/v1/boards', { boardId, title: 'Router fleet', scope: { kind: 'run', ref: boardId }, owner: 'planner' });
    await call(`/v1/boards/${boardId}/cards`, {
      by: 'planner',
      cards: [
        { key: 'list', title: 'List the routers', assignee: 'worker-1' },
        { key: 'mail', title: 'Email the fleet owners', assignee: 'worker-2' },
      ],
    });
    await call(`/v1/boards/${boardId}/cards/c-2/changes`, { by: 'planner', status: 'blocked', blockReason: 'awaiting_input', reason: 'no owner list yet' });

    const runId = 'run-fleet';
    const opened = await call('/v1/ledgers', { runId, goal: 'List the routers and email their owners', boardId });
    expect(opened).toMatchObject({ status: 200, body: { runId, boardId } });
    await call(`/v1/ledgers/${runId}/evidence`, { items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: 'listed 12 routers in fleet.csv' }] });

    const first = await propose(runId, 'Listed 12 routers in fleet.csv.');
    expect(first).toMatchObject({ decision: 'request_changes', completed: false });
    const packet = (await call(`/v1/ledgers/${runId}/packet`)).body.packet;
    expect(packet.openItems).toEqual([
      { kind: 'board_card', text: 'c-2 Email the fleet owners: blocked (awaiting_input)', ref: 'c-2' },
      { kind: 'board_card', text: expect.stringMatching(/^c-1 List the routers: (ready|dispatched)/), ref: 'c-1' },
    ]);

    // Finish the board: c-1 verified, c-2 cancelled. The next review sees no open card.
    const claim = await call('/v1/board-claims', { waitSeconds: 10 }, 'worker-1');
    await call(`/v1/boards/${boardId}/cards/c-1/submission`, { claimToken: claim.body.claimToken, summary: 'listed 12 routers', evidence: [{ kind: 'file', ref: 'fleet.csv', summary: '12 routers listed' }] }, 'worker-1');
    await call(`/v1/boards/${boardId}/cards/c-1/review`, { decision: 'auto' }, 'verifier-1');
    await call(`/v1/boards/${boardId}/cards/c-2/changes`, { by: 'planner', status: 'cancelled', reason: 'owners will be emailed in another run' });
    const second = await propose(runId, 'Listed 12 routers in fleet.csv.');
    expect(second).toMatchObject({ decision: 'approve', completed: true });
    expect((await call(`/v1/ledgers/${runId}/packet`)).body.packet.openItems).toEqual([]);
  });

  it('a bound board that does not exist in the tenant is an open item, not an outage', async () => {
    const runId = 'run-ghost-board';
    await call('/v1/ledgers', { runId, goal: 'Say hello', policy: 'fast', boardId: 'no-such-board' });
    const outcome = await propose(runId, 'Said hello.');
    expect(outcome).toMatchObject({ decision: 'request_changes', completed: false });
    expect((await call(`/v1/ledgers/${runId}/packet`)).body.packet.openItems).toEqual([
      { kind: 'board_card', text: 'board "no-such-board" bound to this run does not exist: create it, or open the run without boardId' },
    ]);
  });
});
