import { z } from 'zod';
import type { McpResourceDef, OperationDef, Scope } from './operation.js';
import { JobHandleSchema, JobIdSchema, jobsGet } from './operations/jobs.js';
import { jsonSchema, toolName, type JsonSchema } from './openapi.js';

/**
 * The MCP view of the operation table: one tool per agent-facing operation,
 * and a resource per operation that declares one. Pure data for the gateway's
 * MCP server (services/gateway/src/mcp-server.ts) to serve; nothing here
 * depends on the SDK.
 */

/** The longest a `jobs_wait` call waits: MCP clients give up on a request at about 60 s. */
export const MCP_MAX_WAIT_SECONDS = 45;
/** How long `jobs_wait` waits when the caller names no wait. */
export const MCP_DEFAULT_WAIT_SECONDS = 30;

/** The MCP form of jobs.get: a bounded wait that reports progress, then the state to poll again. */
export const McpJobsWaitInput = z
  .object({
    jobId: JobIdSchema.describe('The jobId a job tool returned.'),
    waitSeconds: z
      .number()
      .int('waitSeconds is a whole number of seconds')
      .min(0, 'waitSeconds is at least 0 (0: answer at once)')
      .max(MCP_MAX_WAIT_SECONDS, `waitSeconds is at most ${MCP_MAX_WAIT_SECONDS}: call jobs_wait again to wait longer`)
      .default(MCP_DEFAULT_WAIT_SECONDS)
      .describe(`How long to wait for the job to finish before answering with its state (0-${MCP_MAX_WAIT_SECONDS}, default ${MCP_DEFAULT_WAIT_SECONDS}).`),
  })
  .strict();

/** MCP tool annotations (behaviour hints a host shows or acts on). */
export interface McpToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** vouch reaches nothing outside itself on a caller's behalf. */
  openWorldHint: false;
}

/** One tool as the MCP server lists it, and the operation it runs. */
export interface McpToolDef {
  name: string;
  title: string;
  description: string;
  operation: OperationDef;
  scope: Scope;
  /** What the tool validates its arguments with (the operation's input, or jobs_wait's). */
  input: z.ZodType;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: McpToolAnnotations;
}

/** One resource template as the MCP server lists it, and the operation that reads it. */
export interface McpResourceTemplateDef extends McpResourceDef {
  title: string;
  description: string;
  operation: OperationDef;
  scope: Scope;
  /** The template's variables, each an input field of the operation. */
  variables: string[];
}

/** The name of jobs.get's MCP tool, which waits in bounded slices instead of up to a minute. */
export const JOBS_WAIT_TOOL = 'jobs_wait';

function mcpToolName(op: OperationDef): string {
  return op.name === jobsGet.name ? JOBS_WAIT_TOOL : toolName(op.name);
}

/**
 * Rewrites the operation names a text mentions (`jobs.get`, `ledger.open`)
 * into the MCP tool names a model calls (`jobs_wait`, `ledger_open`). Longer
 * names first, and only whole names, so `artifact.extract` never eats the
 * front of `artifact.extractDeterministic`.
 */
export function mcpToolNamesIn(text: string, table: readonly OperationDef[]): string {
  const names = table.filter((op) => op.agentFacing).sort((a, b) => b.name.length - a.name.length);
  if (!names.length) return text;
  const byName = new Map(names.map((op) => [op.name, mcpToolName(op)]));
  const pattern = new RegExp(`(?<![\\w.])(${names.map((op) => op.name.replace(/\./g, '\\.')).join('|')})(?![\\w])`, 'g');
  return text.replace(pattern, (name) => byName.get(name) ?? name);
}

/**
 * The hints an operation's tool carries. A `:read` scope is read-only and
 * idempotent (reads that take a JSON body, like artifact.grep, included);
 * a DELETE is destructive and idempotent; any other write only adds, unless
 * the entry says it is idempotent or destructive.
 */
export function mcpAnnotations(op: OperationDef): McpToolAnnotations {
  const readOnly = op.scope.endsWith(':read');
  const isDelete = op.http.method === 'DELETE';
  return {
    title: op.summary,
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && (op.destructive ?? isDelete),
    idempotentHint: readOnly || (op.idempotent ?? isDelete),
    openWorldHint: false,
  };
}

function jobsWaitTool(): McpToolDef {
  return {
    name: JOBS_WAIT_TOOL,
    title: 'Wait for a job and read its result',
    description:
      `Waits up to waitSeconds (at most ${MCP_MAX_WAIT_SECONDS}) for a job started by a job tool, then returns its state, and its result or error once finished. ` +
      'If the state is still waiting or active, call jobs_wait again with the same jobId: the job keeps running either way. ' +
      'Sends progress notifications while it waits when the request asks for them.',
    operation: jobsGet,
    scope: jobsGet.scope,
    input: McpJobsWaitInput,
    inputSchema: jsonSchema(McpJobsWaitInput, 'input'),
    outputSchema: jsonSchema(jobsGet.output, 'output'),
    annotations: { ...mcpAnnotations(jobsGet), title: 'Wait for a job and read its result' },
  };
}

/**
 * Every agent-facing operation as an MCP tool, in table order. jobs.get
 * becomes `jobs_wait` (a wait of at most MCP_MAX_WAIT_SECONDS). A job
 * operation answers with its job handle at once, and says so.
 */
export function buildMcpTools(table: readonly OperationDef[]): McpToolDef[] {
  return table
    .filter((op) => op.agentFacing)
    .map((op): McpToolDef => {
      if (op.name === jobsGet.name) return jobsWaitTool();
      const next = op.mode === 'job' ? ` Answers at once with a job handle: pass its jobId to ${JOBS_WAIT_TOOL} for the result.` : '';
      return {
        name: mcpToolName(op),
        title: op.summary,
        description: mcpToolNamesIn(op.description, table) + next,
        operation: op,
        scope: op.scope,
        input: op.input,
        inputSchema: jsonSchema(op.input, 'input'),
        outputSchema: jsonSchema(op.mode === 'job' ? JobHandleSchema : op.output, 'output'),
        annotations: mcpAnnotations(op),
      };
    });
}

/** The `{name}` variables of a level-1 URI template. */
export function uriTemplateVariables(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g)].map((m) => m[1] as string);
}

/**
 * The resource templates the table declares, in table order. Throws naming
 * every template whose variables are not fields of its operation's input, or
 * whose operation is not a read.
 */
export function buildMcpResourceTemplates(table: readonly OperationDef[]): McpResourceTemplateDef[] {
  const problems: string[] = [];
  const defs = table.flatMap((op): McpResourceTemplateDef[] => {
    if (!op.resource) return [];
    const shape = (op.input as { shape?: Record<string, unknown> }).shape ?? {};
    const variables = uriTemplateVariables(op.resource.uriTemplate);
    for (const v of variables) if (!(v in shape)) problems.push(`${op.name}: resource variable {${v}} is not a field of its input`);
    if (op.mode !== 'rpc' || !op.scope.endsWith(':read')) problems.push(`${op.name}: a resource is read by an rpc operation with a :read scope`);
    return [{ ...op.resource, title: op.summary, description: mcpToolNamesIn(op.description, table), operation: op, scope: op.scope, variables }];
  });
  if (problems.length) throw new Error(`MCP resources are inconsistent: ${problems.join('; ')}`);
  return defs;
}
