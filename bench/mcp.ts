/**
 * bench:mcp — the round trip of one tool call through /mcp beside the same
 * operation over plain HTTP, in the same run, against a real gateway (and the
 * ledger-critic for ledger.get) on this machine.
 *
 * For each operation: media.recent (answered by the gateway itself, so the
 * figure is the MCP layer's own cost) and ledger.get (through the
 * ledger-critic's queue), BENCH_REPS calls in turn over HTTP (fetch), MCP on
 * the current revision (2026-07-28, no handshake) and MCP on the 2025
 * revision (a stateless POST per call), after a warm-up. Prints medians and
 * p95 in milliseconds and the ratio of each MCP median to HTTP's.
 *
 *   npm run bench:mcp            (BENCH_REPS=300 by default)
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startLedgerServiceUnderTest } from '../services/ledger-critic/test/ledger-test-env.js';
import { startGatewayUnderTest } from '../services/gateway/test/gateway-under-test.js';

const REPS = Number(process.env.BENCH_REPS ?? 300);

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function time(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const gw = await startGatewayUnderTest('bench-mcp');
  const ledger = await startLedgerServiceUnderTest('bench-mcp', {}, { prefix: gw.prefix });
  try {
    const key = await gw.createKey('bench');
    const connect = async (pin: boolean) => {
      const c = new Client({ name: 'bench', version: '1' }, pin ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
      await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', gw.url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
      return c;
    };
    const current = await connect(true);
    const older = await connect(false);
    await current.callTool({ name: 'ledger_open', arguments: { runId: 'bench-run', goal: 'measure the MCP round trip' } });
    await current.callTool({ name: 'ledger_recordEvidence', arguments: { runId: 'bench-run', items: [{ kind: 'tool_result', success: true, summary: 'one observation' }] } });

    const cases = [
      { op: 'media.recent', tool: 'media_recent', args: { surface: 'api', chatKey: 'bench' }, path: '/v1/media/recent?surface=api&chatKey=bench' },
      { op: 'ledger.get', tool: 'ledger_get', args: { runId: 'bench-run' }, path: '/v1/ledgers/bench-run' },
    ];
    console.log(`bench:mcp — ${REPS} calls each, sequential, one warm-up round (ms)`);
    console.log('operation      via                      median     p95   ×HTTP');
    for (const c of cases) {
      const ways: Array<[string, () => Promise<void>]> = [
        ['HTTP (fetch)', async () => {
          const res = await gw.fetch(c.path, { key });
          if (res.status !== 200) throw new Error(`${c.op} over HTTP: ${res.status}`);
          await res.arrayBuffer();
        }],
        ['MCP 2026-07-28', async () => {
          const r = await current.callTool({ name: c.tool, arguments: c.args });
          if (r.isError) throw new Error(`${c.tool}: ${JSON.stringify(r.content)}`);
        }],
        ['MCP 2025-11-25', async () => {
          const r = await older.callTool({ name: c.tool, arguments: c.args });
          if (r.isError) throw new Error(`${c.tool}: ${JSON.stringify(r.content)}`);
        }],
      ];
      const samples = ways.map(() => [] as number[]);
      for (let i = 0; i < 20; i++) for (const [, fn] of ways) await fn();
      // Interleaved, so a noisy moment on a shared machine falls on every way alike.
      for (let i = 0; i < REPS; i++) for (const [w, [, fn]] of ways.entries()) samples[w]!.push(await time(fn));
      const base = quantile(samples[0]!, 0.5);
      for (const [w, [name]] of ways.entries()) {
        const med = quantile(samples[w]!, 0.5);
        console.log(`${c.op.padEnd(14)} ${name.padEnd(22)} ${med.toFixed(2).padStart(8)} ${quantile(samples[w]!, 0.95).toFixed(2).padStart(7)} ${(med / base).toFixed(2).padStart(7)}`);
      }
    }
    await current.close();
    await older.close();
  } finally {
    await ledger.stop();
    await gw.stop();
  }
}

await main();
