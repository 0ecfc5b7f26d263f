import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '@vouch/platform';
import { TEST_DATABASE_URL, useTestSchema } from '@vouch/testing';
import { createApiKey } from '../src/api-keys.js';
import { MIGRATIONS_DIR } from '../src/gateway.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

/**
 * What media.register lets in: images that decode fully within the pixel and
 * frame limits, base64 with line breaks, and bytes deduplicated per tenant
 * only, never sent to Postgres twice by one tenant.
 */

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/** Deflated rows of a blank greyscale image, by side: making them is the slow part. */
const blankRows = new Map<number, Buffer>();

/**
 * A blank greyscale PNG `side` pixels square, tagged with `label` in a tEXt
 * chunk so that equal sides still give distinct files. At 10000 it is a real
 * 10000×10000 PNG: 97 KB that inflates to 100 MB of pixels.
 */
function blankPng(side: number, label = ''): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth; colour type 0 (grey), deflate, no filter method, no interlace
  let rows = blankRows.get(side);
  if (!rows) blankRows.set(side, (rows = deflateSync(Buffer.alloc(side * (side + 1)), { level: 9 }))); // a filter byte and a zero row each
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    pngChunk('IHDR', header),
    pngChunk('tEXt', Buffer.from(`Comment\0${label}`, 'latin1')),
    pngChunk('IDAT', rows),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * An animated GIF of `frames` frames on a width×height canvas, each frame one
 * pixel drawn at the corner: 23 bytes a frame, so 450,000 frames fit in 10 MB.
 */
function animatedGif(frames: number, width = 1, height = 1): Buffer {
  const screen = Buffer.from([0, 0, 0, 0, 0x80, 0, 0]); // global colour table of 2 entries
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  const loop = Buffer.concat([Buffer.from([0x21, 0xff, 0x0b]), Buffer.from('NETSCAPE2.0', 'latin1'), Buffer.from([3, 1, 0, 0, 0])]);
  // Graphic control (10 ms), image descriptor 1×1 at 0,0, LZW minimum code size 2, codes clear·0·end, block end.
  const frame = Buffer.from([0x21, 0xf9, 4, 0, 1, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0]);
  return Buffer.concat([Buffer.from('GIF89a', 'latin1'), screen, Buffer.from([0, 0, 0, 255, 255, 255]), loop, ...Array.from({ length: frames }, () => frame), Buffer.from([0x3b])]);
}

/** A PNG of noise (so it does not compress), `side` pixels square. */
const noisePng = (side: number) => sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png().toBuffer();

describe('media.register checks', () => {
  let gw: GatewayUnderTest;
  let acme: string;
  let globex: string;
  let db: pg.Pool;
  let chat = 0;

  const register = async (key: string, imageBase64: string, fields: Record<string, string> = {}) => {
    const res = await gw.fetch('/v1/media', { key, json: { surface: 'api', chatKey: `chat-${++chat}`, imageBase64, ...fields } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { detail: string; fields: unknown } };
  };
  const blobCount = async () => (await db.query(`SELECT count(*)::int AS n FROM "${gw.schema}".media_blobs`)).rows[0].n as number;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('media_checks', { MEDIA_DECODE_CONCURRENCY: '1' });
    db = new pg.Pool({ connectionString: TEST_DATABASE_URL });
    // Keys straight from the store: the CLI's path is media-e2e's to test.
    acme = (await createApiKey(gw.gateway.pool, { tenant: 'acme' })).key;
    globex = (await createApiKey(gw.gateway.pool, { tenant: 'globex' })).key;
  });

  afterAll(async () => {
    await db?.end();
    await gw?.stop();
  });

  describe('an image must decode fully within the limits', () => {
    it('refuses a truncated PNG, a PNG with a bad CRC and a truncated JPEG as damaged, naming imageBase64', async () => {
      const png = await noisePng(64);
      const idat = png.indexOf('IDAT', 0, 'latin1') - 4;
      const idatEnd = idat + 12 + png.readUInt32BE(idat);
      const badCrc = Buffer.from(png);
      badCrc[idatEnd - 1]! ^= 0xff;
      const jpeg = await sharp(randomBytes(256 * 256 * 3), { raw: { width: 256, height: 256, channels: 3 } }).jpeg().toBuffer();
      const before = await blobCount();
      for (const [bytes, mime] of [
        [png.subarray(0, Math.floor(png.length * 0.6)), 'image/png'],
        [badCrc, 'image/png'],
        [jpeg.subarray(0, Math.floor(jpeg.length * 0.6)), 'image/jpeg'],
      ] as const) {
        const answer = await register(acme, bytes.toString('base64'));
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 'BAD_INPUT', fields: [{ path: 'imageBase64', message: 'damaged image' }] });
        expect(answer.body.detail).toMatch(new RegExp(`^imageBase64 is a damaged ${mime}: it does not decode to the end \\(.+\\); send the original file$`));
      }
      expect(await blobCount()).toBe(before);
      expect((await register(acme, png.toString('base64'))).status).toBe(200);
    });

    it('refuses a 10000×10000 PNG (100 MB of pixels in 97 KB) before decoding it', async () => {
      const answer = await register(acme, blankPng(10_000).toString('base64'));
      expect(answer.status).toBe(413);
      expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', fields: [{ path: 'imageBase64', message: 'past the image limits' }] });
      expect(answer.body.detail).toBe('imageBase64 is 10000×10000 = 100000000 pixels, above the 50000000-pixel limit: downscale it first');
    });

    it('refuses a 450,000-frame GIF, and an animation whose frames together pass the pixel limit', async () => {
      const frames = await register(acme, animatedGif(450_000).toString('base64'));
      expect(frames.status).toBe(413);
      expect(frames.body.detail).toBe('imageBase64 is an animation of 450000 frames, above the 1000-frame limit: send a still image or a shorter animation');
      const pixels = await register(acme, animatedGif(500, 400, 300).toString('base64'));
      expect(pixels.status).toBe(413);
      expect(pixels.body.detail).toBe('imageBase64 is 500 frames of 400×300 = 60000000 pixels in all, above the 50000000-pixel limit: send fewer or smaller frames');
      const fine = await register(acme, animatedGif(3, 40, 30).toString('base64'));
      expect(fine.status).toBe(200);
      expect(fine.body).toMatchObject({ mimeType: 'image/gif', width: 40, height: 30 });
    });

    it('decodes one image at a time when MEDIA_DECODE_CONCURRENCY is 1, off the event loop', async () => {
      // 7000×7000 is under the pixel limit and takes a good part of a second to decode.
      const images = Array.from({ length: 4 }, (_, i) => blankPng(7_000, `decode ${i}`));
      let most = 0;
      let sampling = true;
      // sharp counts the tasks its threads are running; this loop turns between the gateway's work.
      const sample = () => {
        most = Math.max(most, sharp.counters().process);
        if (sampling) setImmediate(sample);
      };
      sample();
      const answers = await Promise.all(images.map((png) => register(acme, png.toString('base64'))));
      sampling = false;
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(most).toBe(1);
    });
  });

  describe('base64 as the README allows it', () => {
    it('takes a near-limit image line-wrapped at 76 characters: line breaks do not count against the size', async () => {
      const png = await sharp(randomBytes(1600 * 1600 * 4), { raw: { width: 1600, height: 1600, channels: 4 } }).png({ compressionLevel: 0 }).toBuffer();
      expect(png.length).toBeGreaterThan(10_000_000);
      const wrapped = png.toString('base64').replace(/.{76}/g, '$&\r\n');
      const answer = await register(acme, wrapped);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ byteSize: png.length, width: 1600, height: 1600 });
    });

    it('names a character that is not base64 and where it is', async () => {
      const b64 = (await noisePng(8)).toString('base64');
      const answer = await register(acme, `${b64.slice(0, 100)}%${b64.slice(100)}`);
      expect(answer.status).toBe(400);
      expect(answer.body.fields).toEqual([{ path: 'imageBase64', message: 'invalid base64' }]);
      expect(answer.body.detail).toMatch(/^imageBase64 is not base64: character 100 is '%': send the file as standard base64/);
    });
  });

  describe('tenants never share stored bytes', () => {
    it('stores bytes two tenants send twice, one copy each, and neither sees the other\'s registrations', async () => {
      const png = await noisePng(32);
      const sha = createHash('sha256').update(png).digest();
      const mine = await register(acme, png.toString('base64'), { chatKey: 'shared-bytes' });
      const theirs = await register(globex, png.toString('base64'), { chatKey: 'shared-bytes' });
      expect([mine.status, theirs.status]).toEqual([200, 200]);
      const { rows } = await db.query(`SELECT tenant FROM "${gw.schema}".media_blobs WHERE sha256 = $1 ORDER BY tenant`, [sha]);
      expect(rows).toEqual([{ tenant: 'acme' }, { tenant: 'globex' }]);
      for (const key of [acme, globex]) {
        const recent = await gw.fetch('/v1/media/recent?surface=api&chatKey=shared-bytes', { key });
        expect(((await recent.json()) as { items: unknown[] }).items).toHaveLength(1);
      }
    });

    it('does not send bytes the tenant already stored to Postgres again, and sends bytes only another tenant stored', async () => {
      // Every Buffer the gateway's pool sends as a query parameter, by size (the real Postgres answers them).
      const sent: number[] = [];
      const watched = new WeakSet<object>();
      gw.gateway.pool.on('acquire', (client) => {
        if (watched.has(client)) return;
        watched.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as { query: unknown }).query = (...args: unknown[]) => {
          const values = args[1];
          if (Array.isArray(values)) for (const v of values) if (Buffer.isBuffer(v)) sent.push(v.length);
          return query(...args);
        };
      });
      const png = await noisePng(48);
      const largest = () => Math.max(0, ...sent.splice(0));
      expect((await register(acme, png.toString('base64'))).status).toBe(200);
      expect(largest()).toBe(png.length);
      const again = await register(acme, png.toString('base64'));
      expect(again.status).toBe(200);
      expect(largest()).toBe(32); // the SHA-256 only
      expect((await register(globex, png.toString('base64'))).status).toBe(200);
      expect(largest()).toBe(png.length);
    });
  });
});

describe('the tenant-scoped blobs migration', () => {
  it('gives each tenant its own copy of bytes registered by several, and drops bytes no registration refers to', async () => {
    const schema = await useTestSchema('media_blob_migration');
    const earlier = await mkdtemp(join(tmpdir(), 'media-migrations-'));
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    try {
      const files = (await readdir(MIGRATIONS_DIR)).sort();
      const upTo = files.indexOf('1764460800004_media-tenant-blobs.sql');
      expect(upTo).toBeGreaterThan(0);
      for (const f of files.slice(0, upTo)) await copyFile(join(MIGRATIONS_DIR, f), join(earlier, f));
      await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: earlier });
      await db.connect();
      await db.query(`SET search_path TO "${schema.schema}"`);
      const shared = Buffer.alloc(32, 1);
      const orphan = Buffer.alloc(32, 2);
      await db.query(`INSERT INTO media_blobs (sha256, mime_type, byte_size, width, height, bytes) VALUES ($1, 'image/png', 3, 1, 1, '\\x010203'), ($2, 'image/gif', 1, 2, 2, '\\x09')`, [shared, orphan]);
      await db.query(`INSERT INTO media_scopes (tenant, surface, chat_key) VALUES ('acme', 'api', 'c'), ('globex', 'tui', 'd')`);
      await db.query(`INSERT INTO media_refs (tenant, surface, chat_key, alias_no, sha256) VALUES ('acme', 'api', 'c', 1, $1), ('acme', 'api', 'c', 2, $1), ('globex', 'tui', 'd', 1, $1)`, [shared]);

      await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
      const blobs = await db.query(`SELECT tenant, sha256, mime_type, byte_size, width, height, bytes FROM media_blobs ORDER BY tenant`);
      expect(blobs.rows).toEqual(['acme', 'globex'].map((tenant) => ({ tenant, sha256: shared, mime_type: 'image/png', byte_size: 3, width: 1, height: 1, bytes: Buffer.from([1, 2, 3]) })));
      const refs = await db.query(`SELECT r.tenant, r.alias_no, b.bytes FROM media_refs r JOIN media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256 ORDER BY r.tenant, r.alias_no`);
      expect(refs.rows.map((r) => `${r.tenant}/${r.alias_no}`)).toEqual(['acme/1', 'acme/2', 'globex/1']);
      // A registration can no longer point at bytes its tenant does not hold.
      await expect(db.query(`INSERT INTO media_refs (tenant, surface, chat_key, alias_no, sha256) VALUES ('globex', 'tui', 'd', 2, $1)`, [orphan])).rejects.toThrow(/media_refs_blob_fkey/);
    } finally {
      await db.end();
      await rm(earlier, { recursive: true, force: true });
      await schema.cleanup();
    }
  });
});
