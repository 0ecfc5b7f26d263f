import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  JOBS_WAIT_TOOL,
  MCP_MAX_WAIT_SECONDS,
  OPERATIONS,
  buildMcpResourceTemplates,
  buildMcpTools,
  defineOperation,
  jsonSchema,
  JobHandleSchema,
  mcpToolNamesIn,
  text,
} from '../src/index.js';

const tools = buildMcpTools(OPERATIONS);
const byName = new Map(tools.map((t) => [t.name, t]));

function op(name: string, method: 'GET' | 'POST' | 'DELETE', scope: 'ledger:read' | 'ledger:write', extra: Record<string, unknown> = {}) {
  return defineOperation({
    name,
    summary: `${name} summary`,
    description: `${name}: see ledger.open first.`,
    owner: { process: 'gateway' },
    mode: 'rpc',
    http: { method, path: `/v1/${name.replace('.', '/')}` },
    scope,
    input: z.object({ id: text() }).strict(),
    output: z.object({ ok: z.boolean() }),
    agentFacing: true,
    example: { id: 'x' },
    ...extra,
  });
}

describe('the MCP tools derived from the operation table', () => {
  it('are the agent-facing operations in table order, jobs.get as jobs_wait', () => {
    const expected = OPERATIONS.filter((o) => o.agentFacing).map((o) => (o.name === 'jobs.get' ? JOBS_WAIT_TOOL : o.name.replace('.', '_')));
    expect(tools.map((t) => t.name)).toEqual(expected);
    expect(new Set(expected).size).toBe(expected.length);
    for (const t of tools) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('name tools, never dotted operations, in what they tell a model', () => {
    const dotted = OPERATIONS.filter((o) => o.agentFacing).map((o) => o.name);
    for (const t of tools) for (const name of dotted) expect(t.description, `${t.name} mentions ${name}`).not.toMatch(new RegExp(`(?<![\\w.])${name.replace('.', '\\.')}(?![\\w])`));
    expect(byName.get('ledger_proposeCompletion')?.description).toContain('read the result with jobs_wait');
  });

  it('answer job operations with a job handle and say where the result is', () => {
    for (const t of tools.filter((x) => x.operation.mode === 'job')) {
      expect(t.description).toMatch(/pass its jobId to jobs_wait for the result\.$/);
      expect(t.outputSchema).toEqual(jsonSchema(JobHandleSchema, 'output'));
    }
    expect(byName.get('ledger_get')?.outputSchema).toEqual(jsonSchema(OPERATIONS.find((o) => o.name === 'ledger.get')!.output, 'output'));
  });

  it('bound jobs_wait below the clients\' one-minute request timeout', () => {
    const wait = byName.get(JOBS_WAIT_TOOL)!;
    expect(wait.inputSchema).toMatchObject({ properties: { waitSeconds: { maximum: MCP_MAX_WAIT_SECONDS, default: 30 } }, required: ['jobId'], additionalProperties: false });
    expect(MCP_MAX_WAIT_SECONDS).toBeLessThan(60);
    expect(wait.input.safeParse({ jobId: 'ledger-critic.abc', waitSeconds: 46 }).success).toBe(false);
  });

  it('annotate reads as read-only and idempotent, writes by what their entry says', () => {
    expect(byName.get('ledger_get')?.annotations).toEqual({ title: 'Read a run ledger', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    // A read that takes a body is still a read: its scope says so.
    expect(byName.get('artifact_grep')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.get('ledger_open')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(byName.get('ledger_recordEvidence')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    for (const t of tools) if (t.operation.http.method === 'GET') expect(t.annotations.readOnlyHint, t.name).toBe(true);
  });

  it('take in a new operation without more work, a DELETE as destructive', () => {
    const table = [...OPERATIONS, op('board.archive', 'DELETE', 'ledger:write'), op('board.replace', 'POST', 'ledger:write', { destructive: true }), op('board.hidden', 'GET', 'ledger:read', { agentFacing: false })];
    const derived = buildMcpTools(table);
    const archive = derived.find((t) => t.name === 'board_archive')!;
    expect(archive.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(archive.description).toBe('board_archive: see ledger_open first.');
    expect(derived.find((t) => t.name === 'board_replace')?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(derived.some((t) => t.name === 'board_hidden')).toBe(false);
  });

  it('rewrite only whole operation names', () => {
    expect(mcpToolNamesIn('use artifact.extractDeterministic, or artifact.extract; not config.ledger.open.yaml', OPERATIONS)).toBe(
      'use artifact_extractDeterministic, or artifact_extract; not config.ledger.open.yaml',
    );
  });
});

describe('the MCP resources derived from the operation table', () => {
  it('are the ledger and its render, read through their operations', () => {
    expect(buildMcpResourceTemplates(OPERATIONS).map((r) => [r.uriTemplate, r.operation.name, r.mimeType, r.variables])).toEqual([
      ['vouch://ledgers/{runId}', 'ledger.get', 'application/json', ['runId']],
      ['vouch://ledgers/{runId}/render', 'ledger.render', 'text/plain', ['runId']],
    ]);
  });

  it('refuse a template whose variable is not an input field, or a resource that writes', () => {
    const bad = op('board.get', 'GET', 'ledger:read', { resource: { uriTemplate: 'vouch://boards/{boardId}', name: 'board', mimeType: 'application/json' } });
    const writes = op('board.put', 'POST', 'ledger:write', { resource: { uriTemplate: 'vouch://boards/{id}', name: 'board-put', mimeType: 'application/json' } });
    expect(() => buildMcpResourceTemplates([bad, writes])).toThrow(
      'MCP resources are inconsistent: board.get: resource variable {boardId} is not a field of its input; board.put: a resource is read by an rpc operation with a :read scope',
    );
  });
});
