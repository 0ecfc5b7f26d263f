import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  OPERATIONS,
  assertTableConsistent,
  buildOpenApiDocument,
  buildToolManifest,
  decodeJobError,
  defineOperation,
  encodeJobError,
  gatewayOperations,
  operationsForQueue,
  pathParams,
  toolName,
} from '../src/index.js';

describe('the operation table', () => {
  it('is consistent: unique names and routes, path parameters in the inputs', () => {
    expect(() => assertTableConsistent()).not.toThrow();
  });

  it('names every problem of an inconsistent table at once', () => {
    const a = defineOperation({
      name: 'x.get',
      summary: '',
      description: '',
      owner: { process: 'gateway' },
      mode: 'job',
      http: { method: 'GET', path: '/v1/x/:id' },
      scope: 'admin',
      input: z.object({}),
      output: z.object({}),
      agentFacing: false,
      example: {},
    });
    expect(() => assertTableConsistent([a, a])).toThrow(
      'operation table is inconsistent: x.get: path parameter :id is not a field of its input; x.get: a gateway-owned operation cannot be a job; operation x.get is declared twice; route GET /v1/x/:id is declared twice (again by x.get); x.get: path parameter :id is not a field of its input; x.get: a gateway-owned operation cannot be a job',
    );
  });

  it('splits operations between the gateway and the service queues', () => {
    expect(gatewayOperations().map((o) => o.name)).toEqual(expect.arrayContaining(['system.status', 'jobs.get', 'media.register', 'media.recent', 'media.resolve']));
    for (const op of OPERATIONS) {
      const owned = 'queue' in op.owner ? operationsForQueue(op.owner.queue) : [];
      if ('queue' in op.owner) expect(owned).toContain(op);
    }
  });

  it('reads path parameters', () => {
    expect(pathParams('/v1/ledgers/:runId/evidence/:seq')).toEqual(['runId', 'seq']);
  });
});

describe('derived views', () => {
  const doc = buildOpenApiDocument(OPERATIONS, { version: '1.0.0' }) as {
    openapi: string;
    paths: Record<string, Record<string, { operationId: string; parameters: Array<{ name: string; in: string }>; requestBody?: unknown; security: unknown }>>;
  };

  it('is an OpenAPI 3.1 document with one operation per table entry', () => {
    expect(doc.openapi).toBe('3.1.0');
    const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    expect(ids.sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
  });

  it('puts GET inputs in the query, POST inputs in a JSON body, and path parameters in the path', () => {
    const recent = doc.paths['/v1/media/recent']!.get!;
    expect(recent.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:chatKey', 'query:limit', 'query:surface']);
    const register = doc.paths['/v1/media']!.post!;
    expect(register.requestBody).toMatchObject({ content: { 'application/json': { schema: { required: ['surface', 'chatKey', 'imageBase64'] } } } });
    expect(register.parameters.map((p) => p.name)).toEqual(['Idempotency-Key']);
    const job = doc.paths['/v1/jobs/{jobId}']!.get!;
    expect(job.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['path:jobId', 'query:wait']);
  });

  it('lists each agent-facing operation once as a function with a JSON Schema', () => {
    const tools = buildToolManifest(OPERATIONS);
    expect(tools.map((t) => t.function.name).sort()).toEqual(OPERATIONS.filter((o) => o.agentFacing).map((o) => toolName(o.name)).sort());
    for (const tool of tools) {
      expect(tool.function.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(tool.function.parameters).toMatchObject({ type: 'object' });
      expect(tool.function.description.length).toBeGreaterThan(20);
    }
    const resolve = tools.find((t) => t.function.name === 'media_resolve')!;
    expect(resolve.function.parameters).toMatchObject({ properties: { surface: { enum: ['telegram', 'tui', 'api'] } }, required: ['surface', 'chatKey'] });
  });
});

describe('job errors', () => {
  it('round-trip a typed error through a failedReason', () => {
    const body = { code: 'BAD_INPUT' as const, message: 'runId: required', fields: [{ path: 'input.runId', message: 'required' }] };
    expect(decodeJobError(encodeJobError(body))).toEqual(body);
  });
  it('read a foreign reason as an internal error, keeping only BullMQ\'s own reasons', () => {
    expect(decodeJobError('job stalled more than allowable limit')).toEqual({ code: 'INTERNAL', message: 'job stalled more than allowable limit' });
    // Whatever else reached the failed reason (a driver message, an address) stays in the service's logs.
    expect(decodeJobError('connect ECONNREFUSED 10.0.0.7:5432')).toEqual({ code: 'INTERNAL', message: 'the job failed inside its service: the service logs hold the reason under the job id' });
    expect(decodeJobError(undefined)).toEqual({ code: 'INTERNAL', message: 'the job failed without a reason' });
    expect(decodeJobError('vouch-error:{"code":"NOPE"}')).toMatchObject({ code: 'INTERNAL' });
  });
});
