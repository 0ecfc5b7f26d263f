import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js';

/**
 * Many parallel large media.register calls against a real gateway process:
 * the gateway admits request bodies up to its byte budget, answers the rest
 * 503 with Retry-After at once, and its memory stays bounded by the budget.
 */

const MiB = 1024 * 1024;
const PARALLEL = 48;
/** Three bodies of a 10 MB image fit at once. */
const BUDGET = 42 * MiB;

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * One 10 MB noise PNG shared by every request, made distinct per request by a
 * tEXt chunk after IHDR. The head (signature, IHDR, tEXt) is a multiple of 3
 * bytes long, so base64(head) + base64(rest) is the base64 of the whole file
 * and every request can send the one shared base64 buffer of the rest.
 */
async function largeImage(): Promise<{ bytes: number; restBase64: Buffer; headBase64(n: number): string }> {
  const side = 1600; // 1600² RGBA stored uncompressed: 10.25 MB, under the 10 MiB limit
  const png = await sharp(randomBytes(side * side * 4), { raw: { width: side, height: side, channels: 4 } }).png({ compressionLevel: 0 }).toBuffer();
  const afterIhdr = 8 + 25;
  return {
    bytes: png.length,
    restBase64: Buffer.from(png.subarray(afterIhdr).toString('base64'), 'latin1'),
    headBase64(n) {
      let text = `Comment\0upload ${n}`;
      while ((afterIhdr + 12 + text.length) % 3 !== 0) text += ' ';
      return Buffer.concat([png.subarray(0, afterIhdr), pngChunk('tEXt', Buffer.from(text, 'latin1'))]).toString('base64');
    },
  };
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  type: string | undefined;
  body: Record<string, unknown>;
}

/** POSTs a media.register body written in three parts; without Content-Length when `chunked`. */
function postImage(port: number, key: string, parts: [string, Buffer, string], chunked: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = Buffer.byteLength(parts[0]) + parts[1].length + Buffer.byteLength(parts[2]);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/media',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': length }) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], type: res.headers['content-type'], body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    req.write(parts[0]);
    req.write(parts[1]);
    req.end(parts[2]);
  });
}

describe('large media bodies under load', () => {
  let gw: GatewayProcess;
  let key: string;
  let image: Awaited<ReturnType<typeof largeImage>>;
  let sent = 0;

  const uploads = (n: number, chunked: boolean) =>
    Promise.all(
      Array.from({ length: n }, () => {
        const id = ++sent;
        return postImage(gw.port, key, [`{"surface":"api","chatKey":"load","messageId":"m-${id}","imageBase64":"${image.headBase64(id)}`, image.restBase64, '"}'], chunked);
      }),
    );

  // One tenant uploads, so its share is the whole budget: this is the budget's test (body-budget.test.ts has the shares').
  beforeAll(async () => {
    [gw, image] = await Promise.all([startGatewayProcess('media_memory', { BODY_BUDGET_BYTES: String(BUDGET), BODY_BUDGET_TENANT_BYTES: String(BUDGET) }), largeImage()]);
    key = await gw.createKey('load');
    // Warm every path a registration takes (sharp, Postgres, the JSON parser) before the baseline.
    expect((await uploads(2, false)).map((a) => a.status)).toEqual([200, 200]);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it.each([
    ['chunked', true],
    ['with Content-Length', false],
  ])('admits %s uploads up to the body budget, refuses the rest with 503 and Retry-After, and keeps memory bounded', async (_label, chunked) => {
    gw.resetPeak();
    const before = gw.memory();
    const answers = await uploads(PARALLEL, chunked);
    const after = gw.memory();
    const statuses = answers.map((a) => a.status);
    const growth = after.peak - before.rss;
    console.log(`${PARALLEL} parallel ${(image.bytes / MiB).toFixed(2)} MiB uploads (${chunked ? 'chunked' : 'Content-Length'}): ` +
      `RSS ${(before.rss / MiB).toFixed(0)} MiB before, peak ${(after.peak / MiB).toFixed(0)} MiB, now ${(after.rss / MiB).toFixed(0)} MiB; ` +
      `${statuses.filter((s) => s === 200).length} × 200, ${statuses.filter((s) => s === 503).length} × 503`);

    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1);
    for (const refused of answers.filter((a) => a.status === 503)) {
      expect(refused.retryAfter).toMatch(/^\d+$/);
      expect(refused.type).toContain('application/problem+json');
      expect(refused.body).toMatchObject({ status: 503, code: 'DEPENDENCY_UNAVAILABLE' });
      expect(refused.body.detail).toContain('the gateway holds as many request bodies as it may at once (BODY_BUDGET_BYTES=');
    }
    // Measured: a 10 MB registration holds about 4× its body at its peak (the
    // JSON text, the parsed string, the decoded bytes, the Postgres message).
    // Unbounded, 48 of them took the gateway from 331 MB to 1.6 GB.
    expect(growth).toBeLessThan(BUDGET * 6 + 150 * MiB);
  }, 180_000);
});
