import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';

/** The two protocol generations a vouch MCP client may speak. */
export type McpRevision = 'current' | 'older';

/**
 * The SDK's own client on the gateway's /mcp with a bearer key: `current`
 * pins the 2026-07-28 revision (no handshake, a `_meta` envelope on every
 * request); `older` is the default 2025 `initialize` handshake, as deployed
 * clients speak it.
 */
export async function connectMcp(baseUrl: string, key: string, revision: McpRevision): Promise<Client> {
  const client = new Client(
    { name: `vouch-test-${revision}`, version: '1.0.0' },
    revision === 'current' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  return client;
}

/** The text of a tool result's first content block. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first && first.type === 'text' ? first.text : '';
}
