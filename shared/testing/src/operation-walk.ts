import { request as httpRequest } from 'node:http';
import type { z } from 'zod';
import { pathParams, type OperationDef } from '@vouch/contracts';

/**
 * Walking the operation table as a client would: every input field of an
 * operation (path parameters, query, body, nested array items), an input
 * with one field replaced, and the HTTP request the gateway receives for an
 * input. Suites that must cover every operation (hostile-input fuzzing,
 * tenant isolation) derive their cases from here and from each operation's
 * `example`, so a new operation joins them without more work.
 */

/** Where a field travels in the request. */
export type FieldLocation = 'path' | 'query' | 'body';
export type FieldKind = 'string' | 'number' | 'boolean' | 'enum' | 'literal' | 'object' | 'array' | 'other';
/** A path into an input: object keys and array indexes. */
export type FieldPath = ReadonlyArray<string | number>;

/** One input field of an operation, with what its schema says about it. */
export interface InputField {
  path: FieldPath;
  /** The dotted path the gateway names in a problem's `fields` (`items.0.summary`). */
  name: string;
  location: FieldLocation;
  kind: FieldKind;
  /** The field's schema with optional, default and nullable taken off. */
  schema: z.ZodType;
  /** Whether the field may be left out (optional or defaulted). */
  optional: boolean;
  /** Whether null is a value the field accepts (`.nullable()`: e.g. null to clear it). */
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  int?: boolean;
  /** z.coerce.number(): strings are converted, as query strings must be. */
  coerce?: boolean;
  /** The allowed values of an enum or literal. */
  options?: readonly unknown[];
}

interface ZodDefLike {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  coerce?: boolean;
  values?: readonly unknown[];
}

function defOf(schema: z.ZodType): ZodDefLike {
  return (schema as unknown as { def: ZodDefLike }).def;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** The schema under optional/default/nullable (and the input side of a pipe). */
export function unwrapSchema(schema: z.ZodType): { schema: z.ZodType; optional: boolean; nullable: boolean } {
  let current = schema;
  let optional = false;
  let nullable = false;
  for (let i = 0; i < 20; i++) {
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) {
      if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault') optional = true;
      if (def.type === 'nullable') nullable = true;
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in) {
      current = def.in;
    } else break;
  }
  return { schema: current, optional, nullable };
}

function kindOf(type: string): FieldKind {
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'enum' || type === 'literal' || type === 'object' || type === 'array') return type;
  return 'other';
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  return (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
}

/** Every input field of an operation, depth first; array items appear at index 0. */
export function inputFields(op: OperationDef): InputField[] {
  const params = new Set(pathParams(op.http.path));
  const fromBody = op.http.method === 'POST';
  const fields: InputField[] = [];
  const visit = (raw: z.ZodType, path: FieldPath, optionalAbove: boolean) => {
    const { schema, optional, nullable } = unwrapSchema(raw);
    const def = defOf(schema);
    const top = String(path[0]);
    const bag = schema as unknown as { minLength?: number | null; maxLength?: number | null; minValue?: number | null; maxValue?: number | null; isInt?: boolean; options?: readonly unknown[] };
    const field: InputField = {
      path,
      name: path.map(String).join('.'),
      location: params.has(top) ? 'path' : fromBody ? 'body' : 'query',
      kind: kindOf(def.type),
      schema,
      optional: optional || optionalAbove,
      ...(nullable ? { nullable } : {}),
    };
    if (def.type === 'string') {
      if (typeof bag.minLength === 'number') field.minLength = bag.minLength;
      if (typeof bag.maxLength === 'number') field.maxLength = bag.maxLength;
    }
    if (def.type === 'number') {
      if (typeof bag.minValue === 'number' && Number.isFinite(bag.minValue)) field.min = bag.minValue;
      if (typeof bag.maxValue === 'number' && Number.isFinite(bag.maxValue)) field.max = bag.maxValue;
      field.int = bag.isInt === true;
      field.coerce = def.coerce === true;
    }
    if (def.type === 'enum') field.options = bag.options ?? [];
    if (def.type === 'literal') field.options = def.values ?? [];
    fields.push(field);
    if (def.type === 'object') for (const [key, child] of Object.entries(shapeOf(schema) ?? {})) visit(child, [...path, key], false);
    if (def.type === 'array' && def.element) visit(def.element, [...path, 0], false);
  };
  for (const [key, child] of Object.entries(shapeOf(op.input) ?? {})) visit(child, [key], false);
  return fields;
}

/** Marks a field to leave out in withField. */
export const OMIT: unique symbol = Symbol('omit');

/**
 * A small valid value for a schema, or undefined when none is easy to find
 * (a string with a pattern none of the candidates match). Used to build the
 * containers around a field the example leaves out.
 */
export function sampleValue(raw: z.ZodType): unknown {
  const { schema } = unwrapSchema(raw);
  const def = defOf(schema);
  const ok = (v: unknown) => schema.safeParse(v).success;
  switch (def.type) {
    case 'string': {
      const bag = schema as unknown as { minLength?: number | null };
      const candidates = ['x', 'x'.repeat(Math.max(1, bag.minLength ?? 1)), 'todo-1', 'img-1', 'run-1', '2026-01-01T00:00:00Z', 'ledger-critic.j0f3a9c2d4e5b6a7980112233445566778'];
      return candidates.find(ok);
    }
    case 'number':
      return [1, 0, (schema as unknown as { minValue?: number }).minValue].find(ok);
    case 'boolean':
      return true;
    case 'enum':
      return (schema as unknown as { options: readonly unknown[] }).options[0];
    case 'literal':
      return def.values?.[0];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(shapeOf(schema) ?? {})) {
        if (unwrapSchema(child).optional) continue;
        const v = sampleValue(child);
        if (v !== undefined) out[key] = v;
      }
      return out;
    }
    case 'array': {
      const v = def.element ? sampleValue(def.element) : undefined;
      return v === undefined ? [] : [v];
    }
    default:
      return undefined;
  }
}

/** Sets an own, enumerable property, even one named `__proto__`. */
function put(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) put(out, k, cloneJson(v));
    return out as T;
  }
  return value;
}

/** The schema of the field at `path` under an object schema, if the schema has one there. */
function schemaAt(root: z.ZodType, path: FieldPath): z.ZodType | undefined {
  let current: z.ZodType | undefined = root;
  for (const key of path) {
    if (!current) return undefined;
    const { schema } = unwrapSchema(current);
    const def = defOf(schema);
    current = def.type === 'object' ? shapeOf(schema)?.[String(key)] : def.type === 'array' ? def.element : undefined;
  }
  return current;
}

/**
 * The operation's example (or `base`) with the field at `path` set to `value`
 * (OMIT leaves it out). Containers the base lacks are built from valid
 * samples, so only the named field is off. Keys such as `__proto__` become
 * own properties, as JSON.parse makes them.
 */
export function withField(op: OperationDef, path: FieldPath, value: unknown, base: unknown = op.example): Record<string, unknown> {
  const root = cloneJson((base ?? {}) as Record<string, unknown>);
  let container: Record<string | number, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    let next = container[key];
    if (next === null || typeof next !== 'object') {
      const sample = schemaAt(op.input, path.slice(0, i + 1));
      next = sample ? sampleValue(sample) : undefined;
      if (next === null || typeof next !== 'object') next = typeof path[i + 1] === 'number' ? [] : {};
      put(container, key, next);
    }
    container = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === OMIT) delete container[last];
  else put(container, last, value);
  return root;
}

/** An HTTP request for an operation, as a client sends it. */
export interface OperationRequest {
  method: OperationDef['http']['method'];
  /** Path and query, percent-encoded. */
  path: string;
  /** The JSON body of a POST. */
  body?: string;
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/**
 * Percent-encodes every character but the unreserved ones, as UTF-8. A lone
 * surrogate, which UTF-8 cannot hold, is sent as the three bytes WTF-8 gives
 * it (encodeURIComponent would throw), so the gateway sees what a careless
 * client really sends: invalid UTF-8.
 */
export function percentEncode(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const ch = value[i]!;
    if (unit < 0x80 && UNRESERVED.test(ch)) {
      out += ch;
      continue;
    }
    let bytes: number[];
    const cp = value.codePointAt(i)!;
    if (cp > 0xffff) {
      bytes = [...Buffer.from(String.fromCodePoint(cp), 'utf8')];
      i += 1;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
    } else {
      bytes = [...Buffer.from(ch, 'utf8')];
    }
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** How a value reads as one path segment or query value. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The request the gateway receives for `input`: path parameters in the
 * path, the other fields in the query (GET, DELETE; arrays as repeated keys)
 * or as the JSON body (POST).
 */
export function requestFor(op: OperationDef, input: Record<string, unknown>): OperationRequest {
  const params = new Set(pathParams(op.http.path));
  const path = op.http.path.replace(/:([A-Za-z][A-Za-z0-9]*)/g, (_m, name: string) => percentEncode(asText(input[name])));
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!params.has(k)) put(rest, k, v);
  if (op.http.method === 'POST') return { method: op.http.method, path, body: JSON.stringify(rest) };
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(rest)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) pairs.push(`${percentEncode(k)}=${percentEncode(asText(item))}`);
  }
  return { method: op.http.method, path: pairs.length ? `${path}?${pairs.join('&')}` : path };
}

/**
 * What the gateway's validation sees for `input` after the trip through
 * HTTP: path and query values arrive as strings (repeated keys as arrays),
 * body values as JSON gives them. Parse it with `op.input` to predict the
 * answer.
 */
export function inputAsReceived(op: OperationDef, input: Record<string, unknown>): Record<string, unknown> {
  if (op.http.method === 'POST') {
    const params = new Set(pathParams(op.http.path));
    const out = JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
    for (const name of params) put(out, name, asText(input[name]));
    return out;
  }
  const params = new Set(pathParams(op.http.path));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    if (!Array.isArray(v) || params.has(k)) put(out, k, asText(v));
    // A query key given once is a string, twice an array, never at all absent.
    else if (v.length === 1) put(out, k, asText(v[0]));
    else if (v.length > 1) put(out, k, v.map(asText));
  }
  return out;
}

/** An answer: status, headers and the body as text. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}


/**
 * Sends a request with node:http, byte for byte: unlike fetch it leaves
 * `..` segments and invalid percent-encodings as they are. Aborting `signal`
 * closes the connection, as a caller that gives up does, and rejects.
 */
export function sendRequest(baseUrl: string, req: OperationRequest, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    const r = httpRequest(
      {
        agent: false,
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: { ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}), ...headers },
        ...(signal ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}
