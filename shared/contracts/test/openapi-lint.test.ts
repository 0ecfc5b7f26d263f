import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPERATIONS, buildOpenApiDocument, defineOperation, pathParams, problemResponses, type OperationDef } from '../src/index.js';

const run = promisify(execFile);
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const CONFIG = fileURLToPath(new URL('../../../redocly.yaml', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vouch-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

/** Lints a document with Redocly CLI's recommended rules (redocly.yaml), offline and without telemetry. */
async function lint(table: readonly OperationDef[], name: string): Promise<LintReport> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(table, { version: '1.0.0' }), null, 2));
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  // Redocly exits 1 when it finds errors; the JSON report on stdout is what counts either way.
  const out = await run(process.execPath, [REDOCLY, 'lint', file, '--config', CONFIG, '--format=json'], { env, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  return JSON.parse(out.stdout) as LintReport;
}

const readable = (report: LintReport) => report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);

describe('the OpenAPI document, linted by Redocly (recommended rules)', () => {
  it('has no errors and no warnings for the whole operation table', async () => {
    const report = await lint(OPERATIONS, 'openapi');
    expect(readable(report)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('checks the examples against the schemas, so a wrong example is caught', async () => {
    const broken = OPERATIONS.map((op) => (op.name === 'media.register' ? { ...op, example: { ...(op.example as object), surface: 'fax' } } : op));
    const report = await lint(broken, 'broken-example');
    expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).toEqual(['no-invalid-media-type-examples #/paths/~1v1~1media/post/requestBody/content/application~1json/example/surface']);
  });
});

type Doc = {
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, { tags: string[]; parameters: Array<{ name: string; in: string; example?: unknown }>; requestBody?: { content: Record<string, { example: unknown }> }; responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }>>;
};

const statusesOf = (op: OperationDef) => problemResponses(op).map((r) => r.status);

describe('problem answers, derived from what an operation is', () => {
  const probe = (over: Partial<OperationDef>): OperationDef =>
    defineOperation({
      name: 'probe.run',
      summary: 'probe',
      description: 'probe',
      owner: { process: 'gateway' },
      mode: 'rpc',
      http: { method: 'GET', path: '/v1/probe' },
      scope: 'system:read',
      input: z.object({}).strict(),
      output: z.object({}),
      agentFacing: false,
      example: {},
      ...over,
    } as OperationDef);

  it('gives every operation 400, 401, 403, 408, 429, 431, 500 and 503, and a JSON body 409, 413 and 415', () => {
    expect(statusesOf(probe({}))).toEqual([400, 401, 403, 408, 429, 431, 500, 503]);
    expect(statusesOf(probe({ http: { method: 'POST', path: '/v1/probe' } }))).toEqual([400, 401, 403, 408, 409, 413, 415, 429, 431, 500, 503]);
  });

  it('adds 404 for a path parameter and 504 for an rpc served by a queue, not for a job', () => {
    const path = { method: 'GET', path: '/v1/probe/:id' } as const;
    expect(statusesOf(probe({ http: path }))).toEqual([400, 401, 403, 404, 408, 429, 431, 500, 503]);
    expect(statusesOf(probe({ http: path, owner: { queue: 'ledger-critic' } }))).toEqual([400, 401, 403, 404, 408, 429, 431, 500, 503, 504]);
    expect(statusesOf(probe({ http: path, owner: { queue: 'ledger-critic' }, mode: 'job' }))).toEqual([400, 401, 403, 404, 408, 429, 431, 500, 503]);
  });

  it('adds what an operation declares, and joins it to a derived answer of the same status', () => {
    const op = probe({ http: { method: 'POST', path: '/v1/probe' }, errors: { 429: 'slow down', 409: 'the probe is busy.' } });
    expect(statusesOf(op)).toEqual([400, 401, 403, 408, 409, 413, 415, 429, 431, 500, 503]);
    expect(problemResponses(op).find((r) => r.status === 409)?.description).toMatch(/^the probe is busy\. Or: The Idempotency-Key/);
    expect(problemResponses(op).find((r) => r.status === 429)?.description).toMatch(/^slow down Or: The API key's tenant has spent its rate budget/);
  });

  it('documents each problem answer of each operation as problem+json, with Retry-After on 429 and 503', () => {
    const doc = buildOpenApiDocument(OPERATIONS, { version: '1.0.0' }) as Doc;
    for (const op of OPERATIONS) {
      const entry = doc.paths[op.http.path.replace(/:(\w+)/g, '{$1}')]![op.http.method.toLowerCase()]!;
      const documented = Object.keys(entry.responses).filter((s) => /^[45]\d\d$/.test(s)).map(Number);
      expect(documented, op.name).toEqual(statusesOf(op));
      for (const status of documented) expect(entry.responses[status]!.content, `${op.name} ${status}`).toHaveProperty(['application/problem+json']);
      for (const status of [429, 503]) if (entry.responses[status]) expect(entry.responses[status]!.headers, `${op.name} ${status}`).toHaveProperty('Retry-After');
    }
    expect(statusesOf(OPERATIONS.find((o) => o.name === 'media.register')!)).toContain(429);
  });

  it('shows each operation\'s example: path and query values as parameter examples, the rest as the body example', () => {
    const doc = buildOpenApiDocument(OPERATIONS, { version: '1.0.0' }) as Doc;
    for (const op of OPERATIONS) {
      const entry = doc.paths[op.http.path.replace(/:(\w+)/g, '{$1}')]![op.http.method.toLowerCase()]!;
      const example = op.example as Record<string, unknown>;
      const params = pathParams(op.http.path);
      for (const p of entry.parameters.filter((p) => p.in !== 'header')) expect(p.example, `${op.name} ${p.name}`).toEqual(example[p.name]);
      if (op.http.method === 'POST') {
        const body = Object.fromEntries(Object.entries(example).filter(([k]) => !params.includes(k)));
        expect(entry.requestBody!.content['application/json']!.example, op.name).toEqual(body);
      }
    }
  });

  it('declares every tag it uses, with a description, and names the serving host as its server', () => {
    const doc = buildOpenApiDocument(OPERATIONS, { version: '1.0.0' }) as Doc;
    const used = new Set(Object.values(doc.paths).flatMap((p) => Object.values(p).flatMap((o) => o.tags)));
    expect(doc.tags.map((t) => t.name).sort()).toEqual([...used].sort());
    for (const tag of doc.tags) expect(tag.description).not.toBe('');
    expect(doc.servers).toEqual([{ url: '/', description: 'the gateway that serves this document' }]);
  });
});
