import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countWithinBytes, jsonBytes } from '../src/result-budget.js';

describe('measuring a result as the worker does', () => {
  it('counts the UTF-8 bytes of the JSON, whatever the characters', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), (value, text, binary) => {
        for (const v of [value, text, binary, { text, list: [binary, value] }]) expect(jsonBytes(v)).toBe(Buffer.byteLength(JSON.stringify(v)));
      }),
      { numRuns: 50 },
    );
    expect(jsonBytes('\u0001é😀')).toBe(2 + 6 + 2 + 4);
    expect(jsonBytes(undefined)).toBe(0);
  });

  it('fits items with their commas, and takes the first ones asked for whatever they weigh', () => {
    const items = ['aaaa', 'bb', 'c'];
    // "aaaa" is 6 bytes, ,"bb" 5 more, ,"c" 4 more.
    expect(countWithinBytes(items, 15)).toBe(3);
    expect(countWithinBytes(items, 14)).toBe(2);
    expect(countWithinBytes(items, 11)).toBe(2);
    expect(countWithinBytes(items, 10)).toBe(1);
    expect(countWithinBytes(items, 5)).toBe(0);
    expect(countWithinBytes(items, 5, 1)).toBe(1);
    expect(countWithinBytes(items, -100, 2)).toBe(2);
    expect(countWithinBytes([], 100, 1)).toBe(0);
  });
});
