import { startOllamaTestServer, type OllamaTestServer } from '@vouch/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ollamaCall } from '../src/ollama-call.js';

const MODEL = 'llama3.2:3b';
const ask = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

/** What a promise rejected with (it must reject). */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => expect.fail('the call answered'),
    (err: unknown) => err,
  );
}

/** The real `ollama` client through ollamaCall, against the protocol-faithful Ollama test server. */
describe('ollamaCall', () => {
  let ollama: OllamaTestServer;
  beforeAll(async () => {
    ollama = await startOllamaTestServer();
  });
  beforeEach(() => ollama.reset());
  afterAll(async () => ollama?.close());

  it('answers within its deadline', async () => {
    ollama.reply('hello');
    const call = ollamaCall(ollama.url, 5_000);
    expect((await call.client.chat({ ...ask, stream: false })).message.content).toBe('hello');
    expect(call.deadline.aborted).toBe(false);
  });

  it('ends a request the server holds past the deadline, and reads it as a timeout', async () => {
    ollama.reply({ content: 'too late', delayMs: 10_000 });
    const started = performance.now();
    const call = ollamaCall(ollama.url, 300);
    const err = await rejection(call.client.chat({ ...ask, stream: false }));
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(call.deadline.aborted).toBe(true);
    expect(call.failure(err)).toEqual({ kind: 'timeout' });
  });

  it('ends a body that stalls after the headers came', async () => {
    ollama.reply({ chunks: ['one ', 'two ', 'three'], chunkDelayMs: 2_000 });
    const call = ollamaCall(ollama.url, 500);
    const stream = await call.client.chat({ ...ask, stream: true });
    const parts: string[] = [];
    const err = await rejection(
      (async () => {
        for await (const part of stream) parts.push(part.message.content);
      })(),
    );
    expect(parts).toEqual(['one ']);
    expect(call.failure(err)).toEqual({ kind: 'timeout' });
  });

  it('holds one deadline over every request of the call', async () => {
    const call = ollamaCall(ollama.url, 300);
    expect((await call.client.show({ model: MODEL })).capabilities).toContain('completion');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const err = await rejection(call.client.ps());
    expect(call.failure(err)).toEqual({ kind: 'timeout' });
    // The request was never sent: the deadline had passed.
    expect(ollama.requests.map((r) => r.path)).toEqual(['/api/show']);
  });

  it("keeps the client's own signal: a streamed request's abort() still ends it, and is no timeout", async () => {
    ollama.reply({ chunks: ['one ', 'two ', 'three'], chunkDelayMs: 2_000 });
    const call = ollamaCall(ollama.url, 10_000);
    const stream = await call.client.chat({ ...ask, stream: true });
    const parts: string[] = [];
    const started = performance.now();
    const err = await rejection(
      (async () => {
        for await (const part of stream) {
          parts.push(part.message.content);
          stream.abort();
        }
      })(),
    );
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(parts).toEqual(['one ']);
    expect((err as Error).name).toBe('AbortError');
    expect(call.deadline.aborted).toBe(false);
    expect(call.failure(err).kind).not.toBe('timeout');
  });

  it('reads a failure before the deadline as what it is', async () => {
    const call = ollamaCall(ollama.url, 5_000);
    const err = await rejection(call.client.chat({ ...ask, model: 'not-pulled:1b', stream: false }));
    expect(call.failure(err)).toEqual({ kind: 'model_missing' });
  });
});
