import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server, type ServerContext } from '@modelcontextprotocol/server';

/** Where the relay finds the gateway, and whose key it uses. */
export interface RelayConfig {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080 (its /mcp endpoint is used). */
  url: URL;
  apiKey: string;
  version: string;
}

/** Reads VOUCH_URL and VOUCH_API_KEY; returns the reason they will not do, or the config. */
export function relayConfigFromEnv(env: NodeJS.ProcessEnv, version: string): RelayConfig | string {
  const key = env.VOUCH_API_KEY?.trim();
  const raw = env.VOUCH_URL?.trim() || 'http://127.0.0.1:8080';
  if (!key) return 'VOUCH_API_KEY is not set: create a key with `npm run keys -- create --tenant NAME` and pass it in the environment';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `VOUCH_URL is not a URL (${JSON.stringify(raw)}): set it to the gateway's base URL, e.g. http://127.0.0.1:8080`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `VOUCH_URL must be http or https, not ${url.protocol}`;
  return { url, apiKey: key, version };
}

/**
 * Connects to the gateway's /mcp with the key. The era is negotiated on the
 * HTTP side by itself (a probe, then the current revision), independently of
 * the one the stdio host speaks.
 */
export async function connectGateway(config: RelayConfig): Promise<Client> {
  const client = new Client({ name: 'vouch-mcp', version: config.version }, { versionNegotiation: { mode: 'auto' } });
  const endpoint = new URL('mcp', config.url.href.endsWith('/') ? config.url : new URL(`${config.url.href}/`));
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${config.apiKey}` } } }));
  return client;
}

/** Forwards the request's progress token, if it has one, as progress notifications to the stdio host. */
function progressTo(ctx: ServerContext) {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  return (p: { progress: number; total?: number; message?: string }) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => {});
}

/**
 * The stdio side: a low-level Server whose every tool and resource request is
 * answered by the gateway, so the tools, the key's scopes and tenant, the
 * errors and the progress of jobs_wait are exactly those of /mcp. Results are
 * passed on without the HTTP side's envelope fields, which belong to that
 * connection's revision.
 */
export function relayServer(upstream: Client, version: string): Server {
  const server = new Server(
    { name: 'vouch', version },
    { capabilities: { tools: {}, resources: {} }, ...(upstream.getInstructions() ? { instructions: upstream.getInstructions() } : {}) },
  );
  server.setRequestHandler('tools/list', async (request) => {
    const { tools, nextCursor } = await upstream.listTools(request.params);
    return { tools, ...(nextCursor ? { nextCursor } : {}) };
  });
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const onprogress = progressTo(ctx);
    // jobs_wait waits up to 45 s; the request may take that long, and progress keeps it alive.
    const { content, structuredContent, isError } = await upstream.callTool(request.params, { timeout: 60_000, signal: ctx.mcpReq.signal, ...(onprogress ? { onprogress, resetTimeoutOnProgress: true } : {}) });
    return { content, ...(structuredContent !== undefined ? { structuredContent } : {}), ...(isError ? { isError } : {}) };
  });
  server.setRequestHandler('resources/templates/list', async (request) => {
    const { resourceTemplates, nextCursor } = await upstream.listResourceTemplates(request.params);
    return { resourceTemplates, ...(nextCursor ? { nextCursor } : {}) };
  });
  server.setRequestHandler('resources/list', async (request) => {
    const { resources, nextCursor } = await upstream.listResources(request.params);
    return { resources, ...(nextCursor ? { nextCursor } : {}) };
  });
  server.setRequestHandler('resources/read', async (request) => {
    const { contents } = await upstream.readResource(request.params);
    return { contents };
  });
  return server;
}
