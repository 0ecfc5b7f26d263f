import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MALFORMED_CONTENT, OLLAMA_FAILURE_MODES, OLLAMA_RUNNER_ERROR, startOllamaFailureRig, type OllamaFailureMode, type OllamaFailureRig } from '../src/index.js';

const MODEL = 'llama3.2:3b';

describe('the Ollama failure rig', () => {
  let rig: OllamaFailureRig;
  const client = () => new Ollama({ host: rig.url, fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(500) }) });
  const chat = () => client().chat({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], format: 'json', stream: false });

  beforeAll(async () => {
    rig = await startOllamaFailureRig({ reply: { json: { ok: true } } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  /** What the real client gives back under each mode: its error's name and text, or the content. */
  const SEEN: Record<OllamaFailureMode, (r: { name?: string; message?: string; status?: number; content?: string }) => void> = {
    refused: (r) => expect(r).toMatchObject({ name: 'TypeError', message: 'fetch failed' }),
    timeout: (r) => expect(r.name).toBe('TimeoutError'),
    http_500: (r) => expect(r).toMatchObject({ name: 'ResponseError', status: 500, message: OLLAMA_RUNNER_ERROR }),
    malformed_content: (r) => expect(r).toEqual({ content: MALFORMED_CONTENT }),
    malformed_body: (r) => expect(r.name).toBe('SyntaxError'),
    model_missing: (r) => expect(r).toMatchObject({ name: 'ResponseError', status: 404, message: `model '${MODEL}' not found` }),
  };

  it.each(OLLAMA_FAILURE_MODES)('%s fails the real client that way until undone', async (mode) => {
    const undo = await rig.fail(mode, { model: MODEL, delayMs: 2_000 });
    const seen = await chat().then(
      (r) => ({ content: r.message.content }),
      (e: Error & { status_code?: number }) => ({ name: e.name, message: e.message, status: e.status_code }),
    );
    await undo();
    SEEN[mode](seen);
    expect((await chat()).message.content).toBe('{"ok":true}');
  });

  it('finds the internals the old answers held, and none in public words', () => {
    const proxyPort = new URL(rig.url).port;
    const leaks = [
      `could not get an answer from Ollama at ${rig.url} (fetch failed): the rule result stands`,
      `its answer was not used: could not reach Ollama at http://localhost:11434: fetch failed: connect ECONNREFUSED 127.0.0.1:${proxyPort}`,
      `Ollama at gpu-box answered 500: ${OLLAMA_RUNNER_ERROR}`,
      `Ollama at gpu-box answered 404: model '${MODEL}' not found`,
      'the call failed: SyntaxError: Unexpected end of JSON input',
      JSON.stringify({ note: 'TypeError: x\n    at chat (/app/node_modules/ollama/dist/index.mjs:10:5)' }),
      `the model server on port ${rig.ollama.port} failed (undici)`,
    ];
    for (const text of leaks) expect(rig.internalsIn(text), text).not.toEqual([]);
    expect(rig.internalsIn(JSON.stringify({ note: 'its answer was not used: the critic model could not be reached (check that Ollama runs at OLLAMA_HOST)' }))).toEqual([]);
  });
});
