import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadInputError } from '@vouch/contracts';
import { decodeBase64Image } from '../src/decode-base64.js';

const failure = (value: string) => {
  try {
    decodeBase64Image(value);
  } catch (err) {
    expect(err).toBeInstanceOf(BadInputError);
    expect((err as BadInputError).fields).toEqual([{ path: 'imageBase64', message: expect.any(String) }]);
    return (err as Error).message;
  }
  throw new Error(`${JSON.stringify(value.slice(0, 40))} was accepted`);
};

/** Base64 as mail and PEM tools write it: lines of `width` characters ending in `eol`. */
const wrap = (b64: string, width: number, eol: string) => (b64.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(eol) + eol;

describe('decodeBase64Image', () => {
  it('decodes standard base64', () => {
    expect(decodeBase64Image('QUJD').toString()).toBe('ABC');
    expect(decodeBase64Image('QUI=').toString()).toBe('AB');
    expect(decodeBase64Image('QQ==').toString()).toBe('A');
  });

  it('accepts standard base64 with line breaks', () => {
    expect(decodeBase64Image('aGVs\nbG8=').toString()).toBe('hello');
  });

  it('refuses URL-safe or truncated base64', () => {
    expect(() => decodeBase64Image('aGVsbG8')).toThrow('imageBase64 ends without its = padding');
    expect(() => decodeBase64Image('a-_b')).toThrow("imageBase64 is not base64: character 1 is '-'");
  });

  it('ignores line breaks, spaces and tabs anywhere, as the README promises', () => {
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));
    const b64 = bytes.toString('base64');
    for (const text of [wrap(b64, 76, '\r\n'), wrap(b64, 64, '\n'), ` ${b64.slice(0, 100)}\t${b64.slice(100)} \n`, `${b64}\n\n`]) {
      expect(decodeBase64Image(text).equals(bytes)).toBe(true);
    }
  });

  it('names the first character that is not base64 and where it is', () => {
    expect(failure('QUJD%UJD')).toBe(
      "imageBase64 is not base64: character 4 is '%': send the file as standard base64 (A-Z, a-z, 0-9, +, / and = padding at the end; line breaks and spaces are ignored)",
    );
    expect(failure('QU-_')).toContain("character 2 is '-'");
    expect(failure('QUJ\u0144')).toContain('character 3 is U+0144');
    expect(failure('QUJ\u00c3')).toContain('character 3 is U+00C3');
    expect(failure('QQ==QUJD')).toContain("character 4 is 'Q' after the = padding");
    expect(failure('QUJDQ===')).toContain("character 7 is '='");
    expect(failure('QUJDQ')).toContain('ends in a lone base64 digit (5 digits): the text was cut short');
    expect(failure('QUI')).toContain('ends without its = padding (3 digits and 0 =)');
    expect(failure('QQ=')).toContain('ends without its = padding (2 digits and 1 =)');
  });

  it('refuses a data: URL with the way out', () => {
    expect(failure('data:image/png;base64,QUJD')).toContain('without a data: URL prefix');
  });

  it('agrees with a plain decode for any bytes and any whitespace, and refuses any inserted bad character at its position', () => {
    const whitespace = fc.constantFrom(' ', '\t', '\r', '\n', '\r\n');
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.array(fc.tuple(fc.nat(), whitespace), { maxLength: 8 }), (raw, spaces) => {
        let text = Buffer.from(raw).toString('base64');
        for (const [at, ws] of spaces) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + ws + text.slice(i);
        }
        expect(decodeBase64Image(text).equals(Buffer.from(raw))).toBe(true);
      }),
    );
    const bad = fc.constantFrom('-', '_', '.', '%', '"', '\u00e9', '\u0144', '\ud83d\ude00', '\u0000');
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 3, maxLength: 300 }), fc.nat(), bad, (raw, at, ch) => {
        const b64 = Buffer.from(raw).toString('base64').replace(/=+$/, '');
        const i = at % b64.length;
        expect(failure(b64.slice(0, i) + ch + b64.slice(i))).toContain(`character ${i} is`);
      }),
    );
  });
});
