import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOllamaFailureRig, startOllamaTestServer, type OllamaFailureMode, type OllamaFailureRig, type OllamaTestServer } from '@vouch/testing';
import { createAuxiliaryVision, type AuxiliaryOutcome } from '../src/auxiliary-vision.js';

const IMAGE = Buffer.from('ffd8ffe000104a464946', 'hex');

/** Auxiliary vision through the real `ollama` client against the protocol-faithful Ollama test server. */
describe('auxiliary vision over Ollama', () => {
  let ollama: OllamaTestServer;
  const outcomes: AuxiliaryOutcome[] = [];
  beforeAll(async () => {
    ollama = await startOllamaTestServer();
  });
  beforeEach(() => {
    ollama.reset();
    outcomes.length = 0;
  });
  afterAll(async () => ollama?.close());

  const vision = (model: string, timeoutMs = 5_000) => createAuxiliaryVision({ host: ollama.url, model, timeoutMs, onOutcome: (o) => outcomes.push(o) });

  it('checks the vision capability, then sends the image with a prompt built from the need and the OCR text', async () => {
    ollama.reply('A settings screen with a toggle switched off.');
    const result = await vision('llava:7b').describe(IMAGE, ['scene', 'text'], 'Airplane mode  Off');
    expect(result).toEqual({ ok: true, tool: 'ollama:llava:7b', model: 'llava:7b', confidence: null, output: { answer: 'A settings screen with a toggle switched off.' }, note: expect.any(String) });
    expect(ollama.requests.map((r) => r.path)).toEqual(['/api/show', '/api/chat']);
    const call = ollama.calls[0]!;
    expect(call.images).toEqual([IMAGE.toString('base64')]);
    expect(call.prompt).toContain('Describe what is happening in the image');
    expect(call.prompt).toContain('Read any text in the image exactly as written');
    expect(call.prompt).toContain('"""\nAirplane mode  Off\n"""');
    expect(call.options).toEqual({ temperature: 0 });
    expect(outcomes).toEqual(['ok']);
  });

  it('refuses a model without the vision capability before sending it an image', async () => {
    const result = await vision('llama3.2:3b').describe(IMAGE, ['identity'], undefined);
    expect(result).toMatchObject({ ok: false, reason: 'the auxiliary model llama3.2:3b has no vision capability (Ollama /api/show): configure a vision model in VISION_MODEL' });
    expect(ollama.calls).toHaveLength(0);
    expect(outcomes).toEqual(['no_vision']);
  });

  it('reports a model that is not pulled, a timeout and an unreachable server as unresolved, naming no host', async () => {
    expect(await vision('moondream').describe(IMAGE, ['scene'], undefined)).toMatchObject({ ok: false, reason: 'the auxiliary model moondream is not available on the Ollama server (not pulled)' });
    ollama.replyOnce({ content: 'too late', delayMs: 3_000 });
    const slow = await vision('llava:7b', 300).describe(IMAGE, ['scene'], undefined);
    expect(slow).toMatchObject({ ok: false, reason: 'the auxiliary model llava:7b did not answer within 300 ms (VISION_TIMEOUT_MS)' });
    const down = await createAuxiliaryVision({ host: 'http://127.0.0.1:9', model: 'llava:7b', timeoutMs: 2_000 }).describe(IMAGE, ['scene'], undefined);
    expect(down).toMatchObject({ ok: false, reason: 'the auxiliary vision server could not be reached' });
    expect(JSON.stringify([slow, down])).not.toContain('127.0.0.1');
    expect(outcomes).toEqual(['not_found', 'timeout']);
  });

  it('says it did not run when no Ollama is configured', async () => {
    const off = createAuxiliaryVision({ host: undefined, model: 'moondream', timeoutMs: 1_000 });
    expect(off.configured).toBe(false);
    expect(await off.describe(IMAGE, ['scene'], undefined)).toMatchObject({ ok: false, tool: null, reason: 'no auxiliary vision model is configured on this service (OLLAMA_HOST is unset)' });
  });
});

/** Every way the call fails that the stage must answer in public words (the shared classification, classifyOllamaFailure). */
describe('auxiliary vision when Ollama fails', () => {
  let rig: OllamaFailureRig;
  beforeAll(async () => {
    rig = await startOllamaFailureRig({ reply: 'A settings screen.' });
  });
  afterAll(async () => rig?.close());

  it.each<[OllamaFailureMode, AuxiliaryOutcome, string]>([
    ['refused', 'error', 'the auxiliary vision server could not be reached'],
    ['timeout', 'timeout', 'the auxiliary model llava:7b did not answer within 500 ms (VISION_TIMEOUT_MS)'],
    ['http_500', 'error', 'the auxiliary model llava:7b failed (Ollama answered 500)'],
    ['malformed_body', 'error', "the auxiliary model llava:7b's answer could not be read (it is not Ollama's JSON)"],
    ['model_missing', 'not_found', 'the auxiliary model llava:7b is not available on the Ollama server (not pulled)'],
  ])('%s: an unresolved stage (%s) that names no host and no driver text', async (mode, outcome, reason) => {
    const outcomes: AuxiliaryOutcome[] = [];
    const undo = await rig.fail(mode, { model: 'llava:7b', delayMs: 3_000 });
    try {
      const result = await createAuxiliaryVision({ host: rig.url, model: 'llava:7b', timeoutMs: 500, onOutcome: (o) => outcomes.push(o) }).describe(IMAGE, ['scene'], undefined);
      expect(result).toMatchObject({ ok: false, tool: 'ollama:llava:7b', reason });
      expect(rig.internalsIn(JSON.stringify(result))).toEqual([]);
      expect(outcomes).toEqual([outcome]);
    } finally {
      await undo();
    }
  });
});
