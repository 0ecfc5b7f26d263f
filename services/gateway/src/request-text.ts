import { BadInputError, textProblem, type FieldIssue, type OperationDef } from '@vouch/contracts';

/**
 * Text in a request that no store can hold, caught where the request is
 * read: a path parameter or query value whose percent-encoding is not UTF-8
 * (a lone surrogate sent as bytes), and JSON object keys holding NUL or a lone
 * surrogate. Each becomes a 400 naming the field, like any other bad value.
 */

const NOT_UTF8 = 'is not valid percent-encoded UTF-8: encode the text as UTF-8 (a lone surrogate or a stray % cannot be decoded)';

function decode(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The `query parser` of the gateway's express app: like the `simple` parser
 * (repeated keys become arrays, no nesting), but a key or value that does not
 * decode as UTF-8 is refused naming it, where querystring would silently turn
 * it into U+FFFD. The object has no prototype, so `__proto__` is an ordinary
 * key that validation refuses as unknown.
 */
export function parseQueryStrict(query: string | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  if (!query) return out;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = (eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
    const rawValue = (eq === -1 ? '' : pair.slice(eq + 1)).replace(/\+/g, ' ');
    const key = decode(rawKey);
    if (key === undefined) throw new BadInputError(`a query parameter name ${NOT_UTF8}`, [{ path: '(query)', message: `parameter name ${NOT_UTF8}` }]);
    const value = decode(rawValue);
    if (value === undefined) throw new BadInputError(`query parameter ${key} ${NOT_UTF8}`, [{ path: key, message: NOT_UTF8 }]);
    const prior = out[key];
    out[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}

/**
 * The path parameters of a request that do not decode, named after the
 * route of the operation the path matches. Express's router refuses such a
 * path before any route runs, with no parameter name; this finds it.
 */
export function undecodablePathParams(operations: readonly OperationDef[], method: string, rawPath: string): FieldIssue[] {
  const segments = rawPath.split('/');
  for (const op of operations) {
    if (op.http.method !== method) continue;
    const template = op.http.path.split('/');
    if (template.length !== segments.length) continue;
    const issues: FieldIssue[] = [];
    let matches = true;
    for (let i = 0; i < template.length && matches; i++) {
      const part = template[i]!;
      const given = segments[i]!;
      if (part.startsWith(':')) {
        if (decode(given) === undefined) issues.push({ path: part.slice(1), message: NOT_UTF8 });
      } else if (part !== given) matches = false;
    }
    if (matches && issues.length) return issues;
  }
  return [];
}

/** Keys of a parsed JSON body that hold text no store can keep, as field issues (at most `limit`). */
export function badKeyIssues(body: unknown, limit = 20): FieldIssue[] {
  const issues: FieldIssue[] = [];
  // Iterative, so a deeply nested body cannot exhaust the stack.
  const stack: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  while (stack.length && issues.length < limit) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      const problem = Array.isArray(value) ? undefined : textProblem(key);
      if (problem) issues.push({ path: at, message: `the field name ${problem}` });
      stack.push({ value: child, path: at });
    }
  }
  return issues;
}
