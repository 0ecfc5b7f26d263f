import { z } from 'zod';
import { ERROR_CODES, type ProblemStatus } from './errors.js';
import type { OperationDef } from './operation.js';
import { JobHandleSchema } from './operations/jobs.js';
import { problemResponses } from './problem-responses.js';
import { pathParams } from './table.js';

export type JsonSchema = Record<string, unknown>;

/** A schema of the table as JSON Schema 2020-12, as every derived view shows it. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Input fields as JSON Schema, split into path parameters and the rest. */
function splitInput(op: OperationDef): { params: Array<[string, JsonSchema]>; rest: JsonSchema } {
  const names = pathParams(op.http.path);
  const schema = jsonSchema(op.input, 'input');
  const properties = { ...((schema.properties as Record<string, JsonSchema>) ?? {}) };
  const required = ((schema.required as string[]) ?? []).filter((r) => !names.includes(r));
  const params = names.map((name): [string, JsonSchema] => [name, properties[name] ?? { type: 'string' }]);
  for (const name of names) delete properties[name];
  return { params, rest: { ...schema, properties, required } };
}

/** The example input without the fields named in `omit` (path parameters travel in the path). */
function exampleWithout(op: OperationDef, omit: readonly string[]): Record<string, unknown> {
  const example = { ...(op.example as Record<string, unknown>) };
  for (const name of omit) delete example[name];
  return example;
}

/** An RFC 9457 problem document with vouch's code, fields and details, as every error answer carries. */
const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'code', 'detail'],
  properties: {
    type: { type: 'string', description: 'A URN naming the problem, e.g. urn:vouch:problem:bad-input.' },
    title: { type: 'string' },
    status: { type: 'integer' },
    code: { type: 'string', enum: Object.values(ERROR_CODES) },
    detail: { type: 'string', description: 'What went wrong and what to do next.' },
    fields: {
      type: 'array',
      description: 'Each offending input field: a dotted path and what is wrong with it.',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    details: { type: 'object', description: 'Machine-readable facts: the current version on a conflict, the job id and statusUrl on a timeout.' },
    instance: { type: 'string', description: 'The request path.' },
    requestId: { type: 'string', description: 'Finds the request in the gateway\'s logs.' },
  },
};

/** Headers that go with some problem answers: where to retry, and how to authenticate. */
const problemHeaders: Partial<Record<ProblemStatus, Record<string, unknown>>> = {
  401: { 'WWW-Authenticate': { description: 'Bearer realm="vouch"', schema: { type: 'string' } } },
  429: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
};

/**
 * What each group of operations is about, for the document's tags. A group
 * not named here is described by the services that run its operations.
 */
const TAG_DESCRIPTIONS: Record<string, string> = {
  system: 'Health of the services behind the gateway: pings through each queue, queue depths.',
  jobs: 'The state and result of a job started by a `job` operation.',
  media: 'Images registered under a chat scope and referred to by public-safe aliases (img-N).',
  ledger: 'The claim/evidence ledger of an agent run, and the critique of its completion claim (ledger-critic).',
};

function ownerName(op: OperationDef): string {
  return 'queue' in op.owner ? op.owner.queue : 'process' in op.owner ? op.owner.process : `queue from input.${op.owner.queueFromInput}`;
}

function tagOf(op: OperationDef): string {
  return op.name.split('.')[0] as string;
}

function describeTags(table: readonly OperationDef[]): Array<{ name: string; description: string }> {
  const groups = new Map<string, OperationDef[]>();
  for (const op of table) groups.set(tagOf(op), [...(groups.get(tagOf(op)) ?? []), op]);
  return [...groups].map(([name, ops]) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? `Operations run by ${[...new Set(ops.map(ownerName))].join(', ')}: ${ops.map((o) => o.name).join(', ')}.`,
  }));
}

/**
 * The license the document states. The repository names none yet, so this
 * says so in the SPDX form for a license that is not on the SPDX list.
 */
export const API_LICENSE = { name: 'Proprietary (no license granted)', identifier: 'LicenseRef-vouch-proprietary' } as const;

function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z][A-Za-z0-9]*)/g, '{$1}');
}

/**
 * The gateway's OpenAPI 3.1 document, derived from the operation table: each
 * operation's input (path, query or JSON body) with its example, its result
 * (or job handle), and every problem answer it can give (problemResponses).
 * `serverUrl` defaults to `/`: the host that serves the document.
 */
export function buildOpenApiDocument(table: readonly OperationDef[], info: { version: string; serverUrl?: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of table) {
    const { params, rest } = splitInput(op);
    const restProps = rest.properties as Record<string, JsonSchema>;
    const example = op.example as Record<string, unknown>;
    const withExample = (name: string) => (example[name] === undefined ? {} : { example: example[name] });
    const parameters: unknown[] = params.map(([name, schema]) => ({ name, in: 'path', required: true, schema, ...withExample(name) }));
    const operation: Record<string, unknown> = {
      operationId: op.name,
      summary: op.summary,
      description: op.description,
      tags: [tagOf(op)],
      security: [{ bearer: [op.scope] }],
      'x-vouch-mode': op.mode,
      'x-vouch-owner': ownerName(op),
    };
    if (op.http.method === 'GET' || op.http.method === 'DELETE') {
      for (const [name, schema] of Object.entries(restProps)) {
        parameters.push({ name, in: 'query', required: (rest.required as string[]).includes(name), schema, ...withExample(name) });
      }
    } else {
      operation.requestBody = { required: true, content: { 'application/json': { schema: rest, example: exampleWithout(op, params.map(([name]) => name)) } } };
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Any printable string: the same key and body return the stored answer without running the operation again.',
        schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' },
      });
    }
    operation.parameters = parameters;
    const responses: Record<string, unknown> =
      op.mode === 'job'
        ? { '202': { description: 'Accepted: poll statusUrl for the result', content: { 'application/json': { schema: { $ref: '#/components/schemas/JobHandle' } } } } }
        : { '200': { description: 'Result', content: { 'application/json': { schema: jsonSchema(op.output, 'output') } } } };
    for (const { status, description } of problemResponses(op)) {
      const headers = problemHeaders[status];
      responses[String(status)] = { description, ...(headers ? { headers } : {}), content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    }
    operation.responses = responses;
    (paths[toOpenApiPath(op.http.path)] ??= {})[op.http.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'vouch gateway',
      version: info.version,
      description: 'Evidence backend for AI agents. Every route is an operation of the operation table.',
      license: API_LICENSE,
    },
    servers: [{ url: info.serverUrl ?? '/', description: info.serverUrl ? 'the gateway' : 'the gateway that serves this document' }],
    tags: describeTags(table),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key made with `npm run keys -- create --tenant NAME`.' } },
      schemas: { Problem: problemSchema, JobHandle: jsonSchema(JobHandleSchema, 'output') },
    },
  };
}

/** One function definition for LLM function calling. */
export interface AgentTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
  'x-vouch': { operation: string; method: string; path: string; mode: string };
}

/** Tool names must match ^[a-zA-Z0-9_-]{1,64}$ for function calling APIs, so dots become underscores. */
export function toolName(operationName: string): string {
  return operationName.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** The agent tool manifest: every agent-facing operation as a JSON Schema function definition. */
export function buildToolManifest(table: readonly OperationDef[]): AgentTool[] {
  return table
    .filter((op) => op.agentFacing)
    .map((op) => ({
      type: 'function' as const,
      function: { name: toolName(op.name), description: op.description, parameters: jsonSchema(op.input, 'input') },
      'x-vouch': { operation: op.name, method: op.http.method, path: op.http.path, mode: op.mode },
    }));
}
