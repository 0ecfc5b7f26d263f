/**
 * Issue 17's noisy-neighbour reproductions, as code both the system test
 * (tenant-floods.test.ts) and `npm run bench:fairness` run against a stack of
 * real processes (process-stack.ts): tenant A floods one expensive operation
 * while tenant B calls a cheap one, one call at a time, and B's latency is
 * compared with B's latency alone, measured just before in the same round.
 *
 * The bound (docs/architecture.md, "One tenant's backlog"): B's p99 under
 * the flood stays within 2 × its unloaded p99 plus one of A's jobs, the
 * longest a fair queue can make B wait (a slot held by A's running job, on a
 * service that runs it on its event loop). The service doing A's work must
 * also give its memory back: its RSS within 20 % of its pre-flood value.
 */
import { crc32 } from 'node:zlib';
import { Queue } from 'bullmq';
import sharp from 'sharp';
import { QUEUES, type QueueName } from '@vouch/contracts';
import { consumerRedisOptions } from '@vouch/platform';
import { TEST_REDIS_URL, eventually } from '@vouch/testing';
import { renderText } from '../../vision-router/test/render-text.js';
import type { ProcessStack, QueueServiceName, StackProcessName } from './process-stack.js';

export const FLOOD_KINDS = ['claims', 'ocr', 'grep', 'bodies', 'mcp'] as const;
export type FloodKind = (typeof FLOOD_KINDS)[number];

/** The queue services each flood needs, beside the gateway. */
export const FLOOD_SERVICES: Record<FloodKind, readonly QueueServiceName[]> = {
  claims: ['board-dispatcher'],
  ocr: ['vision-router'],
  grep: ['extractor'],
  bodies: ['extractor'],
  mcp: ['extractor'],
};

/** How large each flood is: A's callers at once, and what each call carries. */
export interface FloodSizes {
  /** Waiting board.claimCard calls of A at once (the gateway lets BOARD_CLAIM_WAITS_PER_TENANT of them wait). */
  claimCallers: number;
  /** vision.analyze calls of A at once, each on a PNG of ocrWidth × ocrHeight never analysed before (no cache hit). */
  ocrCallers: number;
  ocrWidth: number;
  ocrHeight: number;
  /** artifact.grep calls of A at once, each over grepFiles files of grepFileChars characters, with no literal to skip by. */
  grepCallers: number;
  grepFiles: number;
  grepFileChars: number;
  /** artifact.read calls of A at once over /v1 (bodies) and over /mcp (mcp), each with a body of bodyChars characters. */
  bodyCallers: number;
  mcpCallers: number;
  bodyChars: number;
}

/** What one kind of flood measured, each figure the median over rounds. */
export interface FloodFigures {
  kind: FloodKind;
  /** What A floods with, and B's cheap call, in words. */
  flood: string;
  cheap: string;
  service: StackProcessName;
  rounds: number;
  /** B's calls per round alone, and under the flood (the median over rounds). */
  samples: { unloaded: number; loaded: number };
  unloaded: { p50: number; p99: number };
  loaded: { p50: number; p99: number };
  /** One of A's calls alone, end to end: the "one job's duration" of the bound. */
  jobMs: number;
  /** 2 × unloaded p99 + jobMs. */
  boundMs: number;
  holds: boolean;
  /** loaded p99 / unloaded p99. */
  ratio: number;
  /** A's answers during the floods, by HTTP status (an MCP tool error as `tool-error`). */
  answers: Record<string, number>;
  /** Resident memory of `service`: before the first flood, the highest during them, and after them. */
  rss: { before: number; peak: number; after: number; returnedInMs: number | null };
  /** Per round, for a reader who wants to see the spread. */
  perRound: Array<{ unloadedP99: number; loadedP99: number; jobMs: number }>;
}

export interface MeasureOptions {
  rounds: number;
  /** B's calls per phase: at least this many, alone and under the flood... */
  samples: number;
  /**
   * ...for at least this long in each phase. On a shared machine B's latency
   * has a tail of its own (a pause every second or two); sampling both phases
   * over the same stretch of time puts as much of it in each, and enough calls
   * in each that the p99 is not one call.
   */
  phaseMs: number;
  /** A's calls alone per round, whose median is the round's job duration. */
  jobSamples: number;
  /** Under the flood, B keeps calling until A has had time for this many of its jobs too, so the flood is measured at its worst, not as it starts. */
  floodJobs: number;
  /** ...but stops after this long under the flood (with at least 3 calls): an unfair queue can make each of B's calls take seconds. */
  maxLoadedMs: number;
  /** How long the service may take to give its memory back once the floods end. */
  rssReturnMs: number;
}

/** One of A's calls and how it ended. */
interface Answer {
  status: string;
  /** Seconds to wait before the next call (a 429's or 503's Retry-After). */
  retryAfterS?: number;
}

/** A kind of flood on a running stack. */
interface Flood {
  kind: FloodKind;
  flood: string;
  cheap: string;
  service: StackProcessName;
  callers: number;
  /** Makes A's and B's data (boards, images, files). */
  prepare(): Promise<void>;
  /** One cheap call of B; throws unless it succeeded. */
  cheapCall(): Promise<void>;
  /** One of A's calls alone; throws unless it succeeded. */
  oneJob(): Promise<void>;
  /** One of A's flood calls. */
  floodCall(signal: AbortSignal): Promise<Answer>;
  /** Whether the flood's calls are aborted when it stops (a long-poll), or awaited. */
  abortOnStop: boolean;
  /** Resolves when A's flood has reached the place it would crowd (the queue, the gateway's waits). */
  reached(): Promise<void>;
  /** Resolves once nothing of A's flood is left queued or running. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
/** A's keys: far above any budget the flood could spend, so that it reaches the queues (the budgets are tested in tenant-budgets.test.ts). */
const UNLIMITED = { rate: 2_000_000_000, concurrency: 100_000 };
/** A pattern RE2 must run on every line: no literal a search could skip to, and nothing in the files matches it. */
const NO_LITERAL = '[0-9]{5}[A-Z]{3}';

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: readonly number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** A client of the stack's gateway with one key. */
function client(stack: ProcessStack, key: string) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return {
    async send(method: string, path: string, body?: string | Uint8Array, signal?: AbortSignal): Promise<{ status: number; text: string; retryAfter: string | null }> {
      const res = await fetch(`${stack.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}), ...(signal ? { signal } : {}) });
      return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
    },
    /** A call that must answer `want`; its body parsed. */
    async ok<T = unknown>(method: string, path: string, body?: unknown, want = 200): Promise<T> {
      const res = await this.send(method, path, body === undefined ? undefined : JSON.stringify(body));
      if (res.status !== want) throw new Error(`${method} ${path} answered ${res.status}, not ${want}: ${res.text.slice(0, 500)}`);
      return (res.text ? JSON.parse(res.text) : undefined) as T;
    },
  };
}

const answerOf = (res: { status: number; retryAfter: string | null }): Answer => ({
  status: String(res.status),
  ...(res.retryAfter ? { retryAfterS: Number(res.retryAfter) } : {}),
});

let measurements = 0;

/** A's and B's keys, in tenants of their own for each measurement: A's with budgets it cannot reach, B's with the gateway's defaults. */
async function tenantKeys(stack: ProcessStack, kind: FloodKind) {
  const run = ++measurements;
  return {
    a: await stack.createKey(`flood-${kind}-${run}-a`, { agent: 'flooder', budgets: UNLIMITED }),
    b: await stack.createKey(`flood-${kind}-${run}-b`, { agent: 'planner' }),
  };
}

/** Jobs of the queue not yet finished (waiting, delayed, parked, running). */
function queueBacklog(stack: ProcessStack, name: QueueName) {
  const queue = new Queue(name, { connection: consumerRedisOptions(TEST_REDIS_URL), prefix: stack.prefix });
  const count = async (): Promise<number> => {
    const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };
  return {
    count,
    /** Resolves once at least `atLeast` of A's jobs wait or run there: the flood has reached the queue. */
    async holds(what: string, atLeast: number, everyMs = 50): Promise<void> {
      await eventually(`${what} queued at the ${name}`, async () => ((await count()) >= atLeast ? true : undefined), 60_000, everyMs);
    },
    /** Resolves once the queue is empty again. */
    async empties(timeoutMs = 120_000): Promise<void> {
      await eventually(`the ${name} queue to empty`, async () => ((await count()) === 0 ? true : undefined), timeoutMs, 100);
    },
    close: () => queue.close(),
  };
}

/** A gauge of the gateway's /metrics. */
async function gatewayGauge(stack: ProcessStack, name: string): Promise<number> {
  const text = await (await fetch(`${stack.url}/metrics`)).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** Distinct bytes for the same pixels: a tEXt chunk before IEND, so no cache takes one image for another. */
export function pngVariant(png: Buffer, label: string): Buffer {
  const iend = png.length - 12;
  const data = Buffer.from(`Comment\0${label}`, 'latin1');
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write('tEXt', 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return Buffer.concat([png.subarray(0, iend), chunk, png.subarray(iend)]);
}

/** A large, mostly white page with a few lines of text: a scan, cheap to send, yet every decoder and OCR worker holds all its pixels. */
async function largePage(width: number, height: number): Promise<Buffer> {
  const lines = await Promise.all([0, 1, 2].map((i) => renderText({ text: `Invoice F-${i}: total due 1,234.56 EUR`, size: Math.max(24, Math.round(width / 130)) })));
  return sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite(lines.map((input, i) => ({ input, left: Math.round(width * 0.05), top: Math.round(height * (0.08 + i * 0.3)) })))
    .removeAlpha()
    .png()
    .toBuffer();
}

/** Text of `chars` characters in lines with no uppercase letter: NO_LITERAL matches none. */
function sourceText(chars: number, seed: string): string {
  const line = (i: number) => `${seed}-${String(i).padStart(7, '0')} lorem ipsum dolor sit amet, consectetur adipiscing elit\n`;
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const l = line(i);
    lines.push(l);
    size += l.length;
  }
  return lines.join('').slice(0, chars);
}

/** A's artifact.read bodies: a few distinct ones, cycled under new paths (the cost is in carrying them, whatever the path). */
function bodyRequests(chars: number, workspace: string) {
  const bodies = [0, 1, 2].map((i) => sourceText(chars, `b${i}`));
  let next = 0;
  return () => {
    const i = next++;
    return { workspace, path: `big/body-${i}.txt`, content: bodies[i % bodies.length]! };
  };
}

function claimsFlood(stack: ProcessStack, sizes: FloodSizes): Flood {
  let a: ReturnType<typeof client>;
  let b: ReturnType<typeof client>;
  const board = 'fairness-b';
  const dispatcher = queueBacklog(stack, QUEUES.boardDispatcher);
  return {
    kind: 'claims',
    flood: `${sizes.claimCallers} board.claimCard waiting 25 s for work that never comes`,
    cheap: 'board.show',
    service: 'gateway',
    callers: sizes.claimCallers,
    abortOnStop: true,
    async prepare() {
      const keys = await tenantKeys(stack, 'claims');
      a = client(stack, keys.a);
      b = client(stack, keys.b);
      await b.ok('POST', '/v1/boards', { boardId: board, title: 'Fairness', scope: { kind: 'run', ref: board }, owner: 'planner' });
      await b.ok('POST', `/v1/boards/${board}/cards`, {
        boardId: board,
        cards: [0, 1, 2].map((i) => ({ key: `k${i}`, title: `Card ${i}`, assignee: `worker-${i}`, evidenceRequirements: ['a log line'] })),
      });
    },
    async cheapCall() {
      await b.ok('GET', `/v1/boards/${board}`);
    },
    async oneJob() {
      const res = await a.ok<{ claimed: boolean }>('POST', '/v1/board-claims', { waitSeconds: 0 });
      if (res.claimed !== false) throw new Error(`tenant A claimed a card: ${JSON.stringify(res)}`);
    },
    async floodCall(signal) {
      return answerOf(await a.send('POST', '/v1/board-claims', JSON.stringify({ waitSeconds: 25 }), signal));
    },
    async reached() {
      // Every caller waiting, or as many as the gateway lets one tenant hold.
      const want = Math.min(sizes.claimCallers, 32);
      await eventually(`${want} of A's claims waiting in the gateway`, async () => ((await gatewayGauge(stack, 'vouch_gateway_board_claims_waiting')) >= want ? true : undefined), 30_000, 50);
    },
    async drained() {
      await eventually('A\'s claims to stop waiting', async () => ((await gatewayGauge(stack, 'vouch_gateway_board_claims_waiting')) === 0 && (await dispatcher.count()) === 0 ? true : undefined), 30_000, 50);
    },
    close: () => dispatcher.close(),
  };
}

function ocrFlood(stack: ProcessStack, sizes: FloodSizes): Flood {
  let a: ReturnType<typeof client>;
  let b: ReturnType<typeof client>;
  let page: Buffer;
  let next = 0;
  let tiny = '';
  const vision = queueBacklog(stack, QUEUES.visionRouter);
  /** Registers a fresh variant of the page in A's chat and answers its alias: every analysis is a cache miss. */
  const freshAlias = async () => {
    const i = next++;
    const image = pngVariant(page, `flood ${i}`);
    const res = await a.ok<{ alias: string }>('POST', '/v1/media', { surface: 'api', chatKey: 'flood', messageId: `m${i}`, imageBase64: image.toString('base64') });
    return res.alias;
  };
  const analyze = (alias: string) => JSON.stringify({ surface: 'api', chatKey: 'flood', alias, prompt: 'What text is on this page?', requestedDetail: 'text' });
  return {
    kind: 'ocr',
    get flood() {
      return `${sizes.ocrCallers} vision.analyze (text) of ${((sizes.ocrWidth * sizes.ocrHeight) / 1e6).toFixed(0)}-megapixel PNGs`;
    },
    cheap: 'vision.analyze of a 1-line PNG',
    service: 'vision-router',
    callers: sizes.ocrCallers,
    abortOnStop: false,
    async prepare() {
      const keys = await tenantKeys(stack, 'ocr');
      a = client(stack, keys.a);
      b = client(stack, keys.b);
      page = await largePage(sizes.ocrWidth, sizes.ocrHeight);
      const small = await renderText({ text: 'Order 4411 shipped', size: 28 });
      tiny = (await b.ok<{ alias: string }>('POST', '/v1/media', { surface: 'api', chatKey: 'cheap', messageId: '1', imageBase64: small.toString('base64') })).alias;
    },
    async cheapCall() {
      await b.ok('POST', '/v1/vision/analyze', { surface: 'api', chatKey: 'cheap', alias: tiny, prompt: 'What does the label say?', requestedDetail: 'text' });
    },
    async oneJob() {
      const res = await a.send('POST', '/v1/vision/analyze', analyze(await freshAlias()));
      if (res.status !== 200) throw new Error(`A's vision.analyze answered ${res.status}: ${res.text.slice(0, 500)}`);
    },
    async floodCall(signal) {
      // The registration is part of the flood's traffic, as the tenant A sent it.
      return answerOf(await a.send('POST', '/v1/vision/analyze', analyze(await freshAlias()), signal));
    },
    reached: () => vision.holds(`${Math.min(sizes.ocrCallers, 3)} of A's analyses`, Math.min(sizes.ocrCallers, 3)),
    drained: () => vision.empties(180_000),
    close: () => vision.close(),
  };
}

/** B's cheap extractor call: artifact.read of a 6-byte file, the issue's. */
function tinyRead(b: ReturnType<typeof client>) {
  return async () => {
    await b.ok('POST', '/v1/artifacts/read', { workspace: 'cheap', path: 'notes/tiny.txt', content: 'hello\n' });
  };
}

function grepFlood(stack: ProcessStack, sizes: FloodSizes): Flood {
  let a: ReturnType<typeof client>;
  let cheapCall: () => Promise<void> = async () => {};
  const extractor = queueBacklog(stack, QUEUES.extractor);
  const grep = JSON.stringify({ workspace: 'big', pattern: NO_LITERAL });
  return {
    kind: 'grep',
    get flood() {
      return `${sizes.grepCallers} artifact.grep with no literal over ${sizes.grepFiles} files of ${(sizes.grepFileChars / 1e6).toFixed(0)} MB`;
    },
    cheap: 'artifact.read of a 6-byte file',
    service: 'extractor',
    callers: sizes.grepCallers,
    abortOnStop: false,
    async prepare() {
      const keys = await tenantKeys(stack, 'grep');
      a = client(stack, keys.a);
      cheapCall = tinyRead(client(stack, keys.b));
      for (let i = 0; i < sizes.grepFiles; i++) await a.ok('POST', '/v1/artifacts/read', { workspace: 'big', path: `logs/part-${i}.log`, content: sourceText(sizes.grepFileChars, `f${i}`) });
    },
    cheapCall: () => cheapCall(),
    async oneJob() {
      const res = await a.send('POST', '/v1/artifacts/grep', grep);
      if (res.status !== 200) throw new Error(`A's artifact.grep answered ${res.status}: ${res.text.slice(0, 500)}`);
      const scanned = (JSON.parse(res.text) as { provenance?: { scannedBytes?: number } }).provenance?.scannedBytes;
      if (scanned !== undefined && scanned < sizes.grepFiles * sizes.grepFileChars) throw new Error(`A's grep scanned ${scanned} bytes, not all ${sizes.grepFiles * sizes.grepFileChars}`);
    },
    async floodCall(signal) {
      return answerOf(await a.send('POST', '/v1/artifacts/grep', grep, signal));
    },
    reached: () => extractor.holds(`${Math.min(sizes.grepCallers, 3)} of A's greps`, Math.min(sizes.grepCallers, 3)),
    drained: () => extractor.empties(),
    close: () => extractor.close(),
  };
}

function bodiesFlood(stack: ProcessStack, sizes: FloodSizes): Flood {
  let a: ReturnType<typeof client>;
  let cheapCall: () => Promise<void> = async () => {};
  const extractor = queueBacklog(stack, QUEUES.extractor);
  const nextBody = bodyRequests(sizes.bodyChars, 'uploads');
  return {
    kind: 'bodies',
    get flood() {
      return `${sizes.bodyCallers} artifact.read over /v1 with ${(sizes.bodyChars / 1e6).toFixed(0)} MB bodies`;
    },
    cheap: 'artifact.read of a 6-byte file',
    service: 'gateway',
    callers: sizes.bodyCallers,
    abortOnStop: false,
    async prepare() {
      const keys = await tenantKeys(stack, 'bodies');
      a = client(stack, keys.a);
      cheapCall = tinyRead(client(stack, keys.b));
    },
    cheapCall: () => cheapCall(),
    async oneJob() {
      await a.ok('POST', '/v1/artifacts/read', nextBody());
    },
    async floodCall(signal) {
      return answerOf(await a.send('POST', '/v1/artifacts/read', JSON.stringify(nextBody()), signal));
    },
    reached: () => extractor.holds("A's bodies", 2, 20),
    drained: () => extractor.empties(),
    close: () => extractor.close(),
  };
}

function mcpFlood(stack: ProcessStack, sizes: FloodSizes): Flood {
  let a: ReturnType<typeof client>;
  let cheapCall: () => Promise<void> = async () => {};
  const extractor = queueBacklog(stack, QUEUES.extractor);
  const nextBody = bodyRequests(sizes.bodyChars, 'mcp-uploads');
  let id = 0;
  const toolCall = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'artifact_read', arguments: nextBody() } });
  /** A JSON-RPC answer's HTTP status, or `tool-error` when the call itself failed. */
  const mcpAnswer = (res: { status: number; text: string; retryAfter: string | null }): Answer => {
    if (res.status !== 200) return answerOf(res);
    // Streamable HTTP may answer as one server-sent event: its data line is the JSON-RPC answer.
    const json = res.text.startsWith('{') ? res.text : (/^data: (.*)$/m.exec(res.text)?.[1] ?? '{}');
    const body = JSON.parse(json) as { result?: { isError?: boolean }; error?: unknown };
    return { status: body.error || body.result?.isError ? 'tool-error' : '200' };
  };
  return {
    kind: 'mcp',
    get flood() {
      return `${sizes.mcpCallers} parallel MCP artifact_read with ${(sizes.bodyChars / 1e6).toFixed(0)} MB bodies (batches refused)`;
    },
    cheap: 'artifact.read of a 6-byte file',
    service: 'gateway',
    callers: sizes.mcpCallers,
    abortOnStop: false,
    async prepare() {
      const keys = await tenantKeys(stack, 'mcp');
      a = client(stack, keys.a);
      cheapCall = tinyRead(client(stack, keys.b));
      // The other door: a batch would run its calls at once. It is refused whole.
      const small = (n: number) => ({ jsonrpc: '2.0', id: `batch-${n}`, method: 'tools/call', params: { name: 'artifact_read', arguments: { workspace: 'mcp-batch', path: `f${n}.txt`, content: 'x\n' } } });
      const batch = await a.send('POST', '/mcp', JSON.stringify([small(1), small(2)]));
      if (batch.status !== 400) throw new Error(`a JSON-RPC batch on /mcp answered ${batch.status}, not 400: ${batch.text.slice(0, 300)}`);
    },
    cheapCall: () => cheapCall(),
    async oneJob() {
      const answer = mcpAnswer(await a.send('POST', '/mcp', toolCall()));
      if (answer.status !== '200') throw new Error(`A's MCP artifact_read answered ${answer.status}`);
    },
    async floodCall(signal) {
      return mcpAnswer(await a.send('POST', '/mcp', toolCall(), signal));
    },
    reached: () => extractor.holds("A's MCP bodies", 2, 20),
    drained: () => extractor.empties(),
    close: () => extractor.close(),
  };
}

const FLOODS: Record<FloodKind, (stack: ProcessStack, sizes: FloodSizes) => Flood> = {
  claims: claimsFlood,
  ocr: ocrFlood,
  grep: grepFlood,
  bodies: bodiesFlood,
  mcp: mcpFlood,
};

/** Latencies of calls one after another, sorted: `n` of them, and more until `minMs` has passed, but none started after `maxMs` once 3 are done. */
async function sample(call: () => Promise<void>, n: number, minMs = 0, maxMs = Infinity): Promise<number[]> {
  const ms: number[] = [];
  const started = performance.now();
  for (;;) {
    const elapsed = performance.now() - started;
    if ((ms.length >= n && elapsed >= minMs) || (ms.length >= 3 && elapsed >= maxMs)) break;
    const t = performance.now();
    await call();
    ms.push(performance.now() - t);
  }
  return ms.sort((x, y) => x - y);
}

/** Runs A's callers until stopped; a refused call waits its Retry-After (or until the stop) before the next. */
function startFlood(flood: Flood) {
  const answers: Record<string, number> = {};
  const abort = new AbortController();
  let stopped = false;
  let wake: () => void = () => {};
  const stopping = new Promise<void>((resolve) => (wake = resolve));
  const count = (status: string) => (answers[status] = (answers[status] ?? 0) + 1);
  const callers = Array.from({ length: flood.callers }, async () => {
    while (!stopped) {
      let answer: Answer;
      try {
        answer = await flood.floodCall(abort.signal);
      } catch (err) {
        // A long-poll still waiting when the flood stops is cut off by its caller.
        if (abort.signal.aborted) {
          count('waiting at stop');
          return;
        }
        answer = { status: `error: ${(err as Error).message}` };
      }
      count(answer.status);
      if (answer.retryAfterS !== undefined) await Promise.race([stopping, new Promise((r) => setTimeout(r, answer.retryAfterS! * 1000))]);
    }
  });
  return {
    async stop(): Promise<Record<string, number>> {
      stopped = true;
      wake();
      if (flood.abortOnStop) abort.abort();
      await Promise.all(callers);
      return answers;
    },
  };
}

/**
 * Measures one kind of flood on a running stack that has its services
 * (FLOOD_SERVICES): per round B's latencies alone, A's job alone, then B's
 * latencies under A's flood; and the service's memory before, during and
 * after the rounds.
 */
export async function measureFlood(stack: ProcessStack, kind: FloodKind, sizes: FloodSizes, opts: MeasureOptions): Promise<FloodFigures> {
  const flood = FLOODS[kind](stack, sizes);
  try {
    await flood.prepare();
    // Warm every path both tenants take (JIT, pools, prepared statements) before anything counts.
    await sample(() => flood.cheapCall(), 5);
    await flood.oneJob();
    const rssBefore = stack.rss(flood.service);
    let peak = rssBefore;
    const rounds: Array<{ unloaded: number[]; loaded: number[]; jobMs: number }> = [];
    const answers: Record<string, number> = {};
    for (let r = 0; r < opts.rounds; r++) {
      const unloaded = await sample(() => flood.cheapCall(), opts.samples, opts.phaseMs);
      const jobMs = median(await sample(() => flood.oneJob(), opts.jobSamples));
      stack.resetPeak(flood.service);
      const running = startFlood(flood);
      let loaded: number[];
      try {
        await flood.reached();
        loaded = await sample(() => flood.cheapCall(), opts.samples, Math.max(opts.phaseMs, opts.floodJobs * jobMs), opts.maxLoadedMs);
      } finally {
        for (const [status, n] of Object.entries(await running.stop())) answers[status] = (answers[status] ?? 0) + n;
      }
      await flood.drained();
      peak = Math.max(peak, stack.peakRss(flood.service));
      rounds.push({ unloaded, loaded, jobMs });
    }
    // Memory comes back once the service is idle: watched, not waited for a fixed time.
    const idleSince = performance.now();
    let after = stack.rss(flood.service);
    while (after > rssBefore * 1.2 && performance.now() - idleSince < opts.rssReturnMs) {
      await new Promise((r) => setTimeout(r, 250));
      after = stack.rss(flood.service);
    }
    const perRound = rounds.map((r) => ({ unloadedP99: percentile(r.unloaded, 99), loadedP99: percentile(r.loaded, 99), jobMs: r.jobMs }));
    const unloaded = { p50: median(rounds.map((r) => percentile(r.unloaded, 50))), p99: median(perRound.map((r) => r.unloadedP99)) };
    const loaded = { p50: median(rounds.map((r) => percentile(r.loaded, 50))), p99: median(perRound.map((r) => r.loadedP99)) };
    const jobMs = median(perRound.map((r) => r.jobMs));
    const boundMs = 2 * unloaded.p99 + jobMs;
    return {
      kind,
      flood: flood.flood,
      cheap: flood.cheap,
      service: flood.service,
      rounds: opts.rounds,
      samples: { unloaded: median(rounds.map((r) => r.unloaded.length)), loaded: median(rounds.map((r) => r.loaded.length)) },
      unloaded,
      loaded,
      jobMs,
      boundMs,
      holds: loaded.p99 <= boundMs,
      ratio: loaded.p99 / unloaded.p99,
      answers,
      rss: { before: rssBefore, peak, after, returnedInMs: after <= rssBefore * 1.2 ? Math.round(performance.now() - idleSince) : null },
      perRound,
    };
  } finally {
    await flood.close();
  }
}

/** One line of figures, for a test's log. */
export function describeFigures(f: FloodFigures): string {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const mib = (x: number) => `${Math.round(x / MiB)} MiB`;
  return (
    `${f.kind}: B's ${f.cheap} p50 ${ms(f.unloaded.p50)} → ${ms(f.loaded.p50)}, p99 ${ms(f.unloaded.p99)} → ${ms(f.loaded.p99)} ` +
    `(×${f.ratio.toFixed(2)}; bound ${ms(f.boundMs)} with one job ${ms(f.jobMs)}) under ${f.flood}; A's answers ${JSON.stringify(f.answers)}; ` +
    `${f.service} RSS ${mib(f.rss.before)} → peak ${mib(f.rss.peak)} → ${mib(f.rss.after)}${f.rss.returnedInMs === null ? ' (still over 120 % of before when last read)' : ''}; ` +
    `per round ${JSON.stringify(f.perRound.map((r) => [Math.round(r.unloadedP99), Math.round(r.loadedP99), Math.round(r.jobMs)]))}`
  );
}
