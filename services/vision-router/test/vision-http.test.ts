import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NATIVE_IMAGE_LIMITS } from '@vouch/contracts';
import { metricValue, startOllamaTestServer, type OllamaTestServer } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { OCR_LANG_PATH } from '../src/ocr-pool.js';
import { makePhoto } from './make-photo.js';
import { pngHeaderClaiming } from './bad-images.js';
import { renderText } from './render-text.js';
import { startVisionServiceUnderTest, type VisionServiceUnderTest } from './vision-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const MODEL = 'llava:7b';
const SCENE_ANSWER = 'Two people stand beside a red kiosk under a clear sky; one points at the screen.';

// Each test runs OCR through the whole stack; a busy 2-core machine makes that seconds.
describe('vision through the real gateway', { timeout: 120_000 }, () => {
  let gw: GatewayUnderTest;
  let svc: VisionServiceUnderTest;
  let ollama: OllamaTestServer;
  let key: string;
  let otherTenant: string;
  /** Every answer body, checked at the end for leaked paths, hashes and hosts. */
  const bodies: string[] = [];
  let errorDialog: Buffer;
  let photo: Buffer;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('vision_http');
    ollama = await startOllamaTestServer();
    ollama.reply(SCENE_ANSWER);
    svc = await startVisionServiceUnderTest('vision_http', gw, { OLLAMA_HOST: ollama.url, VISION_MODEL: MODEL, VISION_TIMEOUT_MS: '10000' });
    key = await gw.createKey('acme');
    otherTenant = await gw.createKey('globex');
    errorDialog = await renderText({ text: 'Error 507: disk full on /var/lib/data', size: 26 });
    photo = await makePhoto();
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    await ollama?.close();
    await gw?.stop();
  });

  const call = async (path: string, init: { key?: string; json?: unknown; method?: string } = {}) => {
    const res = await gw.fetch(path, { key: init.key ?? key, ...(init.json !== undefined ? { json: init.json } : {}), ...(init.method ? { method: init.method } : {}) });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, body: JSON.parse(text) as Json };
  };
  const register = async (chatKey: string, bytes: Buffer, extra: Record<string, string> = {}, asKey = key) => {
    const r = await call('/v1/media', { key: asKey, json: { surface: 'telegram', chatKey, imageBase64: bytes.toString('base64'), ...extra } });
    expect(r.status).toBe(200);
    return r.body.alias as string;
  };
  const analyze = (body: Record<string, unknown>, asKey = key) => call('/v1/vision/analyze', { key: asKey, json: { surface: 'telegram', ...body } });
  /** vision.evidence is a job: 202, then the job's state and result. */
  const evidence = async (body: Record<string, unknown>, asKey = key) => {
    const accepted = await call('/v1/vision/evidence', { key: asKey, json: body });
    if (accepted.status !== 202) return accepted;
    return call(`${accepted.body.statusUrl}?wait=30`, { key: asKey });
  };
  const stage = (packet: Json, kind: string) => packet.stages.find((s: Json) => s.kind === kind);

  it('repairs a missing image from the replied-to message, and OCR reads its text', async () => {
    await register('chat-reply', errorDialog, { messageId: '10', caption: 'what does this mean?' });
    await register('chat-reply', photo, { messageId: '11' });
    const r = await analyze({ chatKey: 'chat-reply', prompt: 'What does the error say?', replyToMessageId: '10' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('evidence');
    const packet = r.body.packet;
    expect(packet.media).toEqual({
      kind: 'image', resolvedBy: 'reply_to', alias: 'img-1', surface: 'telegram', chatKey: 'chat-reply', sourceMessageId: '10',
      mimeType: 'image/png', width: expect.any(Number), height: expect.any(Number), byteSize: errorDialog.length, caption: 'what does this mean?', otherRecentAliases: [],
    });
    expect(stage(packet, 'ocr')).toMatchObject({ status: 'ran', output: { text: 'Error 507: disk full on /var/lib/data' } });
    expect(packet.summary).toContain('"Error 507: disk full on /var/lib/data"');
  });

  it('repairs a missing image from the chat\'s latest image', async () => {
    await register('chat-latest', errorDialog, { messageId: '20' });
    const r = await analyze({ chatKey: 'chat-latest', prompt: 'Read the text in this screenshot' });
    expect(r.status).toBe(200);
    expect(r.body.packet.media).toMatchObject({ resolvedBy: 'latest', alias: 'img-1', sourceMessageId: '20' });
    expect(stage(r.body.packet, 'ocr').output.text).toBe('Error 507: disk full on /var/lib/data');
  });

  it('asks which image when several arrived together and nothing says which, then analyses the one named', async () => {
    await register('chat-album', photo, { messageId: '30', caption: 'kiosk' });
    await register('chat-album', errorDialog, { messageId: '31' });
    const calls = ollama.calls.length;
    const r = await analyze({ chatKey: 'chat-album', prompt: 'What is this?' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'choose_image',
      question: '2 images arrived together in this chat: img-2, img-1 ("kiosk"). Which one do you mean? Call again with alias, or with replyToMessageId of the message that carried it.',
      candidates: [
        { alias: 'img-2', messageId: '31', caption: null, registeredAt: expect.any(String), width: expect.any(Number), height: expect.any(Number) },
        { alias: 'img-1', messageId: '30', caption: 'kiosk', registeredAt: expect.any(String), width: 320, height: 240 },
      ],
    });
    expect(ollama.calls.length).toBe(calls);
    const named = await analyze({ chatKey: 'chat-album', prompt: 'What text is in this image?', alias: 'img-2' });
    expect(named.body.packet.media).toMatchObject({ resolvedBy: 'alias', alias: 'img-2', sourceMessageId: '31' });
  });

  it('answers no image with an actionable error for the surface, naming recent aliases where any exist', async () => {
    const none = await analyze({ chatKey: 'chat-empty', prompt: 'What text is in this image?' });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'NOT_FOUND', detail: 'no image in this telegram chat: send a photo in this chat, or reply to the message that carries one' });
    expect(none.body.detail).not.toContain('Missing required parameter');
    const tui = await call('/v1/vision/analyze', { json: { surface: 'tui', chatKey: 'session-1', prompt: 'What is shown?' } });
    expect(tui.body.detail).toBe('no image in this tui chat: attach an image in this session (media.register), or name one by alias');
    const unknown = await analyze({ chatKey: 'chat-album', prompt: 'What is shown?', alias: 'img-9' });
    expect(unknown).toMatchObject({ status: 404, body: { detail: 'no image img-9 in this telegram chat: use one of the recent aliases (img-2, img-1)' } });
  });

  it('keeps vision.evidence strict: an explicit image is required', async () => {
    const missing = await call('/v1/vision/evidence', { json: { prompt: 'What text is in this image?' } });
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toEqual([
      { path: 'alias', message: 'vision.evidence needs an explicit image: pass alias (with surface and chatKey) or imageBase64; vision.analyze finds the image in a chat for you' },
    ]);
    const noScope = await call('/v1/vision/evidence', { json: { prompt: 'read it', alias: 'img-1' } });
    expect(noScope.status).toBe(400);
    expect(noScope.body.fields.map((f: Json) => f.path)).toEqual(['surface', 'chatKey']);
    const gone = await evidence({ prompt: 'read it', alias: 'img-5', surface: 'telegram', chatKey: 'chat-latest' });
    expect(gone.body).toMatchObject({ state: 'failed', attemptsMade: 1, error: { code: 'NOT_FOUND', message: 'no image img-5 in this telegram chat: use one of the recent aliases (img-1)' } });
  });

  it('selects OCR for text extraction and stops once it reads the text, each stage with its reason, timing and tool', async () => {
    const r = await evidence({ prompt: 'What is the exact wording of the error message?', imageBase64: errorDialog.toString('base64') });
    expect(r.body.state).toBe('completed');
    const packet = r.body.result;
    expect(packet.plan.need.modalities).toEqual(['text']);
    expect(packet.plan.stages.map((s: Json) => s.kind)).toEqual(['observation', 'ocr', 'auxiliary_vision']);
    expect(packet.media).toMatchObject({ resolvedBy: 'inline', alias: null, mimeType: 'image/png' });
    expect(stage(packet, 'observation')).toMatchObject({ status: 'ran', tool: expect.stringMatching(/^sharp \d/), output: { format: 'png', textLikelihood: expect.any(Number) } });
    expect(stage(packet, 'observation').output.textLikelihood).toBeGreaterThanOrEqual(0.5);
    const ocr = stage(packet, 'ocr');
    expect(ocr).toMatchObject({ status: 'ran', reason: expect.stringContaining('the request needs exact text'), tool: expect.stringMatching(/^tesseract\.js 7/), output: { text: 'Error 507: disk full on /var/lib/data', rotatedBy: 0 } });
    expect(ocr.durationMs).toBeGreaterThan(0);
    expect(ocr.confidence).toBeGreaterThanOrEqual(60);
    expect(stage(packet, 'auxiliary_vision')).toMatchObject({ status: 'skipped', note: expect.stringMatching(/^need met: text: OCR read 6 word\(s\) at confidence \d+$/) });
    expect(packet.coverage.needMet).toBe(true);
    expect(packet.unresolved).toEqual([]);
    // The stored packet reads back the same, and only for its tenant.
    const stored = await call(`/v1/vision/packets/${packet.packetId}`);
    expect(stored).toMatchObject({ status: 200, body: packet });
    expect((await call(`/v1/vision/packets/${packet.packetId}`, { key: otherTenant })).status).toBe(404);
  });

  it('selects auxiliary vision for scene and object questions that observation cannot answer', async () => {
    await register('chat-photo', photo, { messageId: '40' });
    const before = ollama.requests.length;
    const r = await analyze({ chatKey: 'chat-photo', prompt: 'What is happening in this photo?' });
    const packet = r.body.packet;
    expect(packet.plan.need.modalities).toEqual(['scene']);
    expect(stage(packet, 'observation').output.textLikelihood).toBeLessThan(0.5);
    expect(stage(packet, 'ocr')).toMatchObject({ status: 'skipped', note: expect.stringMatching(/^observation estimates text is unlikely/) });
    expect(stage(packet, 'auxiliary_vision')).toMatchObject({ status: 'ran', tool: `ollama:${MODEL}`, output: { answer: SCENE_ANSWER } });
    expect(packet.summary).toContain(`Auxiliary vision (${MODEL}): ${SCENE_ANSWER}`);
    // The model's vision capability was checked before the image was sent.
    const paths = ollama.requests.slice(before).map((q) => q.path);
    expect(paths).toEqual(['/api/show', '/api/chat']);
    const chat = ollama.calls.at(-1)!;
    expect(chat.images).toHaveLength(1);
    expect(chat.prompt).toContain('Describe what is happening in the image');

    const who = await analyze({ chatKey: 'chat-photo', prompt: 'Who or what is shown here?' });
    expect(who.body.packet.plan.need.modalities).toEqual(['identity']);
    expect(stage(who.body.packet, 'auxiliary_vision')).toMatchObject({ status: 'ran', reason: expect.stringContaining('who or what is shown') });
    expect(ollama.calls.at(-1)!.prompt).toContain('Say what the main subjects are');
  });

  it('selects the native path for a caller whose model accepts images, bounded in size, and demotes to auxiliary vision when the model rejected it', async () => {
    const big = await sharp(await makePhoto(2400, 1600, 11)).jpeg({ quality: 100 }).toBuffer();
    await register('chat-native', big, { messageId: '50' });
    const calls = ollama.calls.length;
    const native = await analyze({ chatKey: 'chat-native', prompt: 'Describe this picture', callerModel: { name: 'gpt-4o', acceptsImages: true } });
    const packet = native.body.packet;
    expect(packet.plan.route).toBe('native');
    const copy = stage(packet, 'observation').output.nativeImage;
    expect(copy).toMatchObject({ mimeType: 'image/jpeg', width: 1568, height: 1045 });
    expect(copy.byteSize).toBeLessThanOrEqual(NATIVE_IMAGE_LIMITS.maxBytes);
    expect(Buffer.from(copy.base64, 'base64').length).toBe(copy.byteSize);
    expect(stage(packet, 'auxiliary_vision')).toMatchObject({ status: 'skipped', note: 'need met: scene: the caller\'s model sees the image itself (native path)' });
    expect(ollama.calls.length).toBe(calls);

    const demoted = await analyze({ chatKey: 'chat-native', prompt: 'Describe this picture', callerModel: { name: 'gpt-4o', acceptsImages: true, rejectedNativeImage: true } });
    const p2 = demoted.body.packet;
    expect(p2.plan.route).toBe('auxiliary');
    expect(p2.cached).toBe(false);
    expect(stage(p2, 'observation').output.nativeImage).toBeUndefined();
    expect(stage(p2, 'auxiliary_vision')).toMatchObject({ status: 'ran', output: { answer: SCENE_ANSWER } });
    expect(ollama.calls.length).toBe(calls + 1);
  });

  it('answers the same image and need from the tenant\'s cache and says so, but never from another tenant\'s', async () => {
    const registry = svc.service.metrics.registry;
    const first = await analyze({ chatKey: 'chat-latest', prompt: 'Read the text in this screenshot' });
    const ocrRuns = await metricValue(registry, 'vouch_vision_stages_total', { kind: 'ocr', status: 'ran' });
    const hits = await metricValue(registry, 'vouch_vision_cache_lookups_total', { result: 'hit' });
    // Same bytes, another chat, the same need in other words.
    await register('chat-copy', errorDialog, { messageId: '60' });
    const again = await analyze({ chatKey: 'chat-copy', prompt: 'What text is written here?' });
    const packet = again.body.packet;
    expect(packet.cached).toBe(true);
    expect(packet.cachedFromPacketId).toBe(first.body.packet.cachedFromPacketId ?? first.body.packet.packetId);
    expect(packet.packetId).not.toBe(first.body.packet.packetId);
    expect(packet.media).toMatchObject({ chatKey: 'chat-copy', alias: 'img-1', sourceMessageId: '60' });
    expect(packet.coverage.notes[0]).toMatch(/^answered from the cache: packet vp_[0-9a-f]{24} gathered this evidence for the same image and need in this tenant; no stage ran again$/);
    expect(stage(packet, 'ocr').output.text).toBe('Error 507: disk full on /var/lib/data');
    expect(await metricValue(registry, 'vouch_vision_stages_total', { kind: 'ocr', status: 'ran' })).toBe(ocrRuns);
    expect(await metricValue(registry, 'vouch_vision_cache_lookups_total', { result: 'hit' })).toBe(hits + 1);

    await register('chat-other', errorDialog, { messageId: '1' }, otherTenant);
    const theirs = await analyze({ chatKey: 'chat-other', prompt: 'Read the text in this screenshot' }, otherTenant);
    expect(theirs.body.packet.cached).toBe(false);
    expect(theirs.body.packet.cachedFromPacketId).toBeNull();
  });

  it('records a failed auxiliary model as an unresolved gap, never an invented answer, and does not cache it', async () => {
    await register('chat-aux-fail', await makePhoto(300, 200, 21), { messageId: '70' });
    ollama.replyOnce({ error: { status: 500, message: 'an error was encountered while running the model' } });
    const r = await analyze({ chatKey: 'chat-aux-fail', prompt: 'What is happening here?' });
    const packet = r.body.packet;
    expect(stage(packet, 'auxiliary_vision')).toMatchObject({ status: 'unresolved', output: null, note: `the auxiliary model ${MODEL} failed (Ollama answered 500)` });
    expect(packet.coverage.needMet).toBe(false);
    expect(packet.unresolved).toEqual([
      { need: 'auxiliary_vision', reason: `the auxiliary model ${MODEL} failed (Ollama answered 500)`, recovery: expect.any(String) },
      { need: 'scene', reason: 'scene: no stage has looked at what the image shows yet', recovery: expect.stringContaining('do not guess') },
    ]);
    expect(packet.summary).toContain('does not meet the whole need');
    const again = await analyze({ chatKey: 'chat-aux-fail', prompt: 'What is happening here?' });
    expect(again.body.packet.cached).toBe(false);
    expect(stage(again.body.packet, 'auxiliary_vision')).toMatchObject({ status: 'ran', output: { answer: SCENE_ANSWER } });
  });

  it('answers a corrupt image and a decompression bomb with a 4xx, once, never retried', async () => {
    const truncated = errorDialog.subarray(0, Math.floor(errorDialog.length * 0.6));
    const corrupt = await evidence({ prompt: 'read it', imageBase64: truncated.toString('base64') });
    expect(corrupt.body).toMatchObject({ state: 'failed', attemptsMade: 1, error: { code: 'BAD_INPUT', message: 'imageBase64 is a image/png that cannot be decoded (truncated or corrupt): send the original file again' } });
    const bomb = await evidence({ prompt: 'read it', imageBase64: pngHeaderClaiming(60_000, 60_000).toString('base64') });
    expect(bomb.body).toMatchObject({
      state: 'failed',
      attemptsMade: 1,
      error: { code: 'BAD_INPUT', message: 'imageBase64 is 60000×60000, above the 40000000-pixel limit: downscale it below 40000000 pixels and send it again', fields: [{ path: 'imageBase64', message: 'too many pixels' }] },
    });
    const notImage = await evidence({ prompt: 'read it', imageBase64: Buffer.from('%PDF-1.4\n1 0 obj\n').toString('base64') });
    expect(notImage.body).toMatchObject({ state: 'failed', attemptsMade: 1, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  it('gives every packet its stage provenance: kind, reason, status, timing and tool of each stage, and how the image was found', () => {
    const packets = bodies
      .flatMap((b) => {
        const parsed = JSON.parse(b) as Json;
        return [parsed?.packet, parsed?.result?.packetId ? parsed.result : undefined, parsed?.packetId ? parsed : undefined];
      })
      .filter(Boolean);
    expect(packets.length).toBeGreaterThan(10);
    for (const packet of packets) {
      expect(packet.stages.map((s: Json) => s.kind)).toEqual(['observation', 'ocr', 'auxiliary_vision']);
      for (const s of packet.stages) {
        expect(s.reason.length).toBeGreaterThan(5);
        expect(['ran', 'skipped', 'unresolved']).toContain(s.status);
        expect(s.durationMs).toBeGreaterThanOrEqual(0);
        if (s.status === 'ran') expect(s.tool).toMatch(/^(sharp|tesseract\.js|ollama:)/);
        else expect(s.note).toBeTruthy();
      }
      expect(packet.plan.stages.every((s: Json) => s.reason)).toBe(true);
      expect(['reply_to', 'alias', 'latest', 'inline']).toContain(packet.media.resolvedBy);
      expect(packet.media.kind).toBe('image');
    }
  });

  it('never puts a path, hash, storage schema or host in an answer', () => {
    const all = bodies.join('\n');
    expect(all).not.toContain(OCR_LANG_PATH);
    expect(all).not.toMatch(/\/(tmp|work|home|root|usr|var\/lib\/postgres)\//);
    expect(all).not.toContain('node_modules');
    expect(all).not.toMatch(/\b[0-9a-f]{64}\b/);
    expect(all).not.toContain(gw.schema);
    expect(all).not.toContain(svc.schema);
    expect(all).not.toContain(`:${ollama.port}`);
    expect(all).not.toContain('sha256');
  });
});
