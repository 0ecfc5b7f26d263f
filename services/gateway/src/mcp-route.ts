import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { hostHeaderValidation, localhostOriginValidation } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { JSONRPC_VERSION, ProtocolErrorCode, createMcpHandler, localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { buildMcpResourceTemplates, buildMcpTools, type OperationDef } from '@vouch/contracts';
import type { Caller } from './api-keys.js';
import { mcpBearerAuth } from './mcp-auth.js';
import { mcpServerFactory } from './mcp-server.js';
import type { CallDeps } from './operation-call.js';

export interface McpRouteDeps extends CallDeps {
  operations: readonly OperationDef[];
  authenticate(key: string): Promise<Caller | undefined>;
  version: string;
  /** Largest request body, in bytes: the SDK's own bound too, should it ever read a body itself. */
  bodyLimitBytes: number;
  /** The gateway's JSON body parser within its body budget, the one the /v1 routes read with. */
  readBody: readonly RequestHandler[];
  /**
   * Whether the gateway listens on loopback only. Then, as the SDK's Express
   * app does by default, requests whose Host or Origin is not a loopback name
   * are refused (a web page cannot reach a local server by rebinding DNS).
   */
  loopbackOnly: boolean;
}

/**
 * A JSON-RPC batch is refused before any of its calls runs. MCP removed
 * batching in revision 2025-06-18, but the SDK's stateless serving of 2025-era
 * requests still runs a batch of up to 100 calls at once, each a job or a
 * wait: one request of 100 board_claimCard calls tied up the board-dispatcher.
 * The answer is the SDK's own for a batch on a modern-only endpoint (Invalid
 * Request, HTTP 400, no id), with the way out.
 */
function refuseBatch(res: Response): void {
  res.status(400).json({
    jsonrpc: JSONRPC_VERSION,
    error: {
      code: ProtocolErrorCode.InvalidRequest,
      message: 'Bad Request: JSON-RPC batches are not supported by this endpoint (MCP removed them in protocol revision 2025-06-18): send one JSON-RPC message per request',
    },
    id: null,
  });
}

/**
 * The body the SDK is handed: the one the gateway's parser read, within the
 * body budget, so that the SDK never reads the stream itself (it would read
 * any body up to the limit, outside the budget). A body the parser left
 * unread (not JSON) stands as null: the SDK refuses its media type (415) from
 * the headers before it looks at a body.
 */
function parsedBodyOf(req: Request): unknown {
  return (req.body as unknown) ?? null;
}

/**
 * The MCP endpoint (Streamable HTTP): every agent-facing operation of the
 * table as a tool, and the table's resources, for the current protocol
 * revision and older clients from the same handler (createMcpHandler serves
 * 2025-era requests statelessly). Mounted at /mcp behind bearer auth; bodies
 * are read as on /v1, after the key is checked.
 */
export function mcpRouter(deps: McpRouteDeps): express.Router {
  const tools = buildMcpTools(deps.operations);
  const resources = buildMcpResourceTemplates(deps.operations);
  const handler = createMcpHandler(mcpServerFactory({ ...deps, tools, resources }), {
    maxRequestBodySize: deps.bodyLimitBytes,
    onerror: (err) => deps.logger.warn({ err: { message: err.message } }, 'MCP request refused or failed'),
  });
  const node = toNodeHandler(handler, { maxRequestBodySize: deps.bodyLimitBytes });
  const router = express.Router();
  if (deps.loopbackOnly) router.use(hostHeaderValidation(localhostAllowedHostnames()), localhostOriginValidation());
  router.use(mcpBearerAuth(deps.authenticate, [...tools, ...resources]));
  router.all('/', ...deps.readBody, (req: Request, res: Response, next: NextFunction) => {
    // The tool list depends on the key. POST answers are not cached by HTTP caches, and the
    // 2026-07-28 results say cacheScope private (mcp-server.ts); this tells any cache in between.
    res.setHeader('Vary', 'Authorization');
    if (Array.isArray(req.body)) return refuseBatch(res);
    node(req, res, parsedBodyOf(req)).catch(next);
  });
  return router;
}
