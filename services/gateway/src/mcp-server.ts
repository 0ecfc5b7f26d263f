import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type CallToolResult,
  type McpRequestContext,
  type ReadResourceResult,
  type ServerContext,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import { BadInputError, ERROR_CODES, JOBS_WAIT_TOOL, describeFieldIssues, McpJobsWaitInput, jobsGet, mcpToolNamesIn, type JsonSchema, type McpResourceTemplateDef, type McpToolDef, type OperationDef } from '@vouch/contracts';
import type { Caller } from './api-keys.js';
import { mcpCallerOf } from './mcp-auth.js';
import { callOperation, parseInputWith, type CallDeps } from './operation-call.js';
import { errorBodyOf, problemFromBody, type Problem } from './problem.js';
import { badKeyIssues } from './request-text.js';

/** Where MCP calls say they came in, in their problems' `instance`. */
export const MCP_PATH = '/mcp';

/** A slice of a jobs_wait: the longest it waits without a word to a client that asked for progress. */
const WAIT_SLICE_SECONDS = 2;

export interface McpServerDeps extends CallDeps {
  version: string;
  /** The operation table the tools come from; tool errors name its operations by their tool names. */
  operations: readonly OperationDef[];
  tools: readonly McpToolDef[];
  resources: readonly McpResourceTemplateDef[];
}

const INSTRUCTIONS =
  'vouch keeps the evidence an agent needs before it claims success. For each run: ledger_open with the goal, ledger_recordEvidence as tools finish ' +
  '(failures too), then ledger_proposeCompletion with the summary the user will see; it answers with a job handle: call jobs_wait with its jobId ' +
  'until the state is completed or failed. Report the task as completed only when the result says completed: true. Errors come back as tool ' +
  'results naming the field to fix. Ledgers are readable as resources at vouch://ledgers/{runId} and vouch://ledgers/{runId}/render.';

/**
 * A schema the SDK advertises but leaves to the gateway: its JSON Schema is
 * the table's, and its validation accepts everything, because the operation
 * call validates the input itself, with the same messages (field, and what
 * to send instead) as over HTTP.
 */
function advertised(json: JsonSchema): StandardSchemaWithJSON {
  return {
    '~standard': {
      version: 1,
      vendor: 'vouch',
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => json, output: () => json },
    },
  } as StandardSchemaWithJSON;
}

/** A successful call: the same JSON as structured content and as text, for clients that read only text. */
function toolResult(body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body as Record<string, unknown> };
}

/**
 * A problem as a tool error the model reads and acts on: what went wrong and
 * what to do, each offending field, and the facts that go with it.
 */
export function toolError(problem: Problem, table: readonly OperationDef[]): CallToolResult {
  const detail = mcpToolNamesIn(problem.detail, table);
  const lines = [`${problem.title} (${problem.code}): ${detail}`];
  for (const f of problem.fields ?? []) if (!detail.includes(f.message)) lines.push(`- ${f.path}: ${f.message}`);
  if (problem.details) lines.push(`details: ${JSON.stringify(problem.details)}`);
  const error = {
    code: problem.code,
    status: problem.status,
    message: detail,
    ...(problem.fields ? { fields: problem.fields } : {}),
    ...(problem.details ? { details: problem.details } : {}),
    ...(problem.requestId ? { requestId: problem.requestId } : {}),
  };
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { error }, isError: true };
}

function may(caller: Caller, scope: string): boolean {
  return caller.scopes.includes('admin') || caller.scopes.includes(scope as Caller['scopes'][number]);
}

/**
 * Where a tools/call request carries its idempotency key: MCP has no headers
 * per call, so the key rides in the request's `_meta`, under a name of ours
 * (the spec reserves unprefixed and modelcontextprotocol names). It works as
 * the Idempotency-Key header does over HTTP: a retry with the same key and
 * arguments gets the recorded answer instead of writing again.
 */
export const MCP_IDEMPOTENCY_META = 'dev.vouch/idempotency-key';
/** How a problem names the key. */
const IDEMPOTENCY_KEY_PATH = `_meta.${MCP_IDEMPOTENCY_META}`;

/** The idempotency key a tools/call request carries, if any; one that is not a string is refused naming it. */
function idempotencyKeyOf(ctx: ServerContext): string | undefined {
  const value = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.[MCP_IDEMPOTENCY_META];
  if (value === undefined || typeof value === 'string') return value;
  throw new BadInputError(`${IDEMPOTENCY_KEY_PATH} must be a string of 1-200 printable ASCII characters`, [{ path: IDEMPOTENCY_KEY_PATH, message: `expected a string, got ${typeof value}` }]);
}

/** Runs one operation for an MCP request, as the HTTP routes do, with the idempotency key from `_meta` when the call has one. */
function run(op: OperationDef, input: Record<string, unknown>, auth: { caller: Caller; requestId: string }, deps: CallDeps, idempotencyKey?: string, signal?: AbortSignal) {
  const checked = () => {
    // As for a JSON body over HTTP: a key holding NUL or a lone surrogate is refused naming it.
    const badKeys = badKeyIssues(input);
    if (badKeys.length) throw new BadInputError(`invalid ${op.name} request: ${describeFieldIssues(badKeys)}`, badKeys);
    return input;
  };
  return callOperation(
    op,
    { caller: auth.caller, requestId: auth.requestId, instance: MCP_PATH, input: checked, idempotencyKey, idempotencyKeyPath: IDEMPOTENCY_KEY_PATH, signal },
    deps,
  );
}

/**
 * jobs.get in slices of WAIT_SLICE_SECONDS up to the wait asked for, with a
 * progress notification between slices when the request carries a progress
 * token. Each slice is a jobs.get call, so the job is looked up in the
 * caller's tenant every time.
 */
async function jobsWait(args: unknown, ctx: ServerContext, auth: { caller: Caller; requestId: string }, deps: McpServerDeps): Promise<CallToolResult> {
  let wanted: { jobId: string; waitSeconds: number };
  try {
    wanted = parseInputWith(JOBS_WAIT_TOOL, McpJobsWaitInput, args ?? {});
  } catch (err) {
    return toolError(problemFromBody(errorBodyOf(err), { instance: MCP_PATH, requestId: auth.requestId }), deps.operations);
  }
  const token = ctx.mcpReq._meta?.progressToken;
  const started = Date.now();
  const deadline = started + wanted.waitSeconds * 1000;
  let reported = 0;
  for (;;) {
    const left = Math.max(0, deadline - Date.now());
    const outcome = await run(jobsGet, { jobId: wanted.jobId, wait: Math.min(WAIT_SLICE_SECONDS, Math.ceil(left / 1000)) }, auth, deps);
    if (!outcome.ok) return toolError(outcome.problem, deps.operations);
    const job = outcome.body as { state: string };
    if (job.state === 'completed' || job.state === 'failed' || Date.now() >= deadline || ctx.mcpReq.signal.aborted) return toolResult(job);
    if (token !== undefined) {
      // Progress must grow with every notification for one token.
      const elapsed = Math.max(reported + 1, Math.round((Date.now() - started) / 1000));
      reported = elapsed;
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: elapsed, total: wanted.waitSeconds, message: `job ${wanted.jobId} is ${job.state}` },
      });
    }
  }
}

/** Reads a resource through its operation; a problem is a protocol error, as resources/read has no tool-error form. */
async function readResource(def: McpResourceTemplateDef, uri: URL, variables: Record<string, string | string[]>, auth: { caller: Caller; requestId: string }, deps: CallDeps): Promise<ReadResourceResult> {
  const input: Record<string, unknown> = {};
  for (const name of def.variables) {
    const value = variables[name];
    input[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const outcome = await run(def.operation, input, auth, deps);
  if (!outcome.ok) {
    const { problem } = outcome;
    if (problem.code === ERROR_CODES.notFound) throw new ResourceNotFoundError(uri.href, problem.detail);
    throw new ProtocolError(problem.status < 500 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError, problem.detail, { code: problem.code, ...(problem.requestId ? { requestId: problem.requestId } : {}) });
  }
  const body = outcome.body as Record<string, unknown>;
  const text = def.textField ? String(body[def.textField] ?? '') : JSON.stringify(body);
  return { contents: [{ uri: uri.href, mimeType: def.mimeType, text }] };
}

/**
 * The MCP server for one request (the SDK's per-request factory): the tools
 * and resource templates the caller's key may use, each running through the
 * same operation call as the HTTP routes, in the caller's tenant. The lists
 * depend on the key, so they are cached only by the client that asked
 * (cacheScope private).
 */
export function mcpServerFactory(deps: McpServerDeps) {
  return (ctx: McpRequestContext): McpServer => {
    const auth = mcpCallerOf(ctx.authInfo);
    const server = new McpServer(
      { name: 'vouch', version: deps.version },
      {
        instructions: INSTRUCTIONS,
        capabilities: { tools: { listChanged: false }, resources: {} },
        cacheHints: {
          'tools/list': { cacheScope: 'private', ttlMs: 60_000 },
          'resources/templates/list': { cacheScope: 'private', ttlMs: 60_000 },
          'resources/list': { cacheScope: 'private', ttlMs: 0 },
          'resources/read': { cacheScope: 'private', ttlMs: 0 },
          'server/discover': { cacheScope: 'private', ttlMs: 60_000 },
        },
      },
    );
    for (const tool of deps.tools) {
      if (!may(auth.caller, tool.scope)) continue;
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: advertised(tool.inputSchema),
          outputSchema: advertised(tool.outputSchema),
          annotations: tool.annotations,
        },
        async (args: unknown, toolCtx: ServerContext): Promise<CallToolResult> => {
          if (tool.name === JOBS_WAIT_TOOL) return jobsWait(args, toolCtx, auth, deps);
          let key: string | undefined;
          try {
            key = idempotencyKeyOf(toolCtx);
          } catch (err) {
            return toolError(problemFromBody(errorBodyOf(err), { instance: MCP_PATH, requestId: auth.requestId }), deps.operations);
          }
          // The request's signal aborts when the client cancels or goes: a waiting board_claimCard stops waiting.
          const outcome = await run(tool.operation, (args ?? {}) as Record<string, unknown>, auth, deps, key, toolCtx.mcpReq.signal);
          if (!outcome.ok) return toolError(outcome.problem, deps.operations);
          // The result is in hand and goes out in this response; nothing would replay it.
          outcome.afterDelivery?.();
          return toolResult(outcome.body);
        },
      );
    }
    for (const def of deps.resources) {
      if (!may(auth.caller, def.scope)) continue;
      server.registerResource(
        def.name,
        new ResourceTemplate(def.uriTemplate, { list: undefined }),
        { title: def.title, description: def.description, mimeType: def.mimeType },
        (uri, variables) => readResource(def, uri, variables, auth, deps),
      );
    }
    return server;
  };
}
