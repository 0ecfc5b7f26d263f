import { canonicalModelName, type OllamaTestModel } from './ollama-test-models.js';
import { startOllamaTestServer, type OllamaTestServer, type OllamaTestServerOptions } from './ollama-test-server.js';
import { startTcpProxy, type TcpProxy } from './tcp-faults.js';

/**
 * Every way a model stage's call to Ollama fails that a service must answer
 * in public words (issue 16):
 *
 * - `refused`: nothing listens at OLLAMA_HOST any more (ECONNREFUSED).
 * - `timeout`: the server takes longer than the stage's timeout to answer.
 * - `http_500`: the runner fails; a 500 with Ollama's `{"error"}` body.
 * - `malformed_content`: the chat answer's content is not JSON.
 * - `malformed_body`: the HTTP body itself is JSON cut short.
 * - `model_missing`: the model is not pulled; Ollama's 404 `model '<name>' not found`.
 */
export const OLLAMA_FAILURE_MODES = ['refused', 'timeout', 'http_500', 'malformed_content', 'malformed_body', 'model_missing'] as const;
export type OllamaFailureMode = (typeof OLLAMA_FAILURE_MODES)[number];

/** The runner's error text in `http_500`: no answer may repeat it. */
export const OLLAMA_RUNNER_ERROR = 'an error was encountered while running the model: llama runner process has terminated: exit status 2';
/** The chat content in `malformed_content`. */
export const MALFORMED_CONTENT = 'Sure! Here is the verdict you asked for:';
/** The body in `malformed_body`: Ollama's answer object cut off mid-field. */
export const MALFORMED_BODY = '{"model":"cut-short","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","conte';

/** The Ollama test server behind a proxy a test can close, with each failure mode one call away. */
export interface OllamaFailureRig {
  /** What the service under test gets as OLLAMA_HOST: the proxy, so `refused` can close it after start-up. */
  readonly url: string;
  readonly ollama: OllamaTestServer;
  /**
   * Makes the stage's calls fail this way until the returned function undoes
   * it. `model` is the model the service asks for (removed for
   * `model_missing`); `delayMs` how long `timeout` holds each answer, longer
   * than the service's timeout.
   */
  fail(mode: OllamaFailureMode, opts: { model: string; delayMs?: number }): Promise<() => Promise<void>>;
  /**
   * The internals an answer's text holds: the test server's and the proxy's
   * addresses and ports, driver and fetch words (ECONNREFUSED, fetch failed,
   * undici, SyntaxError), stack lines, and the server's own error texts.
   * Empty for a clean answer. Pass JSON.stringify of the whole answer.
   */
  internalsIn(text: string): string[];
  close(): Promise<void>;
}

const DRIVER_WORDS = [
  '127.0.0.1',
  'localhost',
  'http://',
  'ECONNREFUSED',
  'ECONNRESET',
  'fetch failed',
  'undici',
  'UND_ERR',
  'ResponseError',
  'SyntaxError',
  'AbortError',
  'TimeoutError',
  'operation was aborted',
  'in JSON at position',
  'Unexpected end of JSON input',
  OLLAMA_RUNNER_ERROR,
  MALFORMED_BODY,
  'created_at',
];
/** A stack frame: a line starting with `at ` (a newline is `\n` inside JSON text), or a file position. */
const STACK_LINE = /(?:\\n|\n)\s*at \S/;
const FILE_POSITION = /\.(?:[cm]?js|ts):\d+:\d+/;
/** Ollama's 404 texts for a model it does not have. */
const OLLAMA_NOT_FOUND = /model \\?['"][^'"]*\\?['"] not found/;

export async function startOllamaFailureRig(opts: OllamaTestServerOptions = {}): Promise<OllamaFailureRig> {
  const ollama = await startOllamaTestServer(opts);
  const proxy: TcpProxy = await startTcpProxy({ host: ollama.host, port: ollama.port });
  const url = `http://127.0.0.1:${proxy.port}`;
  const ports = [ollama.port, proxy.port];

  const withFallback = (reply: Parameters<OllamaTestServer['reply']>[0]) => {
    const before = ollama.script.fallback;
    ollama.reply(reply);
    return async () => ollama.reply(before);
  };

  return {
    url,
    ollama,
    async fail(mode, { model, delayMs = 10_000 }) {
      switch (mode) {
        case 'refused':
          await proxy.cut();
          return () => proxy.restore();
        case 'timeout': {
          // The answer it would give is fine: only its lateness fails the call.
          const before = ollama.script.fallback;
          return withFallback(async (call) => {
            const fallback = typeof before === 'function' ? await before(call) : before;
            return { ...(typeof fallback === 'string' ? { content: fallback } : fallback), delayMs };
          });
        }
        case 'http_500':
          return withFallback({ error: { status: 500, message: OLLAMA_RUNNER_ERROR } });
        case 'malformed_content':
          return withFallback({ content: MALFORMED_CONTENT, allowInvalidJson: true });
        case 'malformed_body':
          return withFallback({ malformedBody: MALFORMED_BODY });
        case 'model_missing': {
          const wanted = canonicalModelName(model);
          const removed: OllamaTestModel[] = [];
          for (let i = ollama.models.length - 1; i >= 0; i--) {
            if (canonicalModelName(ollama.models[i]!.name) === wanted) removed.push(...ollama.models.splice(i, 1));
          }
          if (removed.length === 0) throw new Error(`the Ollama test server has no model ${model} to remove`);
          return async () => {
            ollama.models.push(...removed);
          };
        }
      }
    },
    internalsIn(text) {
      const found = DRIVER_WORDS.filter((w) => text.includes(w));
      for (const port of ports) if (new RegExp(`(?<!\\d)${port}(?!\\d)`).test(text)) found.push(`port ${port}`);
      const notFound = OLLAMA_NOT_FOUND.exec(text);
      if (notFound) found.push(notFound[0]);
      const stack = STACK_LINE.exec(text) ?? FILE_POSITION.exec(text);
      if (stack) found.push(`stack: ${stack[0]}`);
      return found;
    },
    async close() {
      await proxy.close();
      await ollama.close();
    },
  };
}
