#!/usr/bin/env node
/**
 * vouch-mcp: the gateway's MCP tools for a local agent host that launches
 * its servers as child processes (stdio). It speaks to the gateway at
 * VOUCH_URL with the key in VOUCH_API_KEY; the key never leaves this
 * process but in the Authorization header.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { connectGateway, relayConfigFromEnv, relayServer } from './stdio-relay.js';

const VERSION = '0.1.0';

const config = relayConfigFromEnv(process.env, VERSION);
if (typeof config === 'string') {
  console.error(`vouch-mcp: ${config}`);
  process.exit(78);
}
let upstream;
try {
  upstream = await connectGateway(config);
} catch (err) {
  // Never the key: the URL and the gateway's answer are enough to act on.
  console.error(`vouch-mcp: could not connect to ${config.url.origin}/mcp: ${(err as Error).message}`);
  process.exit(69);
}
const gateway = upstream;
const handle = serveStdio(() => relayServer(gateway, VERSION), { onerror: (err) => console.error(`vouch-mcp: ${err.message}`) });
const stop = async () => {
  await handle.close().catch(() => {});
  await gateway.close().catch(() => {});
  process.exit(0);
};
process.stdin.once('end', () => void stop());
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
