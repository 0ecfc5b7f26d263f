/**
 * Actors are keys: a key carries the agent it acts as (`--agent`, or
 * `key-<id>` without one), the gateway puts it on every job it queues, from
 * the key and never from the body, through HTTP and MCP alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, agentOfKey } from '@vouch/contracts';
import { createConsumerRedis } from '@vouch/platform';
import { TEST_REDIS_URL } from '@vouch/testing';
import { ApiKeyCache } from '../src/api-key-cache.js';
import { authenticateApiKey, createApiKey } from '../src/api-keys.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { connectMcp } from './mcp-client.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- CLI and response bodies are checked by assertion, not by type
type Json = any;

describe('API keys carry the agent they act as', () => {
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('key_agents');
  });
  afterAll(async () => {
    await gw?.stop();
  });

  // Each CLI run is a tsx process (a few seconds on a loaded machine): two here, one in the next test.
  it('`npm run keys -- create --agent` names it, `list` shows it, and a key made without one acts as key-<id>', { timeout: 60_000 }, async () => {
    const named = gw.keys('create', '--tenant', 'acme', '--agent', 'worker-1', '--json');
    expect(named.status, named.stderr).toBe(0);
    const namedKey: Json = JSON.parse(named.stdout);
    expect(namedKey).toMatchObject({ tenant: 'acme', agent: 'worker-1', agentNamed: true });

    const plain = (await createApiKey(gw.gateway.pool, { tenant: 'acme' })).record;
    expect(plain).toMatchObject({ agent: `key-${plain.id}`, agentNamed: false });

    const listed = gw.keys('list', '--tenant', 'acme');
    expect(listed.status, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(rows.find((r) => r[0] === namedKey.id)?.slice(0, 3)).toEqual([namedKey.id, 'acme', 'agent=worker-1']);
    expect(rows.find((r) => r[0] === plain.id)?.slice(0, 3)).toEqual([plain.id, 'acme', `agent=key-${plain.id}`]);
  });

  it('refuses the board\'s own actors, key-derived names and malformed names as a key\'s agent, saying what to do', { timeout: 60_000 }, async () => {
    const reserved = gw.keys('create', '--tenant', 'acme', '--agent', 'builtin-verifier');
    expect(reserved.status).toBe(2);
    expect(reserved.stderr.split('\n')[0]).toBe(
      'keys: --agent "builtin-verifier": "builtin-verifier" is reserved for the board\'s own verifier: no key may act as it; choose another name (e.g. verifier-1)',
    );
    await expect(createApiKey(gw.gateway.pool, { tenant: 'acme', agent: 'dispatcher' })).rejects.toThrow(
      'invalid agent "dispatcher": "dispatcher" is reserved for the board\'s own dispatcher: no key may act as it; choose another name (e.g. verifier-1)',
    );
    await expect(createApiKey(gw.gateway.pool, { tenant: 'acme', agent: 'key-abcdef012345' })).rejects.toThrow(/has the shape of the name a key without --agent acts as/);
    await expect(createApiKey(gw.gateway.pool, { tenant: 'acme', agent: 'Worker 1' })).rejects.toThrow(/an agent id is lowercase letters, digits/);
  });

  it('authenticates a key with its agent, from Postgres and from the cache alike', async () => {
    const named = await createApiKey(gw.gateway.pool, { tenant: 'acme', agent: 'verifier-1' });
    const plain = await createApiKey(gw.gateway.pool, { tenant: 'acme' });
    expect(await authenticateApiKey(gw.gateway.pool, named.key)).toMatchObject({ keyId: named.record.id, agent: 'verifier-1' });
    expect(await authenticateApiKey(gw.gateway.pool, plain.key)).toMatchObject({ keyId: plain.record.id, agent: agentOfKey(plain.record.id) });
    const subscriber = createConsumerRedis(TEST_REDIS_URL);
    const cache = new ApiKeyCache(gw.gateway.pool, subscriber, `${gw.prefix}-agents`);
    try {
      if (subscriber.status !== 'ready') await new Promise((r) => subscriber.once('ready', r));
      await cache.start();
      for (let i = 0; i < 2; i++) expect(await cache.authenticate(named.key)).toMatchObject({ tenant: 'acme', agent: 'verifier-1' });
    } finally {
      await cache.close();
      subscriber.disconnect();
    }
  });

  it('puts the key\'s agent on the job it queues, through HTTP and MCP, and no body can set it', async () => {
    const key = await gw.agentKey('acme', 'worker-7');
    const queued = async (jobId: string) => (await gw.gateway.hub.queue(QUEUES.ledgerCritic).getJob(jobId.slice(`${QUEUES.ledgerCritic}.`.length)))!.data;

    const http = await gw.fetch('/v1/ledgers/run-actors/completion', { key, json: { summary: 'done' } });
    expect(http.status).toBe(202);
    const viaHttp = await queued(((await http.json()) as Json).jobId);
    expect(viaHttp.actor).toEqual({ agent: 'worker-7', keyId: expect.stringMatching(/^[a-z0-9]{12}$/) });

    const mcp = await connectMcp(gw.url, key, 'current');
    try {
      const result = await mcp.callTool({ name: 'ledger_proposeCompletion', arguments: { runId: 'run-actors', summary: 'done over MCP' } });
      expect(result.isError).toBeFalsy();
      expect((await queued((result.structuredContent as Json).jobId)).actor).toEqual(viaHttp.actor);
    } finally {
      await mcp.close();
    }

    const forged = await gw.fetch('/v1/ledgers/run-actors/completion', { key, json: { summary: 'done', actor: { agent: 'someone-else', keyId: 'x' } } });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as Json).fields).toEqual([{ path: 'actor', message: 'Unrecognized key: this operation has no such field; remove it' }]);
  });
});
