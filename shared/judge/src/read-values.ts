/**
 * Values a claim and an observation can state, normalised so that the same
 * value written two ways compares equal: 91.4 % and 0.914, "12-hour" and
 * "12 h", 5 minutes and 300 s, 1.2 t and 1,200 kg, 12.4k and 12,412, 16 and
 * 16.2, 14 April 2025 and 2025-04-14, 10:00 PM and 22:00, @8.8.8.8 and 8.8.8.8,
 * "LH 401" and LH401. Only the shape of values and the units of measurement
 * are known here, never a task's vocabulary.
 */

/** A normalised value; `k` is its kind. */
export type Value =
  /** A number: `n` in the base unit of its dimension, `step` the precision it was written with (in that unit). */
  | { k: 'num'; n: number; step: number; dim?: Dimension; pct?: true; plain?: true }
  /** A dotted version: 3.8.0, v2.1, 16.2.1. */
  | { k: 'ver'; parts: number[] }
  /** A calendar date, as far as it was written; `wd` a weekday named (0 Sunday … 6 Saturday). */
  | { k: 'date'; y?: number; m?: number; d?: number; wd?: number }
  /** A time of day, in minutes after midnight. */
  | { k: 'time'; min: number }
  /** An identifier, host, address, file or hashtag: lower-cased, without separators. */
  | { k: 'id'; key: string }
  /** A quoted string, lower-cased, spaces collapsed. */
  | { k: 'quote'; text: string };

export type Dimension = 'time' | 'size' | 'mass' | 'length' | 'money' | 'temp' | 'count' | 'volume' | 'pressure';

const UNITS: Record<string, [Dimension, number]> = {
  ms: ['time', 0.001], s: ['time', 1], sec: ['time', 1], secs: ['time', 1], second: ['time', 1], seconds: ['time', 1],
  m: ['length', 1], min: ['time', 60], mins: ['time', 60], minute: ['time', 60], minutes: ['time', 60],
  h: ['time', 3600], hr: ['time', 3600], hrs: ['time', 3600], hour: ['time', 3600], hours: ['time', 3600],
  d: ['time', 86400], day: ['time', 86400], days: ['time', 86400], week: ['time', 604800], weeks: ['time', 604800],
  b: ['size', 1], byte: ['size', 1], bytes: ['size', 1], kb: ['size', 1e3], mb: ['size', 1e6], gb: ['size', 1e9], tb: ['size', 1e12],
  kib: ['size', 1024], mib: ['size', 1048576], gib: ['size', 1073741824],
  mg: ['mass', 0.001], g: ['mass', 1], kg: ['mass', 1e3], t: ['mass', 1e6], tonne: ['mass', 1e6], tonnes: ['mass', 1e6], ton: ['mass', 1e6], tons: ['mass', 1e6],
  mm: ['length', 0.001], cm: ['length', 0.01], km: ['length', 1000],
  usd: ['money', 1], eur: ['money', 1], gbp: ['money', 1], '$': ['money', 1], '€': ['money', 1], '£': ['money', 1],
  '°c': ['temp', 1], '°f': ['temp', 1],
  l: ['volume', 1], litre: ['volume', 1], litres: ['volume', 1], liter: ['volume', 1], liters: ['volume', 1], ml: ['volume', 0.001], 'm³': ['volume', 1000], m3: ['volume', 1000],
  bar: ['pressure', 1e5], mbar: ['pressure', 100], pa: ['pressure', 1], kpa: ['pressure', 1e3], psi: ['pressure', 6894.757],
};

/** A unit word or symbol, as the dimension and factor to its base unit. */
export function unitOf(word: string): [Dimension, number] | undefined {
  return UNITS[word.toLowerCase()];
}

const MAGNITUDE: Record<string, number> = { k: 1e3, m: 1e6, b: 1e9, bn: 1e9 };

const NUMBER_WORDS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  twenty: 20, thirty: 30, forty: 40, fifty: 50, hundred: 100,
};

export function numberWord(word: string): number | undefined {
  return NUMBER_WORDS[word.toLowerCase()];
}

export const MONTHS: Record<string, number> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7, jul: 7,
  august: 8, aug: 8, september: 9, sep: 9, sept: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
};

/** Parses "12,480", "4.2", "-0.4", "12.4k", "$152k" into a number and the step of its last written digit. */
export function parseNumber(raw: string): { n: number; step: number; magnitude: number } | undefined {
  const m = /^[$€£]?([+-]?\d[\d,]*(?:\.\d+)?)(k|m|bn|b)?$/i.exec(raw);
  if (!m) return undefined;
  const digits = (m[1] as string).replace(/,/g, '');
  const n = Number(digits);
  if (!Number.isFinite(n)) return undefined;
  const decimals = digits.includes('.') ? (digits.split('.')[1] as string).length : 0;
  const magnitude = m[2] ? (MAGNITUDE[m[2].toLowerCase()] ?? 1) : 1;
  return { n: n * magnitude, step: 10 ** -decimals * magnitude, magnitude };
}

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Whether an observation's number shows the claim's. A claim written less
 * precisely than the observation means the observation rounded to the
 * claim's precision (438 MB for 437.9 MB, 12.4k for 12,412); a plain number
 * names every value it starts (16 for 16.2). A percentage equals the fraction
 * it stands for (91.4 % and 0.914).
 */
export function numbersMatch(claim: Extract<Value, { k: 'num' }>, seen: Extract<Value, { k: 'num' }>): boolean {
  let c = claim.n;
  let s = seen.n;
  let step = claim.step;
  if (claim.pct && !seen.pct) {
    // 0.914 for 91.4 %: the fraction, written with fewer digits.
    if (Math.abs(s) > 1) return false;
    s *= 100;
  } else if (!claim.pct && seen.pct) {
    if (Math.abs(c) > 1) return false;
    c *= 100;
    step *= 100;
  }
  if (claim.dim && seen.dim && claim.dim !== seen.dim && !claim.pct && !seen.pct) return false;
  if (close(c, s)) return true;
  if (claim.plain && seen.plain) return s >= c - 1e-9 && s < c + step - 1e-9 && c >= 0;
  const rounded = Math.round(s / step) * step;
  return close(rounded, c);
}

/**
 * A claimed version is the seen one, or names its release line: a major
 * version alone ("Postgres 15") is any release of it ("15.4"); a version that
 * writes a minor part ("v2.0") names that release, so only zero parts may
 * follow it ("2.0.0", not "2.0.1").
 */
export function versionsMatch(claim: number[], seen: number[]): boolean {
  if (claim.length > seen.length || !claim.every((p, i) => p === seen[i])) return false;
  return claim.length === 1 || seen.slice(claim.length).every((p) => p === 0);
}

/** The weekday of a date: the one it names, or the one its year, month and day fall on. */
function weekdayOf(date: Extract<Value, { k: 'date' }>): number | undefined {
  if (date.wd !== undefined) return date.wd;
  if (date.y === undefined || date.m === undefined || date.d === undefined) return undefined;
  return new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay();
}

export const WEEKDAYS: Record<string, number> = { sunday: 0, monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6 };

/** Whether an observation's value shows the claim's value. */
export function valuesMatch(claim: Value, seen: Value): boolean {
  switch (claim.k) {
    case 'num':
      if (seen.k === 'num') return numbersMatch(claim, seen);
      // "Node 20" for 20.11.1: a whole number names a version line.
      if (seen.k === 'ver') return claim.plain === true && Number.isInteger(claim.n) && versionsMatch([claim.n], seen.parts);
      if (seen.k === 'date') return claim.plain === true && seen.y === claim.n;
      if (seen.k === 'id') return claim.plain === true && seen.key === String(claim.n);
      return false;
    case 'ver':
      if (seen.k === 'ver') return versionsMatch(claim.parts, seen.parts);
      if (seen.k === 'num' && seen.plain && claim.parts.length === 2) return seen.n === Number(claim.parts.join('.'));
      return false;
    case 'date':
      if (seen.k !== 'date') return seen.k === 'num' && seen.plain === true && claim.m === undefined && claim.d === undefined && claim.wd === undefined && claim.y === seen.n;
      if (claim.wd !== undefined && claim.wd !== weekdayOf(seen)) return false;
      if (claim.y === undefined && claim.m === undefined && claim.d === undefined) return claim.wd !== undefined;
      return (claim.y === undefined || claim.y === seen.y) && (claim.m === undefined || claim.m === seen.m) && (claim.d === undefined || claim.d === seen.d);
    case 'time':
      return seen.k === 'time' && seen.min === claim.min;
    case 'id':
      if (seen.k === 'id') {
        if (seen.key === claim.key) return true;
        // A long identifier with or without its label: "doi:10.1038/s41586-019-1234-5" and "10.1038/s41586-019-1234-5".
        const [short, long] = seen.key.length <= claim.key.length ? [seen.key, claim.key] : [claim.key, seen.key];
        return short.length >= 10 && (long.endsWith(short) || long.startsWith(short));
      }
      return seen.k === 'num' && seen.plain === true && String(seen.n) === claim.key;
    case 'quote':
      return seen.k === 'quote' && seen.text === claim.text;
  }
}

/** The value as a person reads it, for reasons and missing details. */
export function describeValue(value: Value, raw: string): string {
  return value.k === 'quote' ? `"${raw}"` : raw;
}
