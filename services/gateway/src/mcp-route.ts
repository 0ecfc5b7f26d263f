import express, { type NextFunction, type Request, type Response } from 'express';
import { hostHeaderValidation, localhostOriginValidation } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { buildMcpResourceTemplates, buildMcpTools, type OperationDef } from '@vouch/contracts';
import type { Caller } from './api-keys.js';
import { mcpBearerAuth } from './mcp-auth.js';
import { mcpServerFactory } from './mcp-server.js';
import type { CallDeps } from './operation-call.js';

export interface McpRouteDeps extends CallDeps {
  operations: readonly OperationDef[];
  authenticate(key: string): Promise<Caller | undefined>;
  version: string;
  /** Largest request body, in bytes. */
  bodyLimitBytes: number;
  /**
   * Whether the gateway listens on loopback only. Then, as the SDK's Express
   * app does by default, requests whose Host or Origin is not a loopback name
   * are refused (a web page cannot reach a local server by rebinding DNS).
   */
  loopbackOnly: boolean;
}

/**
 * The MCP endpoint (Streamable HTTP): every agent-facing operation of the
 * table as a tool, and the table's resources, for the current protocol
 * revision and older clients from the same handler (createMcpHandler serves
 * 2025-era requests statelessly). Mounted at /mcp behind bearer auth.
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
  router.all('/', (req: Request, res: Response, next: NextFunction) => {
    // The tool list depends on the key. POST answers are not cached by HTTP caches, and the
    // 2026-07-28 results say cacheScope private (mcp-server.ts); this tells any cache in between.
    res.setHeader('Vary', 'Authorization');
    node(req, res).catch(next);
  });
  return router;
}
