import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_AN_IMAGE, TEST_DATABASE_URL, makeJpeg, makePng, makeWebp } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';


/**
 * The gateway end to end over HTTP, as an agent gateway uses it: keys made
 * with the CLI, images registered in two scopes of two tenants, listed and
 * resolved; isolation, idempotency, validation, and no storage detail leaks.
 */
describe('scoped media over HTTP', () => {
  let gw: GatewayUnderTest;
  let acme: string;
  let globex: string;
  let readOnly: string;
  let revoked: string;
  let db: pg.Pool;
  let red: Buffer;
  let blue: Buffer;
  let green: Buffer;
  const bodies: string[] = [];

  const call = async (path: string, init: Parameters<GatewayUnderTest['fetch']>[1] = {}) => {
    const res = await gw.fetch(path, init);
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  const register = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => call('/v1/media', { key, json: body, headers });
  beforeAll(async () => {
    gw = await startGatewayUnderTest('media_e2e');
    db = new pg.Pool({ connectionString: TEST_DATABASE_URL });
    acme = await gw.createKey('acme');
    globex = await gw.createKey('globex');
    readOnly = await gw.createKey('acme', 'media:read');
    revoked = await gw.createKey('acme');
    const list = gw.keys('list', '--tenant', 'acme', '--json');
    const revokedId = (JSON.parse(list.stdout) as Array<{ id: string }>).find((k) => revoked.includes(`_${k.id}_`))!.id;
    expect(gw.keys('revoke', revokedId).status).toBe(0);
    [red, blue, green] = await Promise.all([makePng({ width: 32, height: 16, color: 'red' }), makeJpeg({ width: 20, height: 10, color: 'blue' }), makeWebp({ width: 8, height: 8, color: 'green' })]);
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await gw?.stop();
  });

  it('registers images in a chat under dense per-scope aliases, with type and size read from the bytes', async () => {
    const first = await register(acme, { surface: 'telegram', chatKey: 'chat-1', messageId: '100', imageBase64: red.toString('base64'), caption: 'a red card' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      alias: 'img-1',
      kind: 'image',
      mimeType: 'image/png',
      byteSize: red.length,
      width: 32,
      height: 16,
      surface: 'telegram',
      chatKey: 'chat-1',
      messageId: '100',
      replyToMessageId: null,
      caption: 'a red card',
      alreadyRegistered: false,
    });
    const second = await register(acme, { surface: 'telegram', chatKey: 'chat-1', messageId: '101', replyToMessageId: '100', imageBase64: blue.toString('base64') });
    expect(second.body).toMatchObject({ alias: 'img-2', mimeType: 'image/jpeg', width: 20, height: 10, replyToMessageId: '100' });
    // The same bytes in a new message are a new reference, stored once.
    const third = await register(acme, { surface: 'telegram', chatKey: 'chat-1', messageId: '102', imageBase64: red.toString('base64') });
    expect(third.body).toMatchObject({ alias: 'img-3', mimeType: 'image/png' });
    const other = await register(acme, { surface: 'tui', chatKey: 'chat-1', imageBase64: green.toString('base64') });
    expect(other.body).toMatchObject({ alias: 'img-1', mimeType: 'image/webp', surface: 'tui' });
    const foreign = await register(globex, { surface: 'telegram', chatKey: 'chat-1', messageId: '100', imageBase64: red.toString('base64') });
    expect(foreign.body).toMatchObject({ alias: 'img-1' });

    // Equal bytes are stored once per tenant, never shared between tenants.
    const blobs = await db.query(`SELECT tenant, count(*)::int AS n FROM "${gw.schema}".media_blobs GROUP BY tenant ORDER BY tenant`);
    expect(blobs.rows).toEqual([
      { tenant: 'acme', n: 3 },
      { tenant: 'globex', n: 1 },
    ]);
  });

  it('returns the same alias when a message is registered again, and refuses other bytes for it', async () => {
    const again = await register(acme, { surface: 'telegram', chatKey: 'chat-1', messageId: '100', imageBase64: red.toString('base64') });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ alias: 'img-1', alreadyRegistered: true });
    const clash = await register(acme, { surface: 'telegram', chatKey: 'chat-1', messageId: '100', imageBase64: blue.toString('base64') });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ code: 'CONFLICT', details: { alias: 'img-1' } });
    expect(clash.body.detail).toBe('message 100 in this chat already carries img-1, a different image: register each image with its own message id');
  });

  it('lists a chat\'s recent media newest first, and nothing of other scopes or tenants', async () => {
    const recent = await call('/v1/media/recent?surface=telegram&chatKey=chat-1', { key: acme });
    expect(recent.status).toBe(200);
    expect(recent.body.items.map((m: { alias: string }) => m.alias)).toEqual(['img-3', 'img-2', 'img-1']);
    expect(recent.body.items[1]).toMatchObject({ messageId: '101', replyToMessageId: '100', byteSize: blue.length });
    const limited = await call('/v1/media/recent?surface=telegram&chatKey=chat-1&limit=1', { key: readOnly });
    expect(limited.body.items.map((m: { alias: string }) => m.alias)).toEqual(['img-3']);
    const tui = await call('/v1/media/recent?surface=tui&chatKey=chat-1', { key: acme });
    expect(tui.body.items.map((m: { mimeType: string }) => m.mimeType)).toEqual(['image/webp']);
    const theirs = await call('/v1/media/recent?surface=telegram&chatKey=chat-1', { key: globex });
    expect(theirs.body.items).toHaveLength(1);
    expect(theirs.body.items[0]).toMatchObject({ alias: 'img-1', messageId: '100' });
    const empty = await call('/v1/media/recent?surface=api&chatKey=nobody', { key: acme });
    expect(empty.body).toEqual({ items: [] });
  });

  it('resolves reply-to first, then an explicit alias, then the latest image', async () => {
    const byReply = await call('/v1/media/resolve', { key: acme, json: { surface: 'telegram', chatKey: 'chat-1', replyToMessageId: '101', alias: 'img-1' } });
    expect(byReply.body).toMatchObject({ resolvedBy: 'reply_to', media: { alias: 'img-2' }, otherRecentAliases: [] });
    const byAlias = await call('/v1/media/resolve', { key: acme, json: { surface: 'telegram', chatKey: 'chat-1', alias: 'img-1' } });
    expect(byAlias.body).toMatchObject({ resolvedBy: 'alias', media: { alias: 'img-1' } });
    const latest = await call('/v1/media/resolve', { key: acme, json: { surface: 'telegram', chatKey: 'chat-1', replyToMessageId: '999' } });
    expect(latest.body).toMatchObject({ resolvedBy: 'latest', media: { alias: 'img-3' }, otherRecentAliases: ['img-2', 'img-1'] });
  });

  it('answers a missing image with what to do and the aliases that exist, never another scope\'s image', async () => {
    const unknown = await call('/v1/media/resolve', { key: acme, json: { surface: 'telegram', chatKey: 'chat-1', alias: 'img-9' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('no image img-9 in this chat: use one of the recent aliases: img-3, img-2, img-1');
    const none = await call('/v1/media/resolve', { key: acme, json: { surface: 'api', chatKey: 'empty-chat' } });
    expect(none.status).toBe(404);
    expect(none.body.detail).toBe('no image in this chat: send an image or reply to one');
    // globex has only img-1 in its chat-1; acme's img-2 does not exist for it.
    const crossTenant = await call('/v1/media/resolve', { key: globex, json: { surface: 'telegram', chatKey: 'chat-1', alias: 'img-2' } });
    expect(crossTenant.status).toBe(404);
    expect(crossTenant.body.detail).toBe('no image img-2 in this chat: use one of the recent aliases: img-1');
  });

  it('replays a request with the same Idempotency-Key and refuses the key for another body', async () => {
    const body = { surface: 'api', chatKey: 'idem', imageBase64: green.toString('base64') };
    const first = await register(acme, body, { 'Idempotency-Key': 'upload-1' });
    const second = await register(acme, body, { 'Idempotency-Key': 'upload-1' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const listed = await call('/v1/media/recent?surface=api&chatKey=idem', { key: acme });
    expect(listed.body.items).toHaveLength(1);
    const other = await register(acme, { ...body, caption: 'changed' }, { 'Idempotency-Key': 'upload-1' });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
    // Keys belong to a tenant: globex may use the same key for its own request.
    const theirs = await register(globex, body, { 'Idempotency-Key': 'upload-1' });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers bad input with a problem document naming the fields, and keeps serving', async () => {
    const malformed = await call('/v1/media', { key: acme, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"surface": "telegram",' });
    expect(malformed.status).toBe(400);
    expect(malformed.type).toContain('application/problem+json');
    expect(malformed.body).toMatchObject({ code: 'BAD_INPUT', status: 400, fields: [{ path: '(body)', message: 'malformed JSON' }] });

    const wrongTypes = await register(acme, { surface: 'sms', chatKey: 42, imageBase64: red.toString('base64') });
    expect(wrongTypes.status).toBe(400);
    expect(wrongTypes.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(['chatKey', 'surface']);
    expect(wrongTypes.body.detail).toContain('invalid media.register request: surface:');

    const extra = await register(acme, { surface: 'api', chatKey: 'c', imageBase64: red.toString('base64'), path: '/etc/passwd' });
    expect(extra.status).toBe(400);
    expect(extra.body.fields[0].message).toContain('Unrecognized key');

    const notImage = await register(acme, { surface: 'api', chatKey: 'c', imageBase64: NOT_AN_IMAGE.toString('base64') });
    expect(notImage.status).toBe(415);
    expect(notImage.body.detail).toContain('imageBase64 is not a supported image (looks like application/pdf)');

    const dataUrl = await register(acme, { surface: 'api', chatKey: 'c', imageBase64: `data:image/png;base64,${red.toString('base64')}` });
    expect(dataUrl.status).toBe(400);
    expect(dataUrl.body.detail).toContain('without a data: URL prefix');

    const huge = await register(acme, { surface: 'api', chatKey: 'c', imageBase64: 'A'.repeat(15 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');

    const noType = await call('/v1/media', { key: acme, method: 'POST', body: 'surface=api' });
    expect(noType.status).toBe(415);

    const badQuery = await call('/v1/media/recent?surface=telegram&chatKey=chat-1&limit=1000', { key: acme });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.fields).toEqual([{ path: 'limit', message: 'Too big: expected number to be <=100' }]);

    const badAlias = await call('/v1/media/resolve', { key: acme, json: { surface: 'telegram', chatKey: 'chat-1', alias: '../../img-1' } });
    expect(badAlias.status).toBe(400);
    expect(badAlias.body.fields[0]).toEqual({ path: 'alias', message: 'a media alias looks like img-3: list them with media.recent' });

    expect((await call('/v1/nowhere', { key: acme })).status).toBe(404);
    expect((await call('/livez')).status).toBe(200);
  });

  it('refuses missing, malformed, revoked and under-scoped keys', async () => {
    const none = await call('/v1/media/recent?surface=api&chatKey=c');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="vouch"');
    expect(none.body.detail).toContain('npm run keys -- create --tenant NAME');
    expect((await call('/v1/media/recent?surface=api&chatKey=c', { key: 'not-a-key' })).status).toBe(401);
    const gone = await call('/v1/media/recent?surface=api&chatKey=c', { key: revoked });
    expect(gone.status).toBe(401);
    expect(gone.body.detail).toContain('unknown or revoked');
    const scoped = await register(readOnly, { surface: 'api', chatKey: 'c', imageBase64: red.toString('base64') });
    expect(scoped.status).toBe(403);
    expect(scoped.body.detail).toBe('this API key lacks the media:write scope needed for media.register: create a key with --scopes media:write');
  });

  it('never puts a storage key, hash or file system path in a response', () => {
    const hashes = [red, blue, green].map((b) => createHash('sha256').update(b).digest('hex'));
    const all = bodies.join('\n');
    expect(bodies.length).toBeGreaterThan(20);
    for (const h of hashes) {
      expect(all).not.toContain(h);
      expect(all).not.toContain(Buffer.from(h, 'hex').toString('base64'));
    }
    expect(all).not.toMatch(/sha256|storage|\/tmp\/|\/work\/|\/var\/|node_modules|\\\\x[0-9a-f]{8}/i);
  });
});
