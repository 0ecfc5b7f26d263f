/**
 * How Go's encoding/json (as used by Ollama through gin's ShouldBindJSON)
 * answers a request body: the error text a client sees in `{"error": ...}`.
 * Reproduced so the Ollama test server fails the way the real one does.
 */

/** Field types of the Go request structs that matter for decoding errors. */
export type GoType =
  | { kind: 'string' }
  | { kind: 'bool' }
  | { kind: 'int' }
  | { kind: 'any' }
  | { kind: 'bytes'; name: string }
  | { kind: 'duration' }
  | { kind: 'map'; name: string }
  | { kind: 'slice'; name: string; elem: GoType }
  | { kind: 'struct'; name: string; fields: Record<string, GoType> };

/** The outcome of decoding one request body the way Go's json.Decoder does. */
export type GoDecodeResult =
  | { ok: true; value: unknown }
  /** `eof`: the body was empty or only whitespace (Ollama: "missing request body"). */
  | { ok: false; eof: boolean; message: string };

/**
 * Decodes the first JSON value in `text` into `target`. Like json.Decoder,
 * bytes after the first complete value are not read.
 */
export function goDecode(text: string, target: GoType): GoDecodeResult {
  const bytes = Buffer.from(text, 'utf8');
  const scan = scanFirstValue(bytes);
  if (scan.kind === 'eof') return { ok: false, eof: true, message: 'EOF' };
  if (scan.kind === 'error') return { ok: false, eof: false, message: scan.message };
  const value: unknown = JSON.parse(bytes.subarray(0, scan.end).toString('utf8'));
  const typeError = checkType(value, target, undefined, []);
  return typeError ? { ok: false, eof: false, message: typeError } : { ok: true, value };
}

type ScanResult = { kind: 'eof' } | { kind: 'error'; message: string } | { kind: 'ok'; end: number };

class SyntaxFailure extends Error {}

function scanFirstValue(b: Buffer): ScanResult {
  let i = 0;
  const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  const skipSpace = (): void => {
    while (isSpace(b[i])) i++;
  };
  // Go's json.Decoder turns running out of input inside a value into
  // io.ErrUnexpectedEOF, and a bad byte into a SyntaxError naming it.
  const fail = (context: string): never => {
    const c = b[i];
    if (c === undefined) throw new SyntaxFailure('unexpected EOF');
    throw new SyntaxFailure(`invalid character ${quoteChar(c)} ${context}`);
  };
  const expect = (ch: string, context: string): void => {
    if (b[i] !== ch.charCodeAt(0)) fail(context);
    i++;
  };
  const literal = (word: string): void => {
    i++;
    for (const ch of word.slice(1)) {
      if (b[i] !== ch.charCodeAt(0)) fail(`in literal ${word} (expecting ${quoteChar(ch.charCodeAt(0))})`);
      i++;
    }
  };
  const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
  const number = (): void => {
    if (b[i] === 0x2d) {
      i++;
      if (!isDigit(b[i])) fail('in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (isDigit(b[i])) i++;
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i])) fail('after decimal point in numeric literal');
      while (isDigit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (!isDigit(b[i])) fail('in exponent of numeric literal');
      while (isDigit(b[i])) i++;
    }
  };
  const string = (): void => {
    i++;
    for (;;) {
      const c = b[i];
      if (c === undefined) fail('in string literal');
      else if (c === 0x22) {
        i++;
        return;
      } else if (c === 0x5c) {
        i++;
        const e = b[i];
        if (e === 0x75) {
          i++;
          for (let k = 0; k < 4; k++) {
            const h = b[i];
            if (h === undefined || !/[0-9a-fA-F]/.test(String.fromCharCode(h))) fail('in \\u hexadecimal character escape');
            i++;
          }
        } else if (e !== undefined && '"\\/bfnrt'.includes(String.fromCharCode(e))) i++;
        else fail('in string escape code');
      } else if (c < 0x20) fail('in string literal');
      else i++;
    }
  };
  const value = (): void => {
    skipSpace();
    const c = b[i];
    if (c === 0x7b) {
      i++;
      skipSpace();
      if (b[i] === 0x7d) {
        i++;
        return;
      }
      for (;;) {
        skipSpace();
        if (b[i] !== 0x22) fail('looking for beginning of object key string');
        string();
        skipSpace();
        expect(':', 'after object key');
        value();
        skipSpace();
        if (b[i] === 0x2c) {
          i++;
          continue;
        }
        expect('}', 'after object key:value pair');
        return;
      }
    } else if (c === 0x5b) {
      i++;
      skipSpace();
      if (b[i] === 0x5d) {
        i++;
        return;
      }
      for (;;) {
        value();
        skipSpace();
        if (b[i] === 0x2c) {
          i++;
          continue;
        }
        expect(']', 'after array element');
        return;
      }
    } else if (c === 0x22) string();
    else if (c === 0x2d || isDigit(c)) number();
    else if (c === 0x74) literal('true');
    else if (c === 0x66) literal('false');
    else if (c === 0x6e) literal('null');
    else fail('looking for beginning of value');
  };

  skipSpace();
  if (i >= b.length) return { kind: 'eof' };
  try {
    value();
    return { kind: 'ok', end: i };
  } catch (error) {
    if (error instanceof SyntaxFailure) return { kind: 'error', message: error.message };
    throw error;
  }
}

/** Go's scanner quoteChar: `'x'`, with `'\''` and `'"'` special-cased. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const quoted = goQuote(String.fromCharCode(c));
  return `'${quoted.slice(1, -1)}'`;
}

/** Go's `%q` / strconv.Quote for the strings the test server formats. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function jsonKind(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

function goTypeName(t: GoType): string {
  switch (t.kind) {
    case 'string':
    case 'bool':
    case 'int':
      return t.kind;
    case 'any':
      return 'interface {}';
    case 'duration':
      return 'api.Duration';
    default:
      return t.name;
  }
}

/**
 * The first error Go's Unmarshal would save while storing `value` into `t`.
 * Go keeps going after a type error and reports the first one, with the
 * innermost struct's name and the dotted JSON field path.
 */
function checkType(value: unknown, t: GoType, struct: string | undefined, path: string[]): string | undefined {
  // null leaves a Go value at its zero value: never an error.
  if (value === null || t.kind === 'any') return undefined;
  const mismatch = (): string =>
    struct === undefined
      ? `json: cannot unmarshal ${jsonKind(value)} into Go value of type ${goTypeName(t)}`
      : `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path.join('.')} of type ${goTypeName(t)}`;
  switch (t.kind) {
    case 'string':
      return typeof value === 'string' ? undefined : mismatch();
    case 'bool':
      return typeof value === 'boolean' ? undefined : mismatch();
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : mismatch();
    case 'map':
      return typeof value === 'object' && !Array.isArray(value) ? undefined : mismatch();
    case 'bytes':
      // A []byte field takes a base64 string (StdEncoding); a bad one stops
      // with the decoder's CorruptInputError text.
      if (typeof value !== 'string') return mismatch();
      return goBase64Error(value);
    case 'duration':
      return checkDuration(value);
    case 'slice': {
      if (!Array.isArray(value)) return mismatch();
      for (const item of value) {
        const err = checkType(item, t.elem, struct, path);
        if (err) return err;
      }
      return undefined;
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return mismatch();
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        // Go matches field names case-insensitively; unknown keys are ignored.
        const field = Object.entries(t.fields).find(([name]) => name.toLowerCase() === key.toLowerCase());
        if (!field) continue;
        const err = checkType(item, field[1], t.name.replace(/^api\./, ''), [...path, field[0]]);
        if (err) return err;
      }
      return undefined;
    }
  }
}

// Ollama's api.Duration.UnmarshalJSON: a number (seconds) or a Go duration string.
function checkDuration(value: unknown): string | undefined {
  if (typeof value === 'number') return undefined;
  if (typeof value === 'string') return parseGoDuration(value) === undefined ? `time: invalid duration ${goQuote(value)}` : undefined;
  return `Unsupported type: '${typeof value === 'boolean' ? 'bool' : Array.isArray(value) ? '[]interface {}' : 'map[string]interface {}'}'`;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** Go's time.ParseDuration, in milliseconds; undefined when Go would reject it. */
export function parseGoDuration(s: string): number | undefined {
  if (s === '0' || s === '+0' || s === '-0') return 0;
  const match = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(s);
  if (!match) return undefined;
  let total = 0;
  for (const part of (match[2] ?? '').matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(part[1]) * (DURATION_UNITS[part[2] ?? 's'] ?? 0);
  }
  return match[1] === '-' ? -total : total;
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Go's base64.StdEncoding.Decode verdict: undefined when valid, else
 * `illegal base64 data at input byte N` with Go's N (a byte offset into the
 * UTF-8 string; `\r` and `\n` are skipped, padding is required).
 */
export function goBase64Error(s: string): string | undefined {
  const src = Buffer.from(s, 'utf8');
  const corrupt = (n: number): string => `illegal base64 data at input byte ${n}`;
  const isNewline = (c: number | undefined): boolean => c === 0x0a || c === 0x0d;
  let si = 0;
  // Mirrors decodeQuantum: four symbols per quantum, '=' ends the input.
  while (si < src.length) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return undefined;
        return corrupt(si - j);
      }
      const c = src[si] as number;
      si++;
      if (BASE64_ALPHABET.includes(String.fromCharCode(c)) && c < 0x80) continue;
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (c !== 0x3d) return corrupt(si - 1);
      // Padding: valid only as the 3rd or 4th symbol of the last quantum.
      if (j === 0 || j === 1) return corrupt(si - 1);
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) return corrupt(src.length);
        if (src[si] !== 0x3d) return corrupt(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      return si < src.length ? corrupt(si) : undefined;
    }
  }
  return undefined;
}
