/**
 * Hostile input to every operation of the table, through the real gateway to
 * every real queue service (full-stack.ts), on the real Redis and
 * Postgres. Every field of every operation (path parameters, query, body,
 * nested array items) gets NUL, lone surrogates, strings past their maximum,
 * wrong types, `__proto__` and `constructor` keys, traversal strings, numbers
 * at and past their bounds and NaN-ish strings; each operation gets unknown
 * fields. The operation's own schema predicts the answer: a value it refuses
 * must get a 400 problem naming the field; a value it accepts anything but a
 * 5xx. No answer may hold a stack trace, driver text, an address or a
 * storage name. A new operation joins through the table and its example.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, SCOPES, boardClaimCard, pathParams, textProblem, type OperationDef } from '@vouch/contracts';
import {
  eventually,
  inputAsReceived,
  metricValue,
  inputFields,
  requestFor,
  sampleValue,
  sendRequest,
  withField,
  type FieldPath,
  type InputField,
  type OperationRequest,
  type RawAnswer,
} from '@vouch/testing';
import { startFullStack, type FullStack } from './full-stack.js';
import type { GatewayUnderTest } from './gateway-under-test.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- problem bodies are checked by assertion, not by type
type Json = any;

/** Random cases per field on top of the fixed hostile list: about twenty requests per field in all. */
const RANDOM_RUNS = 1;
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_201);

/**
 * How long the fuzz waits for the answer to a long-poll it sent with a wait
 * the schema accepts. board.claimCard takes waitSeconds up to 25 and, with no
 * work for the fuzz's agent (there never is), answers only when that is over:
 * one such claim was half of this file's time. Validation and admission answer
 * at once, so a claim still unanswered at the clamp has passed both; the fuzz
 * then checks that the gateway holds it as a waiting claim, leaves, and checks
 * that the gateway stops waiting for it. How a wait ends (200, claimed: false)
 * is judged on the example's 2 s claim and on the accepted values of 0.
 */
const LONG_POLL_CLAMP_MS = 1_000;
const LONG_POLLS = new Set([boardClaimCard.name]);

const BAD_CHARS = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff'];

/** Values a field's schema refuses or that probe what lies behind it, by kind. */
function hostileValues(field: InputField): unknown[] {
  const wrongTypes = [42, true, null, [], {}];
  switch (field.kind) {
    case 'string': {
      const max = field.maxLength ?? 10_000;
      return [
        'a\u0000b',
        '\ud800',
        'x\udfff',
        '\udbff\u0000',
        'x'.repeat(max + 1),
        'x'.repeat(max),
        '',
        '../../etc/passwd',
        42,
        null,
      ];
    }
    case 'enum':
    case 'literal': {
      const first = String(field.options?.[0] ?? 'x');
      return ['nope', first.toUpperCase(), `${first}\u0000`, ` ${first}`, '\ud800', '__proto__', ...wrongTypes];
    }
    case 'number': {
      const min = field.min ?? -1e6;
      const max = field.max ?? 1e6;
      const atAndPast = [min, max, min - 1, max + 1, min + 0.5, 2 ** 53, -0];
      const nanish = ['NaN', 'abc', 'Infinity', '-Infinity', '1e309', '', '0x10', ' 7 ', '7abc', '\u0000', '\ud800'];
      return field.coerce ? [...atAndPast, ...nanish, [], {}] : [...atAndPast, String(min), ...wrongTypes.filter((v) => typeof v !== 'number')];
    }
    case 'boolean':
      return ['true', 1, 0, null, [], {}, '\u0000'];
    case 'array':
      return ['x', 42, null, {}, [null], ['\u0000']];
    case 'object': {
      const sample = (sampleValue(field.schema) ?? {}) as Record<string, unknown>;
      return [
        'x',
        42,
        null,
        [],
        withKey(sample, '__proto__', { admin: true }),
        withKey(sample, 'constructor', { prototype: { admin: true } }),
        withKey(sample, 'a\u0000b', 1),
        withKey(sample, '\ud800', 1),
      ];
    }
    default:
      return ['\u0000', '\ud800', ...wrongTypes];
  }
}

/** Random hostile values: strings that always hold a character no store can keep, or any JSON for other kinds. */
function randomHostile(field: InputField): fc.Arbitrary<unknown> {
  const poisoned = fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...BAD_CHARS), fc.string({ maxLength: 8 })).map(([a, b, c]) => a + b + c);
  if (field.kind === 'string' || field.kind === 'enum' || field.kind === 'literal') return poisoned;
  if (field.kind === 'number') return field.coerce ? fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 6 })) : fc.oneof(fc.double(), fc.integer());
  return fc.oneof(poisoned, fc.jsonValue({ maxDepth: 2 }));
}

function withKey(base: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

function valueAt(input: unknown, path: FieldPath): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** Whether a value holds, in any string or key, text no store can keep (NUL, a lone surrogate). */
function holdsUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return textProblem(value) !== undefined;
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => textProblem(k) !== undefined || holdsUnstorableText(v));
}

/**
 * Whether the value must be refused naming the field: its own schema refuses
 * it as the gateway receives it (leaving out an optional field is fine), or
 * it holds text no store can keep, which the house rule (every string field
 * is text()) refuses whatever the schema says.
 */
function fieldRefuses(field: InputField, received: unknown): boolean {
  if (holdsUnstorableText(received)) return true;
  if (received === undefined) return !field.optional;
  if (received === null && field.nullable) return false;
  return !field.schema.safeParse(received).success;
}

/** Text no answer may hold. */
function leaks(text: string, names: string[]): string[] {
  const found: string[] = [];
  const patterns: Array<[string, RegExp]> = [
    ['a stack frame', /\bat [^\s"]+ \(|\bat (?:file:|node:|\/)|\.ts:\d+:\d+|\.js:\d+:\d+/],
    ['a file path', /node_modules|\/work\/|\/home\/|\/tmp\//],
    ['an address', /\b(?:\d{1,3}\.){3}\d{1,3}:\d{2,5}\b|localhost:\d+|::1/],
    ['driver text', /ECONN|EPIPE|ETIMEDOUT|SQLSTATE|syntax error at|violates .* constraint|invalid input syntax|duplicate key|relation "|pg_catalog|Missing key|isFinished|ReplyError|ioredis|bullmq|ZodError|TypeError|Cannot read prop|unexpected token/i],
  ];
  for (const [what, re] of patterns) if (re.test(text)) found.push(what);
  for (const name of names) if (text.includes(name)) found.push(`the storage name ${name}`);
  return found;
}

describe('hostile input to every operation', () => {
  let stack: FullStack;
  let gw: GatewayUnderTest;
  let key: string;
  let storageNames: string[];
  let requests = 0;
  let leftWaiting = 0;

  beforeAll(async () => {
    // Every queue service of the table (full-stack.ts), so a new service's operations are fuzzed end to end.
    stack = await startFullStack('operation_fuzz');
    gw = stack.gw;
    key = await gw.createKey('fuzz', SCOPES.join(','));
    storageNames = [gw.prefix, gw.schema, 'bull:', 't_operation_fuzz'];
  });
  afterAll(async () => {
    await stack?.stop();
    console.log(`operation fuzz: ${requests} requests (${leftWaiting} long-polls left waiting at the clamp), seed ${SEED}`);
  });

  const send = async (req: OperationRequest, signal?: AbortSignal): Promise<RawAnswer & { body: Json }> => {
    requests += 1;
    const answer = await sendRequest(gw.url, req, { authorization: `Bearer ${key}` }, signal);
    let body: Json;
    try {
      body = JSON.parse(answer.text);
    } catch {
      body = undefined;
    }
    return { ...answer, body };
  };

  /** board.claimCard requests waiting in the gateway for work (claim-waits.ts). */
  const claimsWaiting = () => metricValue(gw.gateway.metrics.registry, 'vouch_gateway_board_claims_waiting');

  /**
   * Sends a long-poll the schema accepts and waits for its answer at most
   * LONG_POLL_CLAMP_MS (see there). Resolves with the answer when one came;
   * undefined when the claim was still waiting in the gateway, the test left,
   * and the gateway stopped waiting for it.
   */
  const sendClamped = async (req: OperationRequest): Promise<(RawAnswer & { body: Json }) | undefined> => {
    const leave = new AbortController();
    const answer = send(req, leave.signal);
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([answer, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), LONG_POLL_CLAMP_MS)))]).finally(() => clearTimeout(timer));
    if (early) return early;
    const held = await Promise.race([answer, eventually('the claim held among the gateway\'s waiting claims', async () => ((await claimsWaiting()) >= 1 ? true : undefined), 30_000, 20)]);
    if (held !== true) return held;
    leave.abort();
    // An answer that came just before the abort is still judged.
    const settled = await answer.catch(() => undefined);
    if (settled) return settled;
    await eventually('the gateway to stop waiting for a claim whose caller left', async () => ((await claimsWaiting()) === 0 ? true : undefined), 30_000, 20);
    leftWaiting += 1;
    return undefined;
  };

  /** Checks one answer against what the operation's schema predicts, and for leaks. */
  const judge = (op: OperationDef, input: Record<string, unknown>, answer: RawAnswer & { body: Json }, target?: { field: InputField; refused: boolean; empty: boolean }) => {
    const what = `${op.name} ${target ? `${target.field.name}=${JSON.stringify(valueAt(input, target.field.path))?.slice(0, 80)}` : ''} -> ${answer.status} ${answer.text.slice(0, 300)}`;
    expect(leaks(answer.text, storageNames), what).toEqual([]);
    expect(answer.status, what).toBeLessThan(500);
    if (answer.status >= 400) expect(answer.headers['content-type'], what).toContain('application/problem+json');
    const predicted = op.input.safeParse(inputAsReceived(op, input));
    if (predicted.success && !target?.refused) return;
    // An empty path segment leaves no route to match: a documented 404 naming the routes.
    if (target?.empty && target.field.location === 'path' && answer.status === 404) return;
    expect(answer.status, what).toBe(400);
    if (target?.refused) {
      const named = (answer.body?.fields ?? []).map((f: { path: string }) => f.path);
      expect(named.some((p: string) => p === target.field.name || p.startsWith(`${target.field.name}.`)), `${what}: fields should name ${target.field.name}`).toBe(true);
    }
  };

  it('answers every operation\'s example without a 5xx (a 404 or 409 where the example names something that is not there)', async () => {
    for (const op of OPERATIONS) {
      const answer = await send(requestFor(op, op.example as Record<string, unknown>));
      judge(op, op.example as Record<string, unknown>, answer);
      expect([200, 202, 404, 409], `${op.name} -> ${answer.status} ${answer.text.slice(0, 200)}`).toContain(answer.status);
    }
  });

  it('names the caption and openItems[].ref when they hold NUL (400 at the gateway, not 500 or 202)', async () => {
    const register = OPERATIONS.find((op) => op.name === 'media.register')!;
    const caption = await send(requestFor(register, withField(register, ['caption'], 'the label\u0000')));
    expect(caption.status).toBe(400);
    expect(caption.body.fields).toEqual([{ path: 'caption', message: expect.stringContaining('NUL') }]);
    const propose = OPERATIONS.find((op) => op.name === 'ledger.proposeCompletion')!;
    const ref = await send(requestFor(propose, withField(propose, ['openItems', 0], { text: 'rotate the key', ref: 'card\u0000-1' })));
    expect(ref.status).toBe(400);
    expect(ref.body.fields).toEqual([{ path: 'openItems.0.ref', message: expect.stringContaining('NUL') }]);
    const surrogate = await send(requestFor(propose, withField(propose, ['summary'], 'done \ud83d')));
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.fields).toEqual([{ path: 'summary', message: expect.stringContaining('surrogate') }]);
  });

  for (const op of OPERATIONS) {
    const fields = inputFields(op);
    it(`${op.name}: every field (${fields.map((f) => f.name).join(', ') || 'none'}) answers hostile values with a 4xx naming it, never a 5xx`, async () => {
      for (const field of fields) {
        const examples = hostileValues(field).map((v) => [v] as [unknown]);
        await fc.assert(
          fc.asyncProperty(randomHostile(field), async (value) => {
            const input = withField(op, field.path, value);
            const received = valueAt(inputAsReceived(op, input), field.path);
            const refused = fieldRefuses(field, received);
            const waits = LONG_POLLS.has(op.name) && !refused && op.input.safeParse(inputAsReceived(op, input)).success;
            const answer = waits ? await sendClamped(requestFor(op, input)) : await send(requestFor(op, input));
            if (answer) judge(op, input, answer, { field, refused, empty: received === '' });
          }),
          // Examples count toward numRuns: every fixed value runs, then RANDOM_RUNS random ones.
          { examples, numRuns: examples.length + RANDOM_RUNS, seed: SEED + fields.indexOf(field), endOnFailure: true },
        );
      }
    });

    it(`${op.name}: unknown fields, __proto__ and constructor are refused by name`, async () => {
      const params = new Set(pathParams(op.http.path));
      for (const extra of ['unknownField', '__proto__', 'constructor', 'a\u0000b', '\ud800']) {
        const input = withField(op, [extra], op.http.method === 'POST' ? { admin: true } : 'x');
        const answer = await send(requestFor(op, input));
        judge(op, input, answer);
        expect(answer.status, `${op.name} +${JSON.stringify(extra)}: ${answer.text}`).toBe(400);
        const named = (answer.body?.fields ?? []).map((f: { path: string }) => f.path);
        if (!params.has(extra) && extra.isWellFormed()) expect(named, `${op.name} +${JSON.stringify(extra)}`).toContain(extra);
      }
    });
  }
});
