import { closedPort } from '@vouch/testing';
import { describe, expect, it } from 'vitest';
import { classifyOllamaFailure, describeOllamaFailure, type OllamaFailure, type OllamaStage } from '../src/classify-ollama-failure.js';

/** What ollama-js 0.6.4 throws for a non-2xx answer (its class is not exported). */
function responseError(status: number, error: string): Error {
  return Object.assign(new Error(error), { name: 'ResponseError', status_code: status, error });
}

/** What undici's fetch throws when the connection fails: a TypeError with the socket or DNS error as its cause. */
function fetchFailed(code: string, message: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });
}

const STAGE: OllamaStage = { role: 'critic model', model: 'qwen2.5:7b-instruct', timeoutMs: 2_500, timeoutVariable: 'LEDGER_CRITIC_TIMEOUT_MS', modelVariable: 'LEDGER_CRITIC_MODEL' };

describe('classifyOllamaFailure', () => {
  it('a refused connection, as fetch really throws it, is unreachable', async () => {
    const port = await closedPort();
    const err = await fetch(`http://127.0.0.1:${port}/api/chat`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyOllamaFailure(err, { timedOut: false })).toEqual({ kind: 'unreachable' });
  });

  it.each<[string, unknown, OllamaFailure]>([
    ['an unknown host', fetchFailed('ENOTFOUND', 'getaddrinfo ENOTFOUND gpu-box'), { kind: 'unreachable' }],
    ['a reset connection', fetchFailed('ECONNRESET', 'read ECONNRESET'), { kind: 'unreachable' }],
    ['a socket closed mid-answer', fetchFailed('UND_ERR_SOCKET', 'other side closed'), { kind: 'unreachable' }],
    ["undici's header timeout", fetchFailed('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error'), { kind: 'timeout' }],
    ['an AbortSignal.timeout reason', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), { kind: 'timeout' }],
    ["Ollama's 500", responseError(500, 'an error was encountered while running the model'), { kind: 'http_error', status: 500 }],
    ["Ollama's 503 when its queue is full", responseError(503, 'server busy, please try again.  maximum pending requests exceeded'), { kind: 'http_error', status: 503 }],
    ["Ollama's 404 for a model it does not have", responseError(404, "model 'qwen2.5:7b-instruct' not found"), { kind: 'model_missing' }],
    ["the scheduler's 404 for a model that went away", responseError(404, 'model "qwen2.5:7b-instruct" not found, try pulling it first'), { kind: 'model_missing' }],
    ["gin's 404 for a path Ollama does not serve", responseError(404, '404 page not found'), { kind: 'http_error', status: 404 }],
    ['a 2xx body that is not JSON', new SyntaxError('Unexpected end of JSON input'), { kind: 'malformed' }],
  ])('%s', (_, err, expected) => {
    expect(classifyOllamaFailure(err, { timedOut: false })).toEqual(expected);
  });

  it("is a timeout whenever the caller's deadline fired, whatever undici threw", () => {
    expect(classifyOllamaFailure(new DOMException('This operation was aborted', 'AbortError'), { timedOut: true })).toEqual({ kind: 'timeout' });
    expect(classifyOllamaFailure(responseError(500, 'late'), { timedOut: true })).toEqual({ kind: 'timeout' });
  });
});

describe('describeOllamaFailure', () => {
  it('words each kind from the stage alone: what happened and what to change', () => {
    const words = (f: OllamaFailure) => describeOllamaFailure(f, STAGE);
    expect(words({ kind: 'unreachable' })).toBe('the critic model could not be reached (check that Ollama runs at OLLAMA_HOST)');
    expect(words({ kind: 'timeout' })).toBe('the critic model did not answer within 2500 ms (LEDGER_CRITIC_TIMEOUT_MS)');
    expect(words({ kind: 'http_error', status: 503 })).toBe('the critic model answered with an error (HTTP 503)');
    expect(words({ kind: 'http_error', status: undefined })).toBe('the critic model answered with an error (HTTP status unknown)');
    expect(words({ kind: 'model_missing' })).toBe('the critic model qwen2.5:7b-instruct is not installed on the Ollama server (pull it there, or name an installed model in LEDGER_CRITIC_MODEL)');
    expect(words({ kind: 'malformed' })).toBe("the critic model's answer could not be read (it is not Ollama's JSON)");
  });
});
