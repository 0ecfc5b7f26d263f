/** How a Go server (Ollama) writes JSON and timestamps on the wire. */

let lastMs = 0;
let subMs = 0;

/**
 * A time.Time as Go marshals it: RFC 3339 with up to nine fractional digits,
 * trailing zeros dropped (RFC3339Nano), in UTC as Ollama's handlers use.
 * Sub-millisecond digits are made strictly increasing within a millisecond so
 * successive chunks sort in order, as real ones do.
 */
export function goTimestamp(date: Date = new Date()): string {
  const ms = date.getTime();
  if (ms === lastMs) subMs = Math.min(subMs + 1, 999_999);
  else {
    lastMs = ms;
    subMs = Math.floor(Math.random() * 900_000);
  }
  const iso = date.toISOString(); // 2025-01-01T00:00:00.123Z
  const fraction = `${iso.slice(20, 23)}${String(subMs).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}

/**
 * JSON.stringify with Go's json.Marshal escaping: `<`, `>`, `&`, U+2028 and
 * U+2029 become `\u003c`-style escapes. Parses to the same value.
 */
export function goJsonMarshal(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
