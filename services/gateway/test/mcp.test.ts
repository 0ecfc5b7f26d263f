/**
 * The gateway's /mcp endpoint driven by the SDK's own client, once speaking
 * the current protocol revision (2026-07-28, no handshake) and once an older
 * one (the 2025 initialize handshake), against the whole system.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, JobHandleSchema, OPERATIONS, buildMcpTools, jobsGet, ledgerGet, ledgerOpen, ledgerProposeCompletion, ledgerRecordEvidence, type OperationDef } from '@vouch/contracts';
import { createOperatorKey } from '../src/api-keys.js';
import { MCP_IDEMPOTENCY_META } from '../src/mcp-server.js';
import { startFullStack, type FullStack } from './full-stack.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { connectMcp, textOf, type McpRevision } from './mcp-client.js';

let stack: FullStack;
let keyA: string;
let keyB: string;
beforeAll(async () => {
  stack = await startFullStack('mcp');
  keyA = await stack.gw.createKey('mcp-a');
  keyB = await stack.gw.createKey('mcp-b');
});
afterAll(async () => {
  await stack?.stop();
});

/** Calls a tool and returns its structured result, validated against the operation's output schema. */
async function call<Op extends OperationDef>(client: Client, tool: string, op: Op, args: Record<string, unknown>) {
  const result = await client.callTool({ name: tool, arguments: args });
  expect(result.isError, textOf(result)).toBeFalsy();
  // The same JSON as text, for clients that read only text.
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return op.output.parse(result.structuredContent) as ReturnType<Op['output']['parse']>;
}

describe.each<McpRevision>(['current', 'older'])('an MCP client on the %s protocol revision', (revision) => {
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    a = await connectMcp(stack.gw.url, keyA, revision);
    b = await connectMcp(stack.gw.url, keyB, revision);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('negotiates the revision it asked for', () => {
    expect(a.getProtocolEra()).toBe(revision === 'current' ? 'modern' : 'legacy');
    expect(a.getNegotiatedProtocolVersion()).toBe(revision === 'current' ? '2026-07-28' : '2025-11-25');
  });

  it('lists the tools a key\'s scopes allow, and only those', async () => {
    const all = await a.listTools();
    // Every agent-facing operation of the table, in its order: a new one needs no change here.
    expect(all.tools.map((t) => t.name)).toEqual(buildMcpTools(OPERATIONS).map((t) => t.name));
    expect(all.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['jobs_wait', 'ledger_open', 'ledger_recordEvidence', 'ledger_proposeCompletion', 'ledger_get', 'artifact_read']));
    const open = all.tools.find((t) => t.name === 'ledger_open')!;
    expect(open).toMatchObject({
      title: 'Open the completion ledger of an agent run',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: { type: 'object', required: ['runId', 'goal'], additionalProperties: false },
    });
    expect(all.tools.find((t) => t.name === 'ledger_get')?.annotations).toMatchObject({ readOnlyHint: true });

    const readerKey = await stack.gw.createKey('mcp-a', 'ledger:read');
    const reader = await connectMcp(stack.gw.url, readerKey, revision);
    try {
      expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(['ledger_get']);
      // A tool outside the key's scopes is not there to call.
      const refused = await reader.callTool({ name: 'ledger_open', arguments: { runId: 'x', goal: 'y' } }).then(
        (r) => r,
        (err: Error) => err,
      );
      expect(String(refused instanceof Error ? refused.message : textOf(refused))).toMatch(/ledger_open/);
      expect((await reader.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)).toEqual(['vouch://ledgers/{runId}', 'vouch://ledgers/{runId}/render']);
    } finally {
      await reader.close();
    }
  });

  it('runs a ledger from open to render through MCP only', async () => {
    const runId = `mcp-flow-${revision}`;
    const opened = await call(a, 'ledger_open', ledgerOpen, { runId, goal: 'Set baudRate to 115200 in config/router.yaml and confirm it', policy: 'fast' });
    expect(opened).toMatchObject({ runId, status: 'open', alreadyOpened: false });
    const recorded = await call(a, 'ledger_recordEvidence', ledgerRecordEvidence, {
      runId,
      items: [
        { kind: 'file_change', toolName: 'editor', success: true, summary: 'Set baudRate: 115200 in config/router.yaml' },
        { kind: 'tool_result', toolName: 'shell', success: true, summary: 'cat config/router.yaml shows baudRate: 115200' },
      ],
    });
    expect(recorded.evidenceCount).toBe(2);

    const proposed = await a.callTool({ name: 'ledger_proposeCompletion', arguments: { runId, summary: 'Set baudRate to 115200 in config/router.yaml and confirmed it with cat.' } });
    expect(proposed.isError).toBeFalsy();
    const handle = JobHandleSchema.parse(proposed.structuredContent);
    expect(handle).toMatchObject({ operation: 'ledger.proposeCompletion', state: 'waiting' });

    const waited = await call(a, 'jobs_wait', jobsGet, { jobId: handle.jobId, waitSeconds: 30 });
    expect(waited.state).toBe('completed');
    const outcome = ledgerProposeCompletion.output.parse(waited.result);
    expect(outcome).toMatchObject({ runId, decision: 'approve', status: 'approved', completed: true });

    const ledger = await call(a, 'ledger_get', ledgerGet, { runId });
    expect(ledger).toMatchObject({ status: 'approved', completed: true });

    const render = await a.readResource({ uri: `vouch://ledgers/${runId}/render` });
    expect(render.contents).toHaveLength(1);
    expect(render.contents[0]).toMatchObject({ uri: `vouch://ledgers/${runId}/render`, mimeType: 'text/plain' });
    expect((render.contents[0] as { text: string }).text).toMatch(new RegExp(`^Run ${runId}: approved`));
    const json = await a.readResource({ uri: `vouch://ledgers/${runId}` });
    expect(ledgerGet.output.parse(JSON.parse((json.contents[0] as { text: string }).text))).toMatchObject({ runId, status: 'approved' });

    // No key in any argument or result.
    expect(JSON.stringify([opened, recorded, proposed, waited, ledger, render, json])).not.toContain(keyA);
  });

  it('answers bad input with a tool error naming the field and the way out, as HTTP does', async () => {
    const bad = await a.callTool({ name: 'ledger_open', arguments: { runId: 'has space', goal: '', colour: 'red' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Invalid request \(BAD_INPUT\): invalid ledger_open request: runId: runId must be printable ASCII with no spaces/);
    const error = (bad.structuredContent as { error: { code: string; fields: Array<{ path: string }> } }).error;
    expect(error.code).toBe('BAD_INPUT');
    expect(error.fields.map((f) => f.path).sort()).toEqual(expect.arrayContaining(['runId', 'goal']));

    const http = await stack.gw.fetch('/v1/ledgers', { key: keyA, json: { runId: 'has space', goal: '', colour: 'red' } });
    const problem = (await http.json()) as { fields: unknown };
    expect(error.fields).toEqual(problem.fields);

    const noLedger = await a.callTool({ name: 'ledger_recordEvidence', arguments: { runId: `never-opened-${revision}`, items: [{ kind: 'tool_result', summary: 'x' }] } });
    expect(noLedger.isError).toBe(true);
    expect(textOf(noLedger)).toMatch(/NOT_FOUND/);

    const wait = await a.callTool({ name: 'jobs_wait', arguments: { jobId: 'ledger-critic.x', waitSeconds: 90 } });
    expect(wait.isError).toBe(true);
    expect(textOf(wait)).toContain('waitSeconds is at most 45: call jobs_wait again to wait longer');
  });

  it('records a write retried with the same idempotency key in _meta once, as the header does over HTTP', async () => {
    const runId = `mcp-retry-${revision}`;
    await call(a, 'ledger_open', ledgerOpen, { runId, goal: 'retry safely' });
    const args = { runId, items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: 'cat config/router.yaml shows baudRate: 115200' }] };
    const withKey = (key: unknown, args_: Record<string, unknown> = args) => a.callTool({ name: 'ledger_recordEvidence', arguments: args_, _meta: { [MCP_IDEMPOTENCY_META]: key } });

    const first = await withKey(`retry-${revision}`);
    const again = await withKey(`retry-${revision}`);
    expect(first.isError, textOf(first)).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect((await call(a, 'ledger_get', ledgerGet, { runId })).evidence).toHaveLength(1);

    // The same key with other arguments is a conflict, and records nothing.
    const other = await withKey(`retry-${revision}`, { ...args, items: [{ ...args.items[0]!, summary: 'something else' }] });
    expect(other.isError).toBe(true);
    expect((other.structuredContent as { error: { code: string; status: number } }).error).toMatchObject({ code: ERROR_CODES.idempotencyConflict, status: 409 });
    // Another tenant's identical key is its own: it finds no ledger of that run id, rather than A's answer.
    const fromB = await b.callTool({ name: 'ledger_recordEvidence', arguments: args, _meta: { [MCP_IDEMPOTENCY_META]: `retry-${revision}` } });
    expect(fromB.isError).toBe(true);
    expect(textOf(fromB)).toMatch(/NOT_FOUND/);

    // A key that is not 1-200 printable ASCII characters is named, and nothing is written.
    for (const bad of [42, '', 'has\u0000nul', 'x'.repeat(201)]) {
      const refused = await withKey(bad);
      expect(refused.isError, JSON.stringify(bad)).toBe(true);
      expect((refused.structuredContent as { error: { code: string; fields: Array<{ path: string }> } }).error).toMatchObject({ code: 'BAD_INPUT', fields: [{ path: `_meta.${MCP_IDEMPOTENCY_META}` }] });
    }
    expect((await call(a, 'ledger_get', ledgerGet, { runId })).evidence).toHaveLength(1);
  });

  it('shows another tenant nothing, whatever ids it holds', async () => {
    const runId = `mcp-private-${revision}`;
    await call(a, 'ledger_open', ledgerOpen, { runId, goal: 'tenant A only' });
    const proposed = await a.callTool({ name: 'ledger_proposeCompletion', arguments: { runId, summary: 'Did it.' } });
    const { jobId } = JobHandleSchema.parse(proposed.structuredContent);

    const ledger = await b.callTool({ name: 'ledger_get', arguments: { runId } });
    expect(ledger.isError).toBe(true);
    expect(textOf(ledger)).toMatch(/NOT_FOUND/);
    expect(textOf(ledger)).not.toContain('tenant A only');
    const job = await b.callTool({ name: 'jobs_wait', arguments: { jobId, waitSeconds: 0 } });
    expect(job.isError).toBe(true);
    expect(textOf(job)).toContain(`no job ${jobId} for this tenant`);
    await expect(b.readResource({ uri: `vouch://ledgers/${runId}/render` })).rejects.toThrow(/-32602|not found|No ledger/i);
    // And B's own ledger of the same run id is B's.
    const own = await call(b, 'ledger_open', ledgerOpen, { runId, goal: 'tenant B' });
    expect(own).toMatchObject({ goal: 'tenant B', alreadyOpened: false });
  });
});

describe('/mcp over plain HTTP', () => {
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
  const post = (key: string | undefined, body: unknown = initialize) =>
    fetch(`${stack.gw.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...(key ? { Authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });

  it('answers 401 with a bearer challenge without a key, or with an unknown one', async () => {
    for (const key of [undefined, 'vk_000000000000_not-a-key-at-all-not-a-key-at-all-not-a-key']) {
      const res = await post(key);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="/);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_token');
    }
  });

  it('answers 403 insufficient_scope to an operator key and to a key that reaches no tool', async () => {
    const { key: operator } = await createOperatorKey(stack.gw.gateway.pool, { name: 'mcp-test' });
    const uploader = await stack.gw.createKey('mcp-a', 'media:write');
    for (const key of [operator, uploader]) {
      const res = await post(key);
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
    }
  });

  it('marks the per-key tool list private, for the client that asked only', async () => {
    const res = await post(keyA, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toContain('Authorization');
    const current = await connectMcp(stack.gw.url, keyA, 'current');
    try {
      expect(await current.listTools()).toMatchObject({ cacheScope: 'private' });
    } finally {
      await current.close();
    }
  });

  it('refuses a client on a bad key before any tool is listed', async () => {
    await expect(connectMcp(stack.gw.url, 'vk_000000000000_not-a-key-at-all-not-a-key-at-all-not-a-key', 'older')).rejects.toThrow(/401|invalid_token|nauthori/i);
  });
});

describe('jobs_wait on a job nobody has taken yet', () => {
  let gw: GatewayUnderTest;
  let key: string;
  beforeAll(async () => {
    // No ledger-critic: the job stays waiting.
    gw = await startGatewayUnderTest('mcp-wait');
    key = await gw.createKey('mcp-wait');
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it.each<McpRevision>(['current', 'older'])('returns the state to poll after the wait, with progress when asked (%s revision)', async (revision) => {
    const client = await connectMcp(gw.url, key, revision);
    try {
      const proposed = await client.callTool({ name: 'ledger_proposeCompletion', arguments: { runId: `wait-${revision}`, summary: 'Done.' } });
      const { jobId } = JobHandleSchema.parse(proposed.structuredContent);
      const progress: Array<{ progress: number; total?: number; message?: string }> = [];
      const waited = await client.callTool({ name: 'jobs_wait', arguments: { jobId, waitSeconds: 3 } }, { onprogress: (p) => void progress.push(p) });
      expect(jobsGet.output.parse(waited.structuredContent)).toMatchObject({ jobId, state: 'waiting' });
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toMatchObject({ total: 3, message: `job ${jobId} is waiting` });
      // waitSeconds 0 answers at once.
      const again = await client.callTool({ name: 'jobs_wait', arguments: { jobId, waitSeconds: 0 } });
      expect(jobsGet.output.parse(again.structuredContent).state).toBe('waiting');
    } finally {
      await client.close();
    }
  });
});
