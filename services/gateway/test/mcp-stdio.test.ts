/**
 * vouch-mcp, the stdio entry, as a local agent host runs it: a child process
 * with VOUCH_URL and VOUCH_API_KEY in its environment, spoken to over its
 * stdin and stdout by the SDK's own client, on both protocol revisions.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobHandleSchema, jobsGet, ledgerOpen } from '@vouch/contracts';
import { repoRoot } from '@vouch/testing';
import { startLedgerServiceUnderTest } from '../../ledger-critic/test/ledger-test-env.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { textOf, type McpRevision } from './mcp-client.js';

// The repository's own workspace package (not the build handout beside a checkout).
const MAIN = join(repoRoot(), 'shared', 'mcp-stdio', 'src', 'main.ts');
const NODE_ARGS = ['--conditions=@vouch/source', '--import', 'tsx', MAIN];

let gw: GatewayUnderTest;
let ledger: { stop(): Promise<void> } | undefined;
let key: string;
beforeAll(async () => {
  // The ledger-critic and no extractor: extraction jobs stay waiting, so jobs_wait reports progress.
  gw = await startGatewayUnderTest('mcp-stdio');
  ledger = await startLedgerServiceUnderTest('mcp-stdio', {}, { prefix: gw.prefix });
  key = await gw.createKey('stdio');
});
afterAll(async () => {
  await ledger?.stop();
  await gw?.stop();
});

async function spawnRelay(revision: McpRevision): Promise<Client> {
  const client = new Client({ name: `stdio-host-${revision}`, version: '1.0.0' }, revision === 'current' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(new StdioClientTransport({ command: process.execPath, args: NODE_ARGS, env: { PATH: process.env.PATH ?? '', VOUCH_URL: gw.url, VOUCH_API_KEY: key }, stderr: 'pipe' }));
  return client;
}

describe.each<McpRevision>(['current', 'older'])('vouch-mcp to a %s-revision host', (revision) => {
  let client: Client;
  beforeAll(async () => {
    client = await spawnRelay(revision);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists the gateway\'s tools for the key and runs them in its tenant', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('ledger_open');
    expect(tools.find((t) => t.name === 'ledger_get')?.annotations).toMatchObject({ readOnlyHint: true });
    const opened = await client.callTool({ name: 'ledger_open', arguments: { runId: `stdio-${revision}`, goal: 'over stdio' } });
    expect(ledgerOpen.output.parse(opened.structuredContent)).toMatchObject({ runId: `stdio-${revision}`, goal: 'over stdio' });
    const http = await gw.fetch(`/v1/ledgers/stdio-${revision}`, { key });
    expect(http.status).toBe(200);
    const render = await client.readResource({ uri: `vouch://ledgers/stdio-${revision}/render` });
    expect((render.contents[0] as { text: string }).text).toMatch(/^Run stdio-/);
  });

  it('passes tool errors and jobs_wait progress through', async () => {
    const bad = await client.callTool({ name: 'ledger_open', arguments: { runId: 'a b', goal: 'x' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('runId must be printable ASCII with no spaces');
    const started = await client.callTool({ name: 'artifact_extractDeterministic', arguments: { artifactId: 'art-0f3a9c2d4e5b6a7980112233', requirements: [{ id: 'baudRate' }] } });
    const { jobId } = JobHandleSchema.parse(started.structuredContent);
    const progress: unknown[] = [];
    const waited = await client.callTool({ name: 'jobs_wait', arguments: { jobId, waitSeconds: 3 } }, { onprogress: (p) => void progress.push(p) });
    expect(jobsGet.output.parse(waited.structuredContent)).toMatchObject({ jobId, state: 'waiting' });
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });
});

describe('vouch-mcp refused', () => {
  // Asynchronously: the gateway it talks to runs in this process.
  const run = (env: Record<string, string>) =>
    new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, NODE_ARGS, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (status) => resolve({ status, stderr }));
      child.stdin.end();
    });

  it('stops at once, saying which variable to set, without a key', async () => {
    const r = await run({ VOUCH_URL: gw.url });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('vouch-mcp: VOUCH_API_KEY is not set');
  });

  it('says the gateway refused the key, without printing it', async () => {
    const bogus = 'vk_000000000000_not-a-key-at-all-not-a-key-at-all-not-a-key';
    const r = await run({ VOUCH_URL: gw.url, VOUCH_API_KEY: bogus });
    expect(r.status).toBe(69);
    expect(r.stderr).toMatch(/could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(r.stderr).not.toContain(bogus);
  });
});
