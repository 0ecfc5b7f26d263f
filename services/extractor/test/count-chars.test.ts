import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countChars } from '../src/extractor-handlers.js';

/** artifact.read counts a body's characters (code points) from its UTF-8 bytes, without iterating the string. */
describe('countChars', () => {
  const anyUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 64 }).map((units) => String.fromCharCode(...units));

  it('property: as many as the string has code points, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), anyUnits, fc.string()), (text) => {
        expect(countChars(text, Buffer.from(text, 'utf8'))).toBe([...text].length);
      }),
      { numRuns: 1_000 },
    );
  });

  it('counts each kind of 4-byte sequence once', () => {
    const text = 'a\u{10000}\u{4FFFF}\u{8FFFF}\u{CFFFF}\u{10FFFF}é€';
    expect(countChars(text, Buffer.from(text))).toBe(8);
  });
});
