/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against the
 * real gateway's /mcp on loopback. The suite's client sends no credentials,
 * so a loopback relay adds the bearer key and passes everything else through
 * untouched (the Host header included). The scenarios that do not apply to
 * vouch are listed, each with its reason, in mcp-conformance/baseline.yml;
 * the suite fails on any other failure, and on a listed scenario that passes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

const require = createRequire(import.meta.url);
const CLI = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..', 'dist', 'index.js');
const BASELINE = fileURLToPath(new URL('./mcp-conformance/baseline.yml', import.meta.url));
const NODE20 = fileURLToPath(new URL('./mcp-conformance/node20-register.mjs', import.meta.url));

let gw: GatewayUnderTest;
let relay: Server;
let relayUrl: string;
let work: string;

beforeAll(async () => {
  gw = await startGatewayUnderTest('mcp-conformance');
  const key = await gw.createKey('conformance');
  const target = new URL(gw.url);
  relay = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/mcp`;
  work = mkdtempSync(join(tmpdir(), 'vouch-conformance-'));
});

afterAll(async () => {
  relay?.closeAllConnections();
  await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
  await gw?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

it('passes every server scenario of the MCP conformance suite that applies to vouch', async () => {
  const nodeArgs = Number(process.versions.node.split('.')[0]) < 22 ? ['--import', NODE20] : [];
  const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    // Asynchronously: the gateway under test runs in this process.
    const child = spawn(process.execPath, [...nodeArgs, CLI, 'server', '--url', relayUrl, '--expected-failures', BASELINE], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
  expect(run.code, run.output).toBe(0);
}, 240_000);
