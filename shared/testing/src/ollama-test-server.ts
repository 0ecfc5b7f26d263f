import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { goDecode, goQuote, parseGoDuration } from './go-json-decode.js';
import type { GoType } from './go-json-decode.js';
import { goJsonMarshal, goTimestamp } from './go-wire-format.js';
import { DEFAULT_OLLAMA_REPLY, splitIntoChunks } from './ollama-reply.js';
import type {
  OllamaGenerationCall,
  OllamaMetrics,
  OllamaReply,
  OllamaReplyScript,
  OllamaReplySource,
  OllamaRequestMessage,
  RecordedRequest,
} from './ollama-reply.js';
import {
  DEFAULT_OLLAMA_TEST_MODELS,
  canonicalModelName,
  psEntry,
  qualifiedModelName,
  resolveOllamaModel,
  showResponse,
  tagsEntry,
} from './ollama-test-models.js';
import type { OllamaTestModel, ResolvedOllamaModel } from './ollama-test-models.js';

/** Options of startOllamaTestServer. */
export interface OllamaTestServerOptions {
  /** The pulled models; default DEFAULT_OLLAMA_TEST_MODELS. */
  models?: readonly OllamaTestModel[];
  /** The fallback reply; default DEFAULT_OLLAMA_REPLY. */
  reply?: OllamaReplySource;
  /** What `/api/version` reports. Default `0.13.0`. */
  version?: string;
  /**
   * Write every NDJSON line in two TCP writes, split mid-line (and possibly
   * mid-character), so clients must reassemble lines across reads.
   */
  splitLines?: boolean;
}

/** A running Ollama test server. */
export interface OllamaTestServer {
  /** `http://127.0.0.1:<port>`: pass as the ollama client's `host`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** The live reply script; edit it directly or use reply/replyOnce. */
  readonly script: OllamaReplyScript;
  /** The live model list (mutations take effect on the next request). */
  readonly models: OllamaTestModel[];
  /** Sets the fallback reply. */
  reply(source: OllamaReplySource): void;
  /** Queues replies used once each, in order, before the fallback. */
  replyOnce(...sources: OllamaReplySource[]): void;
  /** The chat/generate calls that reached the model, oldest first. */
  readonly calls: OllamaGenerationCall[];
  /**
   * The keep-alive of `model` (every loaded model when omitted) runs out now:
   * Ollama unloads it and /api/ps stops listing it, as if its time had passed.
   * The next request loads it again (see `reloadSizeVram`).
   */
  expire(model?: string): void;
  /** How many times `model` was loaded (a load after an unload or expiry counts again). */
  loads(model: string): number;
  /** Forgets requests, calls, queued replies, loaded models and load counts; restores the starting fallback. */
  reset(): void;
  /** Stops listening and drops open connections (in-flight replies end at once). */
  close(): Promise<void>;
}

const str: GoType = { kind: 'string' };
const bool: GoType = { kind: 'bool' };
const anyValue: GoType = { kind: 'any' };
const options: GoType = { kind: 'map', name: 'map[string]interface {}' };
const images: GoType = { kind: 'slice', name: '[]api.ImageData', elem: { kind: 'bytes', name: 'api.ImageData' } };
const common = { stream: bool, format: anyValue, keep_alive: { kind: 'duration' }, options, think: anyValue, truncate: bool, shift: bool, logprobs: bool, top_logprobs: { kind: 'int' } } as const;
const MESSAGE: GoType = { kind: 'struct', name: 'api.Message', fields: { role: str, content: str, thinking: str, images, tool_calls: anyValue, tool_name: str } };
// The request structs of ollama/api/types.go, as far as decoding errors go.
const CHAT_REQUEST: GoType = {
  kind: 'struct',
  name: 'api.ChatRequest',
  fields: { model: str, messages: { kind: 'slice', name: '[]api.Message', elem: MESSAGE }, tools: anyValue, ...common },
};
const GENERATE_REQUEST: GoType = {
  kind: 'struct',
  name: 'api.GenerateRequest',
  fields: { model: str, prompt: str, suffix: str, system: str, template: str, context: { kind: 'slice', name: '[]int', elem: { kind: 'int' } }, raw: bool, images, ...common },
};
const SHOW_REQUEST: GoType = { kind: 'struct', name: 'api.ShowRequest', fields: { model: str, name: str, system: str, template: str, verbose: bool, options } };

const JSON_TYPE = 'application/json; charset=utf-8';
/** Generation speed of a model wholly in GPU memory, and of one computing on the CPU (eval_count / eval_duration). */
export const GPU_TOKENS_PER_SECOND = 50;
export const CPU_TOKENS_PER_SECOND = 4;
const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;
// Go clamps a negative keep_alive to MaxInt64 ns: about 292 years.
const FOREVER_MS = 292 * 365 * 24 * 3600_000;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly contentType: string = JSON_TYPE,
  ) {
    super(message);
  }
}

/**
 * Starts a loopback HTTP server that speaks Ollama's REST API (see
 * docs/ollama.md): `/`, `/api/version`, `/api/tags`, `/api/show`,
 * `/api/ps`, `/api/chat`, `/api/generate`, with Ollama's status codes and
 * error bodies, NDJSON streaming by default, `stream: false`, `format`, and
 * model load/unload. What the "model" says is scripted (`reply`,
 * `replyOnce`); every request is recorded.
 */
export async function startOllamaTestServer(opts: OllamaTestServerOptions = {}): Promise<OllamaTestServer> {
  const initialFallback = opts.reply ?? DEFAULT_OLLAMA_REPLY;
  const version = opts.version ?? '0.13.0';
  const models: OllamaTestModel[] = [...(opts.models ?? DEFAULT_OLLAMA_TEST_MODELS)];
  const requests: RecordedRequest[] = [];
  const calls: OllamaGenerationCall[] = [];
  const script: OllamaReplyScript = { queue: [], fallback: initialFallback };
  /** canonical name → expiry (ms since epoch) of loaded models. */
  const loaded = new Map<string, number>();
  /** canonical name → loads so far; a model loaded more than once sits where `reloadSizeVram` puts it. */
  const loadCounts = new Map<string, number>();
  const isLoaded = (name: string): boolean => (loaded.get(name) ?? 0) > Date.now();
  const placedVram = (m: ResolvedOllamaModel): number => ((loadCounts.get(m.name) ?? 0) > 1 ? m.reloadSizeVram : m.sizeVram);
  const closing = new AbortController();
  // Every in-flight delay listens for close(); a load test may hold hundreds.
  setMaxListeners(0, closing.signal);

  const initiallyLoaded = (): void => {
    for (const m of models) {
      if (!m.loaded) continue;
      loaded.set(canonicalModelName(m.name), Date.now() + DEFAULT_KEEP_ALIVE_MS);
      loadCounts.set(canonicalModelName(m.name), 1);
    }
  };
  initiallyLoaded();

  const findModel = (name: string): ResolvedOllamaModel | undefined => {
    const wanted = canonicalModelName(name);
    const found = models.find((m) => canonicalModelName(m.name) === wanted);
    return found ? resolveOllamaModel(found) : undefined;
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (ms <= 0 || closing.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        closing.signal.removeEventListener('abort', done);
        resolve();
      }
      closing.signal.addEventListener('abort', done);
    });

  const send = (res: ServerResponse, status: number, body: unknown, contentType = JSON_TYPE): void => {
    const text = typeof body === 'string' ? body : goJsonMarshal(body);
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  const writeLine = async (res: ServerResponse, value: unknown): Promise<void> => {
    const line = Buffer.from(`${goJsonMarshal(value)}\n`);
    if (!opts.splitLines || line.length < 2) {
      res.write(line);
      return;
    }
    const middle = Math.floor(line.length / 2);
    res.write(line.subarray(0, middle));
    // A pause long enough for the first half to leave as its own TCP segment.
    await sleep(5);
    res.write(line.subarray(middle));
  };

  const touch = (m: ResolvedOllamaModel, keepAlive: unknown): void => {
    if (!isLoaded(m.name)) loadCounts.set(m.name, (loadCounts.get(m.name) ?? 0) + 1);
    const ms = keepAliveMs(keepAlive);
    if (ms === 0) loaded.delete(m.name);
    else loaded.set(m.name, Date.now() + ms);
  };

  const decodeBody = (raw: string, type: GoType): Record<string, unknown> => {
    const result = goDecode(raw, type);
    if (!result.ok) throw new HttpFailure(400, result.eof ? 'missing request body' : result.message);
    if (typeof result.value !== 'object' || result.value === null) return {};
    return result.value as Record<string, unknown>;
  };

  const checkTopLogprobs = (body: Record<string, unknown>): void => {
    const top = body.top_logprobs;
    if (typeof top === 'number' && (top < 0 || top > 20)) throw new HttpFailure(400, 'top_logprobs must be between 0 and 20');
  };

  const checkThinking = (m: ResolvedOllamaModel, body: Record<string, unknown>, requested: string): void => {
    const think = body.think;
    if (!m.capabilities.includes('thinking') && (think === true || (typeof think === 'string' && think !== ''))) {
      throw new HttpFailure(400, `${goQuote(requested)} does not support thinking`);
    }
  };

  const pickReply = async (call: OllamaGenerationCall): Promise<OllamaReply> => {
    const source = script.queue.length > 0 ? script.queue.shift() : script.fallback;
    const value = typeof source === 'function' ? await source(call) : source;
    if (value === undefined) return {};
    return typeof value === 'string' ? { content: value } : value;
  };

  async function generate(res: ServerResponse, record: RecordedRequest, endpoint: 'chat' | 'generate'): Promise<void> {
    const started = process.hrtime.bigint();
    const body = decodeBody(record.rawBody, endpoint === 'chat' ? CHAT_REQUEST : GENERATE_REQUEST);
    checkTopLogprobs(body);
    const requested = typeof body.model === 'string' ? body.model : '';
    if (requested.trim() === '') {
      // Chat and generate disagree here in the real server too.
      throw endpoint === 'chat' ? new HttpFailure(400, 'model is required') : new HttpFailure(404, `model '${requested}' not found`);
    }
    const model = findModel(requested);
    if (!model) throw new HttpFailure(404, `model '${requested}' not found`);

    const messages = Array.isArray(body.messages) ? (body.messages as OllamaRequestMessage[]) : [];
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    const empty = endpoint === 'chat' ? messages.length === 0 : prompt === '';
    const createdAt = (): string => goTimestamp();
    const baseFields = (): Record<string, unknown> => ({ model: requested, created_at: createdAt() });
    const emptyContent = (): Record<string, unknown> => (endpoint === 'chat' ? { message: { role: 'assistant', content: '' } } : { response: '' });

    if (empty && body.keep_alive !== undefined && body.keep_alive !== null && keepAliveMs(body.keep_alive) === 0) {
      loaded.delete(model.name);
      const unload = endpoint === 'chat'
        ? { ...baseFields(), ...emptyContent(), done_reason: 'unload', done: true }
        : { ...baseFields(), ...emptyContent(), done: true, done_reason: 'unload' };
      return send(res, 200, unload);
    }
    if (endpoint === 'generate' && body.raw === true && (nonEmpty(body.template) || nonEmpty(body.system) || (Array.isArray(body.context) && body.context.length > 0))) {
      throw new HttpFailure(400, 'raw mode does not support template, system, or context');
    }
    checkThinking(model, body, requested);
    if (!model.capabilities.includes('completion')) throw new HttpFailure(400, `${goQuote(requested)} does not support ${endpoint}`);
    if (endpoint === 'chat' && Array.isArray(body.tools) && body.tools.length > 0 && !model.capabilities.includes('tools')) {
      throw new HttpFailure(400, `${qualifiedModelName(requested)} does not support tools`);
    }
    if (endpoint === 'generate' && nonEmpty(body.suffix) && !model.capabilities.includes('insert')) {
      throw new HttpFailure(400, `${qualifiedModelName(requested)} does not support insert`);
    }

    const wasLoaded = isLoaded(model.name);
    touch(model, body.keep_alive);
    // Where this load put the model decides how fast it generates, unless the model says otherwise.
    const tokensPerSecond = model.evalTokensPerSecond ?? (placedVram(model) >= model.size ? GPU_TOKENS_PER_SECOND : CPU_TOKENS_PER_SECOND);
    if (empty) {
      const load = endpoint === 'chat'
        ? { ...baseFields(), ...emptyContent(), done_reason: 'load', done: true }
        : { ...baseFields(), ...emptyContent(), done: true, done_reason: 'load' };
      return send(res, 200, load);
    }

    const stream = body.stream !== false;
    const format = body.format === null || body.format === '' ? undefined : body.format;
    // From here on the real server has handed the request to the runner:
    // its errors reach a streaming client as status + JSON before any chunk.
    const runnerFailure = (status: number, message: string): HttpFailure => new HttpFailure(status, message, stream ? 'application/json' : JSON_TYPE);
    if (format !== undefined && format !== 'json' && (typeof format !== 'object' || Array.isArray(format))) {
      throw runnerFailure(500, `invalid format: ${goQuote(JSON.stringify(format))}; expected "json" or a valid JSON Schema object`);
    }
    const callMessages: OllamaRequestMessage[] =
      endpoint === 'chat'
        ? messages
        : [
            ...(nonEmpty(body.system) ? [{ role: 'system', content: body.system as string }] : []),
            { role: 'user', content: prompt, ...(Array.isArray(body.images) && body.images.length > 0 ? { images: body.images as string[] } : {}) },
          ];
    const allImages = endpoint === 'chat' ? messages.flatMap((m) => (Array.isArray(m.images) ? m.images : [])) : ((body.images as string[] | undefined) ?? []);
    if (allImages.length > 0 && !model.capabilities.includes('vision')) {
      throw runnerFailure(500, 'this model is missing data required for image input');
    }

    const call: OllamaGenerationCall = {
      endpoint,
      model: requested,
      messages: callMessages,
      prompt: endpoint === 'chat' ? ([...messages].reverse().find((m) => m.role === 'user')?.content ?? '') : prompt,
      images: allImages,
      format,
      options: (body.options as Record<string, unknown> | undefined) ?? {},
      stream,
      body,
      request: record,
    };
    calls.push(call);
    const reply = await pickReply(call);
    await sleep(reply.delayMs ?? 0);
    if (reply.error) throw runnerFailure(reply.error.status, reply.error.message);
    if (reply.malformedBody !== undefined) return send(res, 200, reply.malformedBody, stream ? 'application/x-ndjson' : JSON_TYPE);

    const chunks = reply.chunks ?? splitIntoChunks(reply.content ?? (reply.json !== undefined ? JSON.stringify(reply.json) : ''));
    const content = chunks.join('');
    if (format !== undefined && !reply.allowInvalidJson && !isJson(content)) {
      throw runnerFailure(
        500,
        `ollama test server: the scripted reply for a request with "format" must be JSON (Ollama's grammar guarantees it); got ${goQuote(content.slice(0, 80))}. Set allowInvalidJson to send it anyway.`,
      );
    }

    const promptText = callMessages.map((m) => m.content).join('\n');
    const evalCount = reply.evalCount ?? chunks.length;
    const promptEvalCount = reply.promptEvalCount ?? Math.max(1, Math.ceil(promptText.length / 4)) + allImages.length * 576;
    const metrics = (): Partial<OllamaMetrics> => {
      const all: OllamaMetrics = {
        total_duration: Number(process.hrtime.bigint() - started),
        load_duration: wasLoaded ? 50_000 : 1_200_000_000,
        prompt_eval_count: promptEvalCount,
        // About 1,000 prompt tokens/s, and generation at the placement's speed (GPU_TOKENS_PER_SECOND on the GPU).
        prompt_eval_duration: promptEvalCount * 1_000_000,
        eval_count: evalCount,
        eval_duration: Math.round((evalCount * 1e9) / tokensPerSecond),
        ...reply.metrics,
      };
      // Go's omitempty: zero metrics are absent from the wire.
      return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== 0));
    };
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
      id: `call_${Math.random().toString(36).slice(2, 10).padEnd(8, '0')}`,
      function: { index: i, name: c.function.name, arguments: c.function.arguments },
    }));
    const piece = (text: string, thinking?: string): Record<string, unknown> =>
      endpoint === 'chat'
        ? { ...baseFields(), message: { role: 'assistant', content: text, ...(thinking ? { thinking } : {}) }, done: false }
        : { ...baseFields(), response: text, ...(thinking ? { thinking } : {}), done: false };
    const final = (text: string, thinking: string | undefined, withToolCalls: boolean): Record<string, unknown> => {
      const doneReason = reply.doneReason ?? 'stop';
      if (endpoint === 'chat') {
        const message = { role: 'assistant', content: text, ...(thinking ? { thinking } : {}), ...(withToolCalls && toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
        return reply.omitDone
          ? { ...baseFields(), message, done: false }
          : { ...baseFields(), message, done_reason: doneReason, done: true, ...metrics() };
      }
      const base = { ...baseFields(), response: text, ...(thinking ? { thinking } : {}) };
      return reply.omitDone ? { ...base, done: false } : { ...base, done: true, done_reason: doneReason, context: [128006, 882, 128007], ...metrics() };
    };

    if (!stream) {
      if (reply.midStreamError !== undefined) throw runnerFailure(500, reply.midStreamError);
      return send(res, 200, final(content, reply.thinking, true));
    }

    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    const gone = (): boolean => res.destroyed || closing.signal.aborted;
    if (reply.thinking) {
      for (const t of splitIntoChunks(reply.thinking)) {
        if (gone()) return;
        await writeLine(res, piece('', t));
        await sleep(reply.chunkDelayMs ?? 0);
      }
    }
    for (const c of chunks) {
      if (gone()) return;
      await writeLine(res, piece(c));
      await sleep(reply.chunkDelayMs ?? 0);
    }
    if (toolCalls.length > 0 && endpoint === 'chat' && !gone()) {
      await writeLine(res, { ...baseFields(), message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false });
    }
    if (gone()) return;
    if (reply.midStreamError !== undefined) await writeLine(res, { error: reply.midStreamError });
    else if (!reply.omitDone) await writeLine(res, final('', undefined, false));
    res.end();
  }

  async function route(res: ServerResponse, record: RecordedRequest): Promise<void> {
    const { method, path } = record;
    const getOrHead = method === 'GET' || method === 'HEAD';
    if (path === '/' && getOrHead) return send(res, 200, 'Ollama is running', 'text/plain; charset=utf-8');
    if (path === '/api/version' && getOrHead) return send(res, 200, { version });
    if (path === '/api/tags' && getOrHead) return send(res, 200, { models: models.map((m) => tagsEntry(resolveOllamaModel(m))) });
    if (path === '/api/ps' && method === 'GET') {
      const now = Date.now();
      const running = models
        .map(resolveOllamaModel)
        .filter((m) => (loaded.get(m.name) ?? 0) > now)
        // Ollama lists the longest remaining keep-alive first.
        .sort((a, b) => (loaded.get(b.name) ?? 0) - (loaded.get(a.name) ?? 0))
        .map((m) => psEntry(m, goTimestamp(new Date(loaded.get(m.name) ?? now)), placedVram(m)));
      return send(res, 200, { models: running });
    }
    if (path === '/api/show' && method === 'POST') {
      const body = decodeBody(record.rawBody, SHOW_REQUEST);
      const requested = nonEmpty(body.model) ? (body.model as string) : nonEmpty(body.name) ? (body.name as string) : '';
      if (requested === '') throw new HttpFailure(400, 'model is required');
      const model = findModel(requested);
      if (!model) throw new HttpFailure(404, `model '${requested}' not found`);
      return send(res, 200, showResponse(model));
    }
    if (path === '/api/chat' && method === 'POST') return generate(res, record, 'chat');
    if (path === '/api/generate' && method === 'POST') return generate(res, record, 'generate');
    // gin's answer for an unregistered route or method.
    throw new HttpFailure(404, '404 page not found', 'text/plain');
  }

  const server: Server = createServer({ noDelay: true }, (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.search.slice(1),
        headers: req.headers,
        rawBody,
        body: parseJsonOrUndefined(rawBody),
        receivedAt: new Date(),
      };
      requests.push(record);
      try {
        await route(res, record);
      } catch (error) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (error instanceof HttpFailure) {
          if (error.contentType.startsWith('text/plain')) send(res, error.status, error.message, error.contentType);
          else send(res, error.status, { error: error.message }, error.contentType);
        } else {
          send(res, 500, { error: `ollama test server: ${error instanceof Error ? error.stack ?? error.message : String(error)}` });
        }
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = '127.0.0.1';
  let closed: Promise<void> | undefined;

  return {
    url: `http://${host}:${port}`,
    host,
    port,
    requests,
    calls,
    script,
    models,
    reply(source) {
      script.fallback = source;
    },
    replyOnce(...sources) {
      script.queue.push(...sources);
    },
    expire(model) {
      if (model === undefined) loaded.clear();
      else loaded.delete(canonicalModelName(model));
    },
    loads(model) {
      return loadCounts.get(canonicalModelName(model)) ?? 0;
    },
    reset() {
      requests.length = 0;
      calls.length = 0;
      script.queue.length = 0;
      script.fallback = initialFallback;
      loaded.clear();
      loadCounts.clear();
      initiallyLoaded();
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function keepAliveMs(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_KEEP_ALIVE_MS;
  const ms = typeof value === 'number' ? Math.trunc(value) * 1000 : typeof value === 'string' ? (parseGoDuration(value) ?? DEFAULT_KEEP_ALIVE_MS) : DEFAULT_KEEP_ALIVE_MS;
  return ms < 0 ? FOREVER_MS : ms;
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseJsonOrUndefined(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
