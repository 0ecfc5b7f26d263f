/**
 * Long-polls never hold a worker (issue 17): a board.claimCard that waits
 * for work waits in the gateway, not in a board-dispatcher job. The service
 * runs with 4 worker slots here, so any claim that held one while it waited
 * would starve every other board operation, of every tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, metricValue, testActor } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { lastPolls } from '../src/board-store.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

/** The per-tenant cap of this gateway; (a) and (b) stay under it, (c) fills it. */
const CAP = 21;

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
  /** Date.now() when the answer arrived. */
  at: number;
}

describe('waiting claims hold no board-dispatcher worker slot', () => {
  let gw: GatewayUnderTest;
  let svc: BoardServiceUnderTest;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('claim_waits', { BOARD_CLAIM_WAITS_PER_TENANT: String(CAP) });
    svc = await startBoardServiceUnderTest('claim_waits', { WORKER_CONCURRENCY: '4' }, { prefix: gw.prefix });
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  const call = async (tenant: string, agent: string, path: string, init: { json?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const res = await gw.fetch(path, { key: await gw.agentKey(tenant, agent), ...init });
    return { status: res.status, body: (await res.json()) as Json, headers: res.headers, at: Date.now() };
  };
  const claim = (tenant: string, agent: string, waitSeconds: number, idempotencyKey?: string) =>
    call(tenant, agent, '/v1/board-claims', { json: { waitSeconds }, ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}) });
  /** Agents of `tenant` whose claims have looked for work at least once. */
  const polled = async (tenant: string, prefix: string) => Object.keys(await lastPolls(svc.service.pool, tenant)).filter((a) => a.startsWith(prefix)).length;
  /** A board made in the service directly: the HTTP path is what each test measures, not what it sets up. */
  const boardWith = async (tenant: string, boardId: string, cards: Array<{ title: string; assignee: string }> = []) => {
    const caller = (j: string) => ({ tenant, jobId: `${boardId}-${j}`, actor: testActor('planner') });
    await svc.service.commands.create(caller('create'), { boardId, title: boardId, goal: '', scope: { kind: 'run', ref: boardId }, owner: 'planner', policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60 } });
    if (cards.length) await addCards(tenant, boardId, cards, 'add');
  };
  const addCards = (tenant: string, boardId: string, cards: Array<{ title: string; assignee: string }>, job: string) =>
    svc.service.commands.addCards(
      { tenant, jobId: `${boardId}-${job}`, actor: testActor('planner') },
      { boardId, by: 'planner', cards: cards.map((c) => ({ description: '', lane: 'worker' as const, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [], ...c })) },
    );
  const waiting = () => metricValue(gw.gateway.metrics.registry, 'vouch_gateway_board_claims_waiting');

  it('(a) tenant A holds 20 waiting claims while tenant B\'s board.show answers at once', async () => {
    await boardWith('globex', 'b-board', [{ title: 'something to show', assignee: 'b-worker' }]);
    const bKey = await gw.agentKey('globex', 'b-reader');
    const started = Date.now();
    let answered = 0;
    const claims = Array.from({ length: 20 }, (_, k) => claim('acme', `idle-${k}`, 10).finally(() => (answered += 1)));
    // Every slot is taken by a claim before B asks, had the claims kept them.
    await eventually('four of A\'s claims looking for work', async () => ((await polled('acme', 'idle-')) >= 4 ? true : undefined));

    const asked = Date.now();
    const res = await gw.fetch('/v1/boards/b-board', { key: bKey, signal: AbortSignal.timeout(15_000) }).catch((err: unknown) => err);
    const showMs = Date.now() - asked;
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(200);
    expect(showMs).toBeLessThan(2_000);
    expect(answered).toBe(0);

    // Every claim still waited its 10 s and came back empty, as before.
    for (const answer of await Promise.all(claims)) {
      expect(answer).toMatchObject({ status: 200, body: { claimed: false } });
      expect(answer.at - started).toBeGreaterThanOrEqual(9_500);
    }
  }, 40_000);

  it('(b) a waiting claim is answered within a second of a card for it becoming ready', async () => {
    await boardWith('acme', 'b-ready');
    const busy = Array.from({ length: 8 }, (_, k) => claim('acme', `busy-${k}`, 5));
    await eventually('four of the busy claims looking for work', async () => ((await polled('acme', 'busy-')) >= 4 ? true : undefined));
    const mine = claim('acme', 'ready-worker', 10, 'ready-claim');
    // It looks once at once (a claim that had to queue behind the busy ones for a slot would not), then waits.
    await eventually('the claim looking for work', async () => ((await polled('acme', 'ready-worker')) >= 1 ? true : undefined), 3_000);

    await addCards('acme', 'b-ready', [{ title: 'do it now', assignee: 'ready-worker' }], 'ready');
    const added = Date.now();
    const answer = await mine;
    expect(answer).toMatchObject({ status: 200, body: { claimed: true, boardId: 'b-ready', card: { id: 'c-1', status: 'running' }, attempt: 1 } });
    expect(answer.at - added).toBeLessThan(1_000);
    // A retry with its Idempotency-Key gets the same claim back, never a second card.
    const again = await claim('acme', 'ready-worker', 10, 'ready-claim');
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(answer.body);
    await Promise.all(busy);
  }, 40_000);

  it('(c) past the tenant\'s cap a claim that would wait is refused 429, with Retry-After and the way out', async () => {
    const claims = Array.from({ length: CAP }, (_, k) => claim('initech', `cap-${k}`, 4));
    await eventually(`all ${CAP} claims looking for work`, async () => ((await polled('initech', 'cap-')) >= CAP ? true : undefined), 20_000);

    const refused = await claim('initech', 'cap-extra', 4, 'cap-retry');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
    expect(refused.body.detail).toContain(`${CAP} board.claimCard requests of tenant initech are already waiting`);
    expect(refused.body.detail).toContain('BOARD_CLAIM_WAITS_PER_TENANT');
    expect(refused.body.detail).toContain('waitSeconds: 0');
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    // The cap is per tenant, and a claim that does not wait is never refused.
    expect(await claim('initech', 'cap-extra', 0)).toMatchObject({ status: 200, body: { claimed: false } });
    expect(await claim('globex', 'other-tenant', 1)).toMatchObject({ status: 200, body: { claimed: false } });

    for (const answer of await Promise.all(claims)) expect(answer).toMatchObject({ status: 200, body: { claimed: false } });
    // The waits are over: the tenant may wait again, and the refusal was not stored under its Idempotency-Key.
    const retried = await claim('initech', 'cap-extra', 1, 'cap-retry');
    expect(retried).toMatchObject({ status: 200, body: { claimed: false } });
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
  }, 40_000);

  it("(c2) the cap counts the tenant's waiting claims on every gateway, not on each", async () => {
    const other = await gw.replica();
    const claims = Array.from({ length: CAP }, (_, k) => claim('umbrella', `spread-${k}`, 4));
    await eventually(`all ${CAP} claims looking for work`, async () => ((await polled('umbrella', 'spread-')) >= CAP ? true : undefined), 20_000);

    // The tenant's claims all wait on the first gateway; the second refuses one more.
    const elsewhere = await fetch(`${other.url}/v1/board-claims`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await gw.agentKey('umbrella', 'spread-extra')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ waitSeconds: 4 }),
    });
    expect(elsewhere.status).toBe(429);
    expect(((await elsewhere.json()) as Json).detail).toContain(`${CAP} board.claimCard requests of tenant umbrella are already waiting, its limit across the gateways`);

    for (const answer of await Promise.all(claims)) expect(answer).toMatchObject({ status: 200, body: { claimed: false } });
    // The places were given back: the second gateway lets the tenant wait again.
    const again = await fetch(`${other.url}/v1/board-claims`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await gw.agentKey('umbrella', 'spread-extra')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ waitSeconds: 1 }),
    });
    expect(again.status).toBe(200);
    await other.stop();
  }, 40_000);

  it('(d) a claim whose client hung up stops waiting and takes no card', async () => {
    await boardWith('acme', 'b-gone');
    const hangUp = new AbortController();
    const gone = call('acme', 'gone-worker', '/v1/board-claims', { json: { waitSeconds: 10 }, signal: hangUp.signal }).catch((err: unknown) => err);
    await eventually('the claim looking for work', async () => ((await polled('acme', 'gone-worker')) >= 1 ? true : undefined));
    hangUp.abort();
    expect(await gone).toBeInstanceOf(Error);
    await eventually('the gateway to stop waiting for it', async () => ((await waiting()) === 0 ? true : undefined));

    await addCards('acme', 'b-gone', [{ title: 'nobody is there', assignee: 'gone-worker' }], 'gone');
    // Dispatched and relayed to the worker's queue (when a waiting claim would be told), or taken by a claim nobody reads.
    const status = async () => (await svc.service.commands.load({ tenant: 'acme', boardId: 'b-gone' }))!.cards['c-1']!.status;
    await eventually('the card dispatched and relayed, or claimed', async () => {
      const now = await status();
      if (now === 'running') return true;
      const { Queue } = await import('bullmq');
      const work = new Queue('board-work.acme.gone-worker', { connection: { url: svc.env.REDIS_URL }, prefix: svc.prefix });
      try {
        return now === 'dispatched' && (await work.getJob('b-gone.c-1.1')) ? true : undefined;
      } finally {
        await work.close();
      }
    });
    expect(await status()).toBe('dispatched');
    // The worker, back with a new request, gets the card at its first attempt.
    expect(await claim('acme', 'gone-worker', 0)).toMatchObject({ status: 200, body: { claimed: true, card: { id: 'c-1' }, attempt: 1 } });
  }, 40_000);
});
