import { z } from 'zod';
import type { OperationDef } from './operation.js';
import { pathParams } from './table.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Input fields as JSON Schema, split into path parameters and the rest. */
function splitInput(op: OperationDef): { params: string[]; rest: JsonSchema } {
  const params = pathParams(op.http.path);
  const schema = jsonSchema(op.input, 'input');
  const properties = { ...((schema.properties as Record<string, JsonSchema>) ?? {}) };
  const required = ((schema.required as string[]) ?? []).filter((r) => !params.includes(r));
  for (const p of params) delete properties[p];
  return { params, rest: { ...schema, properties, required } };
}

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'code', 'detail'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    code: { type: 'string' },
    detail: { type: 'string' },
    fields: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
    details: { type: 'object' },
  },
};

const jobHandleSchema: JsonSchema = {
  type: 'object',
  required: ['jobId', 'operation', 'state', 'statusUrl'],
  properties: {
    jobId: { type: 'string' },
    operation: { type: 'string' },
    state: { type: 'string' },
    statusUrl: { type: 'string' },
  },
};

function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z][A-Za-z0-9]*)/g, '{$1}');
}

/** The gateway's OpenAPI 3.1 document, derived from the operation table. */
export function buildOpenApiDocument(table: readonly OperationDef[], info: { version: string; serverUrl?: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of table) {
    const { params, rest } = splitInput(op);
    const restProps = rest.properties as Record<string, JsonSchema>;
    const parameters: unknown[] = params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const operation: Record<string, unknown> = {
      operationId: op.name,
      summary: op.summary,
      description: op.description,
      tags: [op.name.split('.')[0]],
      security: [{ bearer: [op.scope] }],
      'x-vouch-mode': op.mode,
      'x-vouch-owner': 'queue' in op.owner ? op.owner.queue : 'process' in op.owner ? op.owner.process : `queue from input.${op.owner.queueFromInput}`,
    };
    if (op.http.method === 'GET' || op.http.method === 'DELETE') {
      for (const [name, schema] of Object.entries(restProps)) {
        parameters.push({ name, in: 'query', required: (rest.required as string[]).includes(name), schema });
      }
    } else {
      operation.requestBody = { required: true, content: { 'application/json': { schema: rest } } };
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 200 } });
    }
    operation.parameters = parameters;
    const problem = { description: 'Problem', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
    operation.responses =
      op.mode === 'job'
        ? { '202': { description: 'Accepted: poll statusUrl for the result', content: { 'application/json': { schema: { $ref: '#/components/schemas/JobHandle' } } } }, default: problem }
        : { '200': { description: 'Result', content: { 'application/json': { schema: jsonSchema(op.output, 'output') } } }, default: problem };
    (paths[toOpenApiPath(op.http.path)] ??= {})[op.http.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'vouch gateway', version: info.version, description: 'Evidence backend for AI agents. Every route is an operation of the operation table.' },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key made with `npm run keys -- create --tenant NAME`.' } },
      schemas: { Problem: problemSchema, JobHandle: jobHandleSchema },
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
