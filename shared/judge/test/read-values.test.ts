import { describe, expect, it } from 'vitest';
import { describeValue, MONTHS, numbersMatch, numberWord, parseNumber, unitOf, valuesMatch, versionsMatch, WEEKDAYS, type Value } from '../src/read-values.js';

/** The values reader on its own: every unit, word and comparison, each with the case it must refuse. */

const num = (n: number, extra: Partial<Extract<Value, { k: 'num' }>> = {}): Extract<Value, { k: 'num' }> => ({ k: 'num', n, step: 1, ...extra });

describe('units', () => {
  // What one of each unit is in its dimension's base unit (seconds, bytes, grams, metres, litres, pascals; money and temperature as written).
  const table: Array<[string, string, number]> = [
    ['ms', 'time', 0.001], ['s', 'time', 1], ['sec', 'time', 1], ['secs', 'time', 1], ['second', 'time', 1], ['seconds', 'time', 1],
    ['min', 'time', 60], ['mins', 'time', 60], ['minute', 'time', 60], ['minutes', 'time', 60],
    ['h', 'time', 3600], ['hr', 'time', 3600], ['hrs', 'time', 3600], ['hour', 'time', 3600], ['hours', 'time', 3600],
    ['d', 'time', 86400], ['day', 'time', 86400], ['days', 'time', 86400], ['week', 'time', 604800], ['weeks', 'time', 604800],
    ['b', 'size', 1], ['byte', 'size', 1], ['bytes', 'size', 1], ['kb', 'size', 1e3], ['mb', 'size', 1e6], ['gb', 'size', 1e9], ['tb', 'size', 1e12],
    ['kib', 'size', 1024], ['mib', 'size', 1048576], ['gib', 'size', 1073741824],
    ['mg', 'mass', 0.001], ['g', 'mass', 1], ['kg', 'mass', 1e3], ['t', 'mass', 1e6], ['tonne', 'mass', 1e6], ['tonnes', 'mass', 1e6], ['ton', 'mass', 1e6], ['tons', 'mass', 1e6],
    ['m', 'length', 1], ['mm', 'length', 0.001], ['cm', 'length', 0.01], ['km', 'length', 1000],
    ['usd', 'money', 1], ['eur', 'money', 1], ['gbp', 'money', 1], ['$', 'money', 1], ['€', 'money', 1], ['£', 'money', 1],
    ['°c', 'temp', 1], ['°f', 'temp', 1],
    ['l', 'volume', 1], ['litre', 'volume', 1], ['litres', 'volume', 1], ['liter', 'volume', 1], ['liters', 'volume', 1], ['ml', 'volume', 0.001], ['m³', 'volume', 1000], ['m3', 'volume', 1000],
    ['bar', 'pressure', 1e5], ['mbar', 'pressure', 100], ['pa', 'pressure', 1], ['kpa', 'pressure', 1e3], ['psi', 'pressure', 6894.757],
  ];

  it.each(table)('%s is %s × %d', (unit, dim, factor) => {
    expect(unitOf(unit)).toEqual([dim, factor]);
    expect(unitOf(unit.toUpperCase())).toEqual([dim, factor]);
  });

  it('knows no other word', () => {
    expect(unitOf('pages')).toBeUndefined();
    expect(unitOf('')).toBeUndefined();
  });
});

describe('words for numbers, months and days', () => {
  it('reads number words in any case', () => {
    const words = { zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, twenty: 20, thirty: 30, forty: 40, fifty: 50, hundred: 100 };
    for (const [word, n] of Object.entries(words)) {
      expect(numberWord(word)).toBe(n);
      expect(numberWord(word.toUpperCase())).toBe(n);
    }
    expect(numberWord('dozen')).toBeUndefined();
  });

  it('names every month, short and long, and every weekday', () => {
    expect(MONTHS).toEqual({
      january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7, jul: 7,
      august: 8, aug: 8, september: 9, sep: 9, sept: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
    });
    expect(WEEKDAYS).toEqual({ sunday: 0, monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6 });
  });
});

describe('parseNumber', () => {
  it('reads grouping, signs, decimals, currency signs and magnitudes with the step of the last digit', () => {
    expect(parseNumber('12,480')).toEqual({ n: 12480, step: 1, magnitude: 1 });
    expect(parseNumber('-0.45')).toEqual({ n: -0.45, step: 0.01, magnitude: 1 });
    expect(parseNumber('+3')).toEqual({ n: 3, step: 1, magnitude: 1 });
    expect(parseNumber('$152k')).toEqual({ n: 152000, step: 1000, magnitude: 1000 });
    expect(parseNumber('12.4K')).toEqual({ n: 12400, step: 100, magnitude: 1000 });
    expect(parseNumber('3m')).toEqual({ n: 3e6, step: 1e6, magnitude: 1e6 });
    expect(parseNumber('2bn')).toEqual({ n: 2e9, step: 1e9, magnitude: 1e9 });
    expect(parseNumber('4b')).toEqual({ n: 4e9, step: 1e9, magnitude: 1e9 });
  });

  it('reads nothing that is not a number', () => {
    for (const raw of ['', 'abc', '12x', '1.2.3', ',5', '12 000', 'k12']) expect(parseNumber(raw), raw).toBeUndefined();
  });
});

describe('numbersMatch', () => {
  it('equal numbers match, and numbers that differ past the last written digit do not', () => {
    expect(numbersMatch(num(1482330), num(1482330))).toBe(true);
    expect(numbersMatch(num(1482330), num(1482331))).toBe(false);
    expect(numbersMatch(num(-3), num(3))).toBe(false);
  });

  it('a claim written less precisely is the observation rounded: 438 for 437.9, 12.4k for 12,412; not 438 for 436.9', () => {
    expect(numbersMatch(num(438), num(437.9, { step: 0.1 }))).toBe(true);
    expect(numbersMatch(num(438), num(436.9, { step: 0.1 }))).toBe(false);
    expect(numbersMatch(num(12400, { step: 100 }), num(12412))).toBe(true);
    expect(numbersMatch(num(12400, { step: 100 }), num(12460))).toBe(false);
  });

  it('a plain number names the values it starts: 16 for 16.2, not for 17.0 or 15.9, and never a negative claim', () => {
    expect(numbersMatch(num(16, { plain: true }), num(16.2, { step: 0.1, plain: true }))).toBe(true);
    expect(numbersMatch(num(16, { plain: true }), num(16.99, { step: 0.01, plain: true }))).toBe(true);
    expect(numbersMatch(num(16, { plain: true }), num(17, { plain: true }))).toBe(false);
    expect(numbersMatch(num(16, { plain: true }), num(15.9, { step: 0.1, plain: true }))).toBe(false);
    expect(numbersMatch(num(-16, { plain: true }), num(-15.5, { step: 0.1, plain: true }))).toBe(false);
  });

  it('a percentage is the fraction it stands for, either way round, and never a count above 1', () => {
    expect(numbersMatch(num(91.4, { step: 0.1, pct: true }), num(0.914, { step: 0.001 }))).toBe(true);
    expect(numbersMatch(num(91.4, { step: 0.1, pct: true }), num(0.924, { step: 0.001 }))).toBe(false);
    expect(numbersMatch(num(91.4, { step: 0.1, pct: true }), num(91.4, { step: 0.1 }))).toBe(false);
    expect(numbersMatch(num(0.914, { step: 0.001 }), num(91.4, { step: 0.1, pct: true }))).toBe(true);
    expect(numbersMatch(num(0.5, { step: 0.1 }), num(5, { pct: true }))).toBe(false);
    expect(numbersMatch(num(2), num(200, { pct: true }))).toBe(false);
    expect(numbersMatch(num(5, { pct: true }), num(5, { pct: true }))).toBe(true);
  });

  it('measures of different dimensions never match', () => {
    expect(numbersMatch(num(5, { dim: 'time' }), num(5, { dim: 'mass' }))).toBe(false);
    expect(numbersMatch(num(5, { dim: 'time' }), num(5))).toBe(true);
    expect(numbersMatch(num(5), num(5, { dim: 'mass' }))).toBe(true);
  });
});

describe('versionsMatch', () => {
  it('a major version names its release line; a written minor part, only that release padded with zeros', () => {
    expect(versionsMatch([3, 8], [3, 8, 0])).toBe(true);
    expect(versionsMatch([3, 8, 0], [3, 8])).toBe(false);
    expect(versionsMatch([3, 8], [3, 9, 0])).toBe(false);
    expect(versionsMatch([3, 8], [3, 8])).toBe(true);
    // A major version alone is its release line; a written minor part names one release.
    expect(versionsMatch([15], [15, 4])).toBe(true);
    expect(versionsMatch([2, 0], [2, 0, 1])).toBe(false);
    expect(versionsMatch([2, 0], [2, 0, 0, 0])).toBe(true);
    expect(versionsMatch([2, 0, 1], [2, 0, 1, 3])).toBe(false);
  });
});

describe('valuesMatch across kinds', () => {
  it('a whole number names a version line, a year or an identifier written as digits', () => {
    expect(valuesMatch(num(20, { plain: true }), { k: 'ver', parts: [20, 11, 1] })).toBe(true);
    expect(valuesMatch(num(20, { plain: true }), { k: 'ver', parts: [21, 0, 0] })).toBe(false);
    expect(valuesMatch(num(20), { k: 'ver', parts: [20, 1] })).toBe(false);
    expect(valuesMatch(num(20.5, { plain: true, step: 0.1 }), { k: 'ver', parts: [20, 5] })).toBe(false);
    expect(valuesMatch(num(2025, { plain: true }), { k: 'date', y: 2025, m: 3 })).toBe(true);
    expect(valuesMatch(num(2025, { plain: true }), { k: 'date', y: 2024 })).toBe(false);
    expect(valuesMatch(num(2025), { k: 'date', y: 2025 })).toBe(false);
    expect(valuesMatch(num(490, { plain: true }), { k: 'id', key: '490' })).toBe(true);
    expect(valuesMatch(num(490, { plain: true }), { k: 'id', key: 'pr490' })).toBe(false);
    expect(valuesMatch(num(490), { k: 'id', key: '490' })).toBe(false);
    expect(valuesMatch(num(490, { plain: true }), { k: 'quote', text: '490' })).toBe(false);
  });

  it('a two-part version is the decimal written the same way', () => {
    expect(valuesMatch({ k: 'ver', parts: [2, 5] }, num(2.5, { plain: true, step: 0.1 }))).toBe(true);
    expect(valuesMatch({ k: 'ver', parts: [2, 5] }, num(2.6, { plain: true, step: 0.1 }))).toBe(false);
    expect(valuesMatch({ k: 'ver', parts: [2, 5] }, num(2.5, { step: 0.1 }))).toBe(false);
    expect(valuesMatch({ k: 'ver', parts: [2, 5, 1] }, num(2.5, { plain: true, step: 0.1 }))).toBe(false);
    expect(valuesMatch({ k: 'ver', parts: [2, 5] }, { k: 'id', key: '25' })).toBe(false);
  });

  it('dates match as far as the claim wrote them; a bare year is the plain number', () => {
    expect(valuesMatch({ k: 'date', y: 2025, m: 3, d: 14 }, { k: 'date', y: 2025, m: 3, d: 14 })).toBe(true);
    expect(valuesMatch({ k: 'date', m: 3, d: 14 }, { k: 'date', y: 2024, m: 3, d: 14 })).toBe(true);
    expect(valuesMatch({ k: 'date', y: 2025, m: 3, d: 14 }, { k: 'date', y: 2024, m: 3, d: 14 })).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025, m: 3, d: 14 }, { k: 'date', y: 2025, m: 4, d: 14 })).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025, m: 3, d: 14 }, { k: 'date', y: 2025, m: 3, d: 15 })).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025 }, num(2025, { plain: true }))).toBe(true);
    expect(valuesMatch({ k: 'date', y: 2025 }, num(2025))).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025, m: 3 }, num(2025, { plain: true }))).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025, d: 3 }, num(2025, { plain: true }))).toBe(false);
    expect(valuesMatch({ k: 'date', wd: 5 }, num(5, { plain: true }))).toBe(false);
    expect(valuesMatch({ k: 'date', y: 2025 }, { k: 'time', min: 2025 })).toBe(false);
  });

  it('a weekday is the date that falls on it', () => {
    expect(valuesMatch({ k: 'date', wd: 5 }, { k: 'date', y: 2025, m: 3, d: 14 })).toBe(true);
    expect(valuesMatch({ k: 'date', wd: 6 }, { k: 'date', y: 2025, m: 3, d: 14 })).toBe(false);
    expect(valuesMatch({ k: 'date', wd: 5 }, { k: 'date', wd: 5 })).toBe(true);
    expect(valuesMatch({ k: 'date', wd: 5 }, { k: 'date', m: 3, d: 14 })).toBe(false);
    expect(valuesMatch({ k: 'date', wd: 5, d: 14 }, { k: 'date', y: 2025, m: 3, d: 14 })).toBe(true);
    expect(valuesMatch({ k: 'date', wd: 5, d: 21 }, { k: 'date', y: 2025, m: 3, d: 14 })).toBe(false);
  });

  it('times match by the minute', () => {
    expect(valuesMatch({ k: 'time', min: 1320 }, { k: 'time', min: 1320 })).toBe(true);
    expect(valuesMatch({ k: 'time', min: 1320 }, { k: 'time', min: 1321 })).toBe(false);
    expect(valuesMatch({ k: 'time', min: 1320 }, num(1320))).toBe(false);
  });

  it('identifiers match as keys, a long one with or without its label, and a plain number written as digits', () => {
    expect(valuesMatch({ k: 'id', key: 'clm20960' }, { k: 'id', key: 'clm20960' })).toBe(true);
    expect(valuesMatch({ k: 'id', key: 'clm20960' }, { k: 'id', key: 'clm20961' })).toBe(false);
    expect(valuesMatch({ k: 'id', key: '101038s41586019' }, { k: 'id', key: 'doi101038s41586019' })).toBe(true);
    expect(valuesMatch({ k: 'id', key: 'doi101038s41586019' }, { k: 'id', key: '101038s41586019' })).toBe(true);
    expect(valuesMatch({ k: 'id', key: 'abc101038s41586019' }, { k: 'id', key: 'abc101038s415860' })).toBe(true);
    expect(valuesMatch({ k: 'id', key: 'x12345678' }, { k: 'id', key: 'ax12345678b' })).toBe(false);
    expect(valuesMatch({ k: 'id', key: 'ab1' }, { k: 'id', key: 'ab12' })).toBe(false);
    expect(valuesMatch({ k: 'id', key: '490' }, num(490, { plain: true }))).toBe(true);
    expect(valuesMatch({ k: 'id', key: '490' }, num(490))).toBe(false);
    expect(valuesMatch({ k: 'id', key: '490' }, num(491, { plain: true }))).toBe(false);
    expect(valuesMatch({ k: 'id', key: '490' }, { k: 'quote', text: '490' })).toBe(false);
  });

  it('quotes match their text only', () => {
    expect(valuesMatch({ k: 'quote', text: 'eu subscribers' }, { k: 'quote', text: 'eu subscribers' })).toBe(true);
    expect(valuesMatch({ k: 'quote', text: 'eu subscribers' }, { k: 'quote', text: 'us subscribers' })).toBe(false);
    expect(valuesMatch({ k: 'quote', text: 'eu' }, { k: 'id', key: 'eu' })).toBe(false);
  });
});

describe('describeValue', () => {
  it('quotes a quote and leaves every other value as written', () => {
    expect(describeValue({ k: 'quote', text: 'eu list' }, 'EU list')).toBe('"EU list"');
    expect(describeValue({ k: 'id', key: 'a1' }, 'A-1')).toBe('A-1');
  });
});
