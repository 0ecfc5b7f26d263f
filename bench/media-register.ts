/**
 * media.register latency by what the gateway already holds, beside raw
 * Postgres, in one run:
 *
 *   new bytes       tenant A registers an image nobody stored
 *   same tenant     tenant A registers that image again (a new message)
 *   other tenant    tenant B registers the image tenant A stored
 *   pg insert       raw Postgres: INSERT of the same bytes into a plain bytea table
 *
 * "other tenant" must cost what "new bytes" costs: if it were as cheap as
 * "same tenant", a tenant could tell by timing whether a file exists anywhere
 * in the gateway (a cross-tenant existence oracle). Below the register table it
 * prints the cost of checking and decoding an 8 MiB image's base64, as one
 * line and wrapped at 76 characters, beside a bare Buffer.from decode and the
 * regex check the gateway used before.
 *
 *   npm run bench:media
 *   BENCH_REPS=50 BENCH_IMAGE_KB=4096 npm run bench:media
 *
 * Prints medians over BENCH_REPS registrations of distinct noise PNGs (after
 * BENCH_WARMUP warm-up ones). Needs the local Redis and Postgres; works in a
 * schema and prefix of its own and drops them at the end.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import sharp from 'sharp';
import { decodeBase64Image } from '@vouch/media';
import { TEST_DATABASE_URL } from '@vouch/testing';
import { startGatewayUnderTest } from '../services/gateway/test/gateway-under-test.js';

const REPS = Number(process.env.BENCH_REPS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const IMAGE_KB = Number(process.env.BENCH_IMAGE_KB ?? 1024);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** A PNG of incompressible noise, about IMAGE_KB kilobytes, stored without compression so making it is cheap. */
async function noisePng(): Promise<Buffer> {
  const side = Math.round(Math.sqrt((IMAGE_KB * 1024) / 4));
  return sharp(randomBytes(side * side * 4), { raw: { width: side, height: side, channels: 4 } }).png({ compressionLevel: 0 }).toBuffer();
}

const gw = await startGatewayUnderTest('bench_media');
const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
await db.connect();
const rawTable = `"${gw.schema}".bench_raw_blobs`;
await db.query(`CREATE TABLE ${rawTable} (id serial PRIMARY KEY, bytes bytea NOT NULL)`);
try {
  const tenantA = await gw.createKey('bench-a');
  const tenantB = await gw.createKey('bench-b');
  let message = 0;
  const register = async (key: string, body: string) => {
    const res = await fetch(`${gw.url}/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`media.register answered ${res.status}: ${text}`);
  };
  const bodyFor = (image: string) => JSON.stringify({ surface: 'api', chatKey: 'bench', messageId: `m-${++message}`, imageBase64: image });

  const columns = { 'new bytes': [] as number[], 'same tenant': [] as number[], 'other tenant': [] as number[], 'pg insert': [] as number[] };
  let imageBytes = 0;
  for (let i = 0; i < WARMUP + REPS; i++) {
    const png = await noisePng();
    imageBytes = png.length;
    const image = png.toString('base64');
    // Bodies are built before the clock starts: only the gateway's work is timed.
    const [first, again, foreign] = [bodyFor(image), bodyFor(image), bodyFor(image)];
    const times = {
      'new bytes': await timed(() => register(tenantA, first)),
      'same tenant': await timed(() => register(tenantA, again)),
      'other tenant': await timed(() => register(tenantB, foreign)),
      'pg insert': await timed(() => db.query(`INSERT INTO ${rawTable} (bytes) VALUES ($1)`, [png])),
    };
    if (i >= WARMUP) for (const [k, v] of Object.entries(times)) columns[k as keyof typeof columns].push(v);
  }

  const p50 = Object.fromEntries(Object.entries(columns).map(([k, v]) => [k, median(v)])) as Record<keyof typeof columns, number>;
  console.log(`media.register p50 over ${REPS} distinct ${(imageBytes / 1024).toFixed(0)} KiB PNGs (ms)`);
  console.log(Object.keys(p50).map((k) => k.padStart(13)).join(''));
  console.log(Object.values(p50).map((v) => v.toFixed(2).padStart(13)).join(''));
  console.log(`other tenant / new bytes   ${(p50['other tenant'] / p50['new bytes']).toFixed(2)}×  (1.00× means no cross-tenant timing oracle)`);
  console.log(`same tenant / new bytes    ${(p50['same tenant'] / p50['new bytes']).toFixed(2)}×`);
  console.log(`new bytes / pg insert      ${(p50['new bytes'] / p50['pg insert']).toFixed(2)}×`);

  // The base64 check alone, on an 8 MiB image: the gateway's decode beside a
  // bare Buffer.from, and the check it replaced (strip whitespace, one
  // anchored regex, decode). Each round runs them in a rotated order, so the
  // garbage one leaves is collected in another's time as often as in its own.
  const big = randomBytes(8 * 1024 * 1024).toString('base64');
  const wrapped = big.replace(/.{76}/g, '$&\r\n');
  const regexCheck = (value: string) => {
    const compact = value.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) throw new Error('invalid');
    return Buffer.from(compact, 'base64');
  };
  const checks: Record<string, () => unknown> = {
    'one line': () => decodeBase64Image(big),
    'wrapped 76': () => decodeBase64Image(wrapped),
    'Buffer.from': () => Buffer.from(big, 'base64'),
    'regex, 1 line': () => regexCheck(big),
    'regex, wrapped': () => regexCheck(wrapped),
  };
  const names = Object.keys(checks);
  const check: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let i = 0; i < 11; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length]!;
      check[name]!.push(await timed(checks[name]!));
    }
  }
  console.log('\nbase64 check + decode of an 8 MiB image, p50 of 11 (ms): the gateway, a bare decode, the regex check it replaced');
  console.log(names.map((k) => k.padStart(16)).join(''));
  console.log(names.map((k) => median(check[k]!).toFixed(2).padStart(16)).join(''));
} finally {
  await db.end();
  await gw.stop();
}
