import { Ollama } from 'ollama';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CPU_TOKENS_PER_SECOND, GPU_TOKENS_PER_SECOND, makePng, startOllamaTestServer } from '../src/index.js';
import type { OllamaTestServer } from '../src/index.js';

// RFC 3339 in UTC with fractional seconds, as Go's time.Time marshals.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

async function rejection(promise: Promise<unknown>): Promise<Error & { status_code?: number; error?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { status_code?: number; error?: string };
  }
  throw new Error('expected a rejection');
}

async function drain(iterable: AsyncIterable<unknown>): Promise<unknown[]> {
  const parts: unknown[] = [];
  for await (const part of iterable) parts.push(part);
  return parts;
}

describe('Ollama test server, driven by the real ollama client', () => {
  let server: OllamaTestServer;
  let ollama: Ollama;

  beforeAll(async () => {
    server = await startOllamaTestServer();
    ollama = new Ollama({ host: server.url });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  it('answers / and /api/version like Ollama', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const root = await fetch(server.url);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe('Ollama is running');
    const head = await fetch(server.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await ollama.version()).toEqual({ version: '0.13.0' });
    expect((await fetch(`${server.url}/api/version`, { method: 'HEAD' })).status).toBe(200);
  });

  it('lists models and shows their capabilities', async () => {
    const { models } = await ollama.list();
    expect(models.map((m) => m.name)).toEqual(['llava:7b', 'llama3.2:3b', 'nomic-embed-text:latest']);
    expect(models[0]).toMatchObject({ model: 'llava:7b', size: 5_600_000_000, details: { format: 'gguf', families: ['llama', 'clip'] } });
    expect(models[0]?.digest).toMatch(/^[0-9a-f]{64}$/);

    const show = await ollama.show({ model: 'llava:7b' });
    expect(show.capabilities).toEqual(['completion', 'vision']);
    // ollama-js types model_info as a Map; on the wire it is a JSON object.
    expect((show.model_info as unknown as Record<string, unknown>)['general.architecture']).toBe('llama');
    // An untagged name means :latest.
    expect((await ollama.show({ model: 'nomic-embed-text' })).capabilities).toEqual(['embedding']);
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/show', body: { model: 'nomic-embed-text' } });
  });

  it('chat without streaming returns one object with the whole content and metrics', async () => {
    server.reply('The receipt total is 42.50 EUR.');
    const response = await ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'What is the total?' }] });
    expect(response.message).toEqual({ role: 'assistant', content: 'The receipt total is 42.50 EUR.' });
    expect(response).toMatchObject({ model: 'llava:7b', done: true, done_reason: 'stop', eval_count: 6 });
    expect(String(response.created_at)).toMatch(RFC3339);
    for (const key of ['total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_duration'] as const) {
      expect(Number.isInteger(response[key]) && response[key] > 0).toBe(true);
    }

    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/api/chat', body: { model: 'llava:7b', stream: false } });
    expect(request?.headers['user-agent']).toMatch(/^ollama-js\/0\.6\.4 /);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(server.calls[0]).toMatchObject({ endpoint: 'chat', prompt: 'What is the total?', stream: false, images: [] });
  });

  it('chat streams NDJSON chunks then a done object', async () => {
    server.reply({ chunks: ['Hello', ', ', 'world'], evalCount: 3, doneReason: 'length' });
    const parts = (await drain(
      await ollama.chat({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    )) as Array<{ message: { content: string }; done: boolean; done_reason?: string; eval_count?: number; created_at: string }>;
    expect(parts.map((p) => p.message.content)).toEqual(['Hello', ', ', 'world', '']);
    expect(parts.map((p) => p.done)).toEqual([false, false, false, true]);
    expect(parts.at(-1)).toMatchObject({ done_reason: 'length', eval_count: 3 });
    expect(parts[0]).not.toHaveProperty('done_reason');
    for (const p of parts) expect(p.created_at).toMatch(RFC3339);
  });

  it('streams by default on the wire (no stream field) with application/x-ndjson', async () => {
    server.reply({ chunks: ['a', 'b'] });
    const res = await fetch(`${server.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'llama3.2:3b', prompt: 'x' }) });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text()).split('\n');
    expect(lines.at(-1)).toBe('');
    const objects = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects.map((o) => o.response)).toEqual(['a', 'b', '']);
    expect(objects.at(-1)).toMatchObject({ done: true, done_reason: 'stop', context: expect.any(Array) });

    const single = await fetch(`${server.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'llama3.2:3b', prompt: 'x', stream: false }) });
    expect(single.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await single.json()).toMatchObject({ response: 'ab', done: true });
  });

  it('generate, streamed and not', async () => {
    server.replyOnce('first answer', { chunks: ['second ', 'answer'] });
    const whole = await ollama.generate({ model: 'llama3.2:3b', prompt: 'one', system: 'be brief' });
    expect(whole).toMatchObject({ response: 'first answer', done: true, done_reason: 'stop' });
    const parts = (await drain(await ollama.generate({ model: 'llama3.2:3b', prompt: 'two', stream: true }))) as Array<{ response: string }>;
    expect(parts.map((p) => p.response).join('')).toBe('second answer');
    // The queue is used up: the fallback answers now.
    expect((await ollama.generate({ model: 'llama3.2:3b', prompt: 'three' })).response).toBe('This is a scripted reply from the Ollama test server.');
    expect(server.calls[0]?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'one' },
    ]);
  });

  it('structured output: format as a JSON schema, content arrives as a JSON string', async () => {
    const schema = { type: 'object', properties: { age: { type: 'integer' }, available: { type: 'boolean' } }, required: ['age', 'available'] };
    server.reply((call) => ({ json: call.format === undefined ? null : { age: 22, available: false } }));
    const response = await ollama.chat({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'Ollama is 22 years old' }], format: schema });
    expect(typeof response.message.content).toBe('string');
    expect(JSON.parse(response.message.content)).toEqual({ age: 22, available: false });
    expect(server.calls[0]?.format).toEqual(schema);

    server.reply('not json at all');
    const refused = await rejection(ollama.generate({ model: 'llama3.2:3b', prompt: 'x', format: 'json' }));
    expect(refused.status_code).toBe(500);
    expect(refused.message).toContain('must be JSON');
  });

  it('an unknown model is a ResponseError 404', async () => {
    const error = await rejection(ollama.chat({ model: 'missing', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.name).toBe('ResponseError');
    expect(error.status_code).toBe(404);
    expect(error.error).toBe("model 'missing' not found");
    const show = await rejection(ollama.show({ model: 'missing' }));
    expect([show.status_code, show.error]).toEqual([404, "model 'missing' not found"]);
  });

  it('an error line in the stream makes the client throw', async () => {
    server.reply({ chunks: ['partial '], midStreamError: 'an error was encountered while running the model' });
    const stream = await ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const error = await rejection(drain(stream));
    expect(error.message).toBe('an error was encountered while running the model');

    server.reply({ chunks: ['partial '], midStreamError: 'boom' });
    const whole = await rejection(ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }] }));
    expect([whole.status_code, whole.error]).toEqual([500, 'boom']);
  });

  it('a stream without the done object makes the client throw', async () => {
    server.reply({ chunks: ['cut ', 'off'], omitDone: true });
    const stream = await ollama.generate({ model: 'llama3.2:3b', prompt: 'hi', stream: true });
    const error = await rejection(drain(stream));
    expect(error.message).toBe('Did not receive done or success response in stream.');
  });

  it('a malformed body is a 200 the client cannot parse', async () => {
    server.reply({ malformedBody: '{"model":"llava:7b","message":{"ro' });
    const res = await fetch(`${server.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }], stream: false }) });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([200, 'application/json; charset=utf-8', '{"model":"llava:7b","message":{"ro']);
    const error = await rejection(ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.name).toBe('SyntaxError');
    expect(server.calls).toHaveLength(2);
  });

  it('images passed as Buffers arrive base64-encoded', async () => {
    const png = await makePng({ width: 4, height: 4, color: '#00ff00' });
    server.reply((call) => `saw ${call.images.length} image(s)`);
    const response = await ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'describe', images: [png] }] });
    expect(response.message.content).toBe('saw 1 image(s)');
    const body = server.requests[0]?.body as { messages: Array<{ images: string[] }> };
    expect(body.messages[0]?.images).toEqual([png.toString('base64')]);
    expect(Buffer.from(server.calls[0]?.images[0] ?? '', 'base64').equals(png)).toBe(true);

    await ollama.generate({ model: 'llava:7b', prompt: 'describe', images: [png] });
    expect(server.calls[1]?.images).toEqual([png.toString('base64')]);
  });

  it('refuses images, capabilities and formats the model cannot serve', async () => {
    const png = await makePng({ width: 2, height: 2 });
    const noVision = await rejection(ollama.chat({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'x', images: [png] }] }));
    expect([noVision.status_code, noVision.error]).toEqual([500, 'this model is missing data required for image input']);

    const noChat = await rejection(ollama.chat({ model: 'nomic-embed-text', messages: [{ role: 'user', content: 'x' }] }));
    expect([noChat.status_code, noChat.error]).toEqual([400, '"nomic-embed-text" does not support chat']);
    const noGenerate = await rejection(ollama.generate({ model: 'nomic-embed-text', prompt: 'x' }));
    expect(noGenerate.error).toBe('"nomic-embed-text" does not support generate');
    const noThinking = await rejection(ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'x' }], think: true }));
    expect(noThinking.error).toBe('"llava:7b" does not support thinking');
    const tool = { type: 'function', function: { name: 'f', description: 'f', parameters: { type: 'object', properties: {} } } };
    const noTools = await rejection(ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'x' }], tools: [tool] }));
    expect([noTools.status_code, noTools.error]).toEqual([400, 'registry.ollama.ai/library/llava:7b does not support tools']);

    const badFormat = await rejection(ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'x' }], format: 'yaml' }));
    expect([badFormat.status_code, badFormat.error]).toEqual([500, 'invalid format: "\\"yaml\\""; expected "json" or a valid JSON Schema object']);
    // None of these reached the model.
    expect(server.calls).toEqual([]);
  });

  it('answers malformed requests with the Go decoder messages', async () => {
    const post = async (path: string, body?: string): Promise<[number, unknown]> => {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', ...(body === undefined ? {} : { body }) });
      return [res.status, await res.json()];
    };
    expect(await post('/api/chat')).toEqual([400, { error: 'missing request body' }]);
    expect(await post('/api/show', '  ')).toEqual([400, { error: 'missing request body' }]);
    expect(await post('/api/chat', 'x')).toEqual([400, { error: "invalid character 'x' looking for beginning of value" }]);
    expect(await post('/api/chat', '{"model": "llava:7b",')).toEqual([400, { error: 'unexpected EOF' }]);
    expect(await post('/api/chat', '{"model" "llava:7b"}')).toEqual([400, { error: `invalid character '"' after object key` }]);
    expect(await post('/api/chat', '{"model": 7}')).toEqual([400, { error: 'json: cannot unmarshal number into Go struct field ChatRequest.model of type string' }]);
    expect(await post('/api/chat', '[]')).toEqual([400, { error: 'json: cannot unmarshal array into Go value of type api.ChatRequest' }]);
    expect(await post('/api/chat', '{"model": "llava:7b"}')).toMatchObject([200, { done_reason: 'load' }]);
    expect(await post('/api/chat', '{"messages": []}')).toEqual([400, { error: 'model is required' }]);
    expect(await post('/api/generate', '{"prompt": "x"}')).toEqual([404, { error: "model '' not found" }]);
    expect(await post('/api/show', '{}')).toEqual([400, { error: 'model is required' }]);
    expect(await post('/api/chat', '{"model": "llava:7b", "keep_alive": "soon"}')).toEqual([400, { error: 'time: invalid duration "soon"' }]);
    // A data URL is not base64: Go's decoder stops at the ':'.
    const dataUrl = JSON.stringify({ model: 'llava:7b', messages: [{ role: 'user', content: 'x', images: ['data:image/png;base64,iVBORw0KGgo='] }] });
    expect(await post('/api/chat', dataUrl)).toEqual([400, { error: 'illegal base64 data at input byte 4' }]);
    const badPadding = JSON.stringify({ model: 'llava:7b', prompt: 'x', images: ['aGVsbG8'] });
    expect(await post('/api/generate', badPadding)).toEqual([400, { error: 'illegal base64 data at input byte 4' }]);
    expect(await post('/api/chat', '{"model": "llava:7b", "top_logprobs": 21}')).toEqual([400, { error: 'top_logprobs must be between 0 and 20' }]);

    const unknown = await fetch(`${server.url}/api/chat`);
    expect([unknown.status, await unknown.text()]).toEqual([404, '404 page not found']);
  });

  it('loads and unloads models, as /api/ps shows', async () => {
    expect(await ollama.ps()).toEqual({ models: [] });
    const load = await ollama.chat({ model: 'llava:7b', messages: [] });
    expect(load).toMatchObject({ done: true, done_reason: 'load', message: { role: 'assistant', content: '' } });
    const { models } = await ollama.ps();
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({ name: 'llava:7b', size: 5_600_000_000, size_vram: 5_600_000_000, context_length: 4096 });
    const expiresIn = new Date(String(models[0]?.expires_at)).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(4 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(5 * 60_000);

    const unload = await ollama.generate({ model: 'llava:7b', prompt: '', keep_alive: 0 });
    expect(unload).toMatchObject({ done: true, done_reason: 'unload', response: '' });
    expect(await ollama.ps()).toEqual({ models: [] });
    expect(server.calls).toEqual([]);
  });

  it('returns scripted tool calls and thinking', async () => {
    server.reply({ content: '', toolCalls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] });
    const tool = { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: {} } } };
    const response = await ollama.chat({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'weather?' }], tools: [tool] });
    expect(response.message.tool_calls?.[0]?.function).toEqual({ index: 0, name: 'get_weather', arguments: { city: 'Paris' } });
  });
});

describe('Ollama test server options', () => {
  it('serves configured models, with a CPU/GPU split in /api/ps', async () => {
    const server = await startOllamaTestServer({
      models: [{ name: 'qwen2.5vl', capabilities: ['completion', 'vision'], size: 1000, sizeVram: 480, loaded: true }],
      version: '0.12.3',
    });
    try {
      const ollama = new Ollama({ host: server.url });
      expect(await ollama.version()).toEqual({ version: '0.12.3' });
      expect((await ollama.list()).models.map((m) => m.name)).toEqual(['qwen2.5vl:latest']);
      expect((await ollama.ps()).models[0]).toMatchObject({ name: 'qwen2.5vl:latest', size: 1000, size_vram: 480 });
      await expect(ollama.show({ model: 'llava:7b' })).rejects.toMatchObject({ status_code: 404 });
    } finally {
      await server.close();
    }
  });

  it('splits NDJSON lines across TCP writes; the client reassembles them, multi-byte characters included', async () => {
    const server = await startOllamaTestServer({ splitLines: true });
    try {
      const text = 'Grüße aus Köln — 日本語のテキスト 🚀 done';
      server.reply(text);
      const ollama = new Ollama({ host: server.url });
      const parts = (await drain(
        await ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      )) as Array<{ message: { content: string } }>;
      expect(parts.map((p) => p.message.content).join('')).toBe(text);

      // The wire really carries partial lines.
      const res = await fetch(`${server.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }] }) });
      const reads: Uint8Array[] = [];
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) reads.push(chunk);
      expect(reads.some((r) => r.at(-1) !== 0x0a)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('close() ends in-flight replies at once', async () => {
    const server = await startOllamaTestServer({ reply: { delayMs: 60_000 } });
    const ollama = new Ollama({ host: server.url });
    const pending = ollama.chat({ model: 'llava:7b', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
    while (server.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await server.close();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });
});

// Issue 19: the ways a real Ollama leaves the GPU without saying so, for the
// extractor's generation gate to catch (docs/ollama.md, "GPUs, and running on
// the CPU without saying so").
describe('Ollama test server misbehaving as a real one does', () => {
  let server: OllamaTestServer;
  let ollama: Ollama;
  const MODEL = 'extract:7b';
  const rate = (r: { eval_count: number; eval_duration: number }) => (r.eval_count / r.eval_duration) * 1e9;
  const generate = () => ollama.chat({ model: MODEL, messages: [{ role: 'user', content: 'one two three four five six seven eight' }], keep_alive: '30m' });

  beforeAll(async () => {
    server = await startOllamaTestServer({ models: [{ name: MODEL, size: 4_000_000_000, reloadSizeVram: 1_500_000_000 }], reply: 'a b c d e f g h i j' });
    ollama = new Ollama({ host: server.url });
  });
  afterEach(() => {
    server.reset();
    delete server.models[0]!.evalTokensPerSecond;
  });
  afterAll(() => server.close());

  it('generates at GPU speed while the model is wholly in GPU memory', async () => {
    const r = await generate();
    expect(rate(r)).toBe(GPU_TOKENS_PER_SECOND);
    expect((await ollama.ps()).models[0]).toMatchObject({ size: 4_000_000_000, size_vram: 4_000_000_000 });
  });

  it('a reload after the keep-alive ran out lands partly on the CPU, and generates at CPU speed', async () => {
    await ollama.chat({ model: MODEL, messages: [], keep_alive: '30m' });
    expect(server.loads(MODEL)).toBe(1);
    server.expire(MODEL);
    expect(await ollama.ps()).toEqual({ models: [] });
    await ollama.chat({ model: MODEL, messages: [], keep_alive: '30m' });
    expect(server.loads(MODEL)).toBe(2);
    expect((await ollama.ps()).models[0]).toMatchObject({ size: 4_000_000_000, size_vram: 1_500_000_000 });
    expect(rate(await generate())).toBe(CPU_TOKENS_PER_SECOND);
    // A request while the model is still resident is no reload.
    await generate();
    expect(server.loads(MODEL)).toBe(2);
  });

  it('/api/ps reports the model wholly in GPU memory while generation runs at CPU speed', async () => {
    server.models[0]!.evalTokensPerSecond = 4;
    const r = await generate();
    expect(rate(r)).toBeCloseTo(4, 5);
    expect((await ollama.ps()).models[0]).toMatchObject({ size: 4_000_000_000, size_vram: 4_000_000_000 });
  });
});
