import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const BOARD = 'pub-7f3a';

/**
 * A public board (the kanban work order's phase 5: strict scrutiny in a public
 * chat) through the real gateway, queue and Postgres: what its worker wrote
 * reaches the answer without the paths, refs and ids in it.
 */
describe('a public board over HTTP', () => {
  let gw: GatewayUnderTest;
  let svc: BoardServiceUnderTest;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('board_public');
    svc = await startBoardServiceUnderTest('board_public', {}, { prefix: gw.prefix });
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  const call = async (agent: string, path: string, json?: unknown) => {
    const res = await gw.fetch(path, { key: await gw.agentKey('acme', agent), ...(json !== undefined ? { json } : {}) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('answers board.synthesize in the public form, with no path, ref or internal id, and refuses the admin form', async () => {
    const created = await call('planner', '/v1/boards', { boardId: BOARD, title: 'Check the router fleet', scope: { kind: 'run', ref: BOARD }, owner: 'planner', visibility: 'public' });
    expect(created).toMatchObject({ status: 200, body: { boardId: BOARD, visibility: 'public', alreadyCreated: false } });
    await call('planner', `/v1/boards/${BOARD}/cards`, {
      by: 'planner',
      cards: [
        { title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the router inventory'] },
        // No assignee: it stays ready, and is blocked below.
        { title: 'Email the owners' },
      ],
    });
    await call('planner', `/v1/boards/${BOARD}/cards/c-2/changes`, { by: 'planner', status: 'blocked', blockReason: 'awaiting_input', reason: 'the owners list is not in yet' });

    const claim = await call('worker-1', '/v1/board-claims', { assignee: 'worker-1', boardId: BOARD, waitSeconds: 10 });
    expect(claim.body).toMatchObject({ claimed: true, card: { id: 'c-1' } });
    const token = claim.body.claimToken as string;
    const summary = `12 routers, 3 on firmware 1.2: wrote /home/agent/work/out.csv (call-17, c-2, ${token}, ${BOARD})`;
    const submitted = await call('worker-1', `/v1/boards/${BOARD}/cards/c-1/submission`, {
      claimToken: token,
      summary,
      evidence: [{ kind: 'file', ref: '/home/agent/work/out.csv', summary: 'router inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }],
    });
    expect(submitted).toMatchObject({ status: 200, body: { card: { status: 'submitted', submission: summary } } });
    const reviewed = await call('verifier-1', `/v1/boards/${BOARD}/cards/c-1/review`, { reviewer: 'verifier-1', decision: 'approve' });
    expect(reviewed).toMatchObject({ status: 200, body: { card: { status: 'verified' } } });

    const synthesis = await call('planner', `/v1/boards/${BOARD}/synthesis`, {});
    expect(synthesis.status).toBe(200);
    expect(synthesis.body).toMatchObject({ boardId: BOARD, form: 'public', complete: false, verified: [{ cardId: 'c-1', evidenceIds: ['e-1'] }], unresolved: [{ cardId: 'c-2', status: 'blocked' }] });
    expect(synthesis.body.text).toBe(
      [
        'Check the router fleet: not done yet, 1 of 2 items verified.',
        '',
        'Verified:',
        '- List the routers and their firmware: 12 routers, 3 on firmware 1.2: wrote a file (evidence: file)',
        '',
        '1 item is not done:',
        '- Email the owners (waiting for input)',
      ].join('\n'),
    );
    for (const leak of ['/home/agent', 'out.csv', 'call-17', 'c-1', 'c-2', 'e-1', token, BOARD, 'worker-1', 'verifier-1']) expect(synthesis.body.text).not.toContain(leak);

    const admin = await call('planner', `/v1/boards/${BOARD}/synthesis`, { form: 'admin' });
    expect(admin.status).toBe(400);
    expect(admin.body.detail).toMatch(/^board "pub-7f3a" is public: its answer comes only in the public form/);
    expect(admin.body.fields).toEqual([{ path: 'form', message: 'admin is refused on a public board: leave form out or pass public' }]);

    const shown = await call('planner', `/v1/boards/${BOARD}?limit=0`);
    expect(shown.body.board).toMatchObject({ visibility: 'public' });
  });
});
