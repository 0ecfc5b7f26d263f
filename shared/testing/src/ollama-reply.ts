import type { IncomingHttpHeaders } from 'node:http';

/** One HTTP request as the Ollama test server received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/api/chat`. */
  path: string;
  /** The query string without `?`, or `''`. */
  query: string;
  /** Lower-cased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  body: unknown;
  receivedAt: Date;
}

/** A chat message as sent to `/api/chat` (images are base64 strings). */
export interface OllamaRequestMessage {
  role: string;
  content: string;
  images?: string[];
  [key: string]: unknown;
}

/** A `/api/chat` or `/api/generate` request that reached the "model", given to a reply script. */
export interface OllamaGenerationCall {
  endpoint: 'chat' | 'generate';
  /** The model name as the client sent it. */
  model: string;
  /** Chat: the request's messages. Generate: the system prompt (if any) and the prompt as a user message. */
  messages: OllamaRequestMessage[];
  /** Generate: `prompt`. Chat: the content of the last user message. */
  prompt: string;
  /** Every image in the request, base64 as sent, in order. */
  images: string[];
  /** `"json"` or a JSON Schema object; undefined for free text. */
  format: unknown;
  options: Record<string, unknown>;
  stream: boolean;
  /** The full decoded request body. */
  body: Record<string, unknown>;
  request: RecordedRequest;
}

/** A tool call the scripted assistant makes (`/api/chat` only). */
export interface OllamaScriptedToolCall {
  function: { name: string; arguments: Record<string, unknown> };
}

/** Ollama's metric fields; durations in nanoseconds. */
export interface OllamaMetrics {
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
  prompt_eval_duration: number;
  eval_count: number;
  eval_duration: number;
}

/** What the scripted model answers to one generation call. */
export interface OllamaReply {
  /** The whole text (`message.content` / `response`). */
  content?: string;
  /** Shorthand for structured output: JSON-encoded into `content`. */
  json?: unknown;
  /** The streamed pieces; their concatenation is the content. Default: split into words. */
  chunks?: string[];
  /** Thinking text, sent before the content (models with the `thinking` capability). */
  thinking?: string;
  toolCalls?: OllamaScriptedToolCall[];
  /** Wait before the response starts (before headers), e.g. to trip a client timeout. */
  delayMs?: number;
  /** Wait between streamed chunks. */
  chunkDelayMs?: number;
  /** Fail before anything is sent: this status and `{"error": message}`. */
  error?: { status: number; message: string };
  /**
   * Answer 200 with this text as the whole body, under Ollama's JSON content
   * type, instead of the answer object: a body cut short or garbled on the
   * way (e.g. `{"model":"m","message":{"ro`), which the client cannot parse.
   * Streamed or not, nothing else is sent.
   */
  malformedBody?: string;
  /**
   * Fail after the chunks: streamed, a final `{"error": ...}` line under the
   * 200 already sent; not streamed, a 500 with the error (as Ollama does).
   */
  midStreamError?: string;
  /** End the stream without the `done: true` object (a cut-off stream); not streamed, `done: false`. */
  omitDone?: boolean;
  /** Default `stop`; `length` when the model hit num_predict. */
  doneReason?: string;
  /** Default: the number of chunks. */
  evalCount?: number;
  /** Default: estimated from the prompt. */
  promptEvalCount?: number;
  /** Overrides for the final object's metrics; a 0 drops the field, as Go's omitempty does. */
  metrics?: Partial<OllamaMetrics>;
  /**
   * With `format` set, content that is not JSON is refused with a 500 naming
   * the mistake, since Ollama's grammar makes such output impossible. Set
   * this to send it anyway (e.g. to model output cut off by `num_predict`).
   */
  allowInvalidJson?: boolean;
}

/** A reply, a plain string (the content), or a function of the call that returns either. */
export type OllamaReplySource =
  | OllamaReply
  | string
  | ((call: OllamaGenerationCall) => OllamaReply | string | Promise<OllamaReply | string>);

/** The programmable part of the server: queued one-shot replies, then the fallback. */
export interface OllamaReplyScript {
  /** Replies used once each, first in first out, before the fallback. */
  queue: OllamaReplySource[];
  /** The reply when the queue is empty. */
  fallback: OllamaReplySource;
}

/** The fallback a server starts with. */
export const DEFAULT_OLLAMA_REPLY: OllamaReplySource = (call) => (call.format !== undefined ? { json: {} } : { content: 'This is a scripted reply from the Ollama test server.' });

/** Splits text the way a model streams it: a word and its following space per chunk. */
export function splitIntoChunks(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}
