import { describe, expect, it } from 'vitest';
import { goBase64Error, goDecode, goQuote, parseGoDuration } from '../src/go-json-decode.js';

describe('Go decoding rules used by the Ollama test server', () => {
  it('base64 errors carry the byte offset Go reports', () => {
    expect(goBase64Error(Buffer.from('any bytes!').toString('base64'))).toBeUndefined();
    expect(goBase64Error('aGVs\nbG8=')).toBeUndefined(); // \r and \n are skipped
    expect(goBase64Error('')).toBeUndefined();
    expect(goBase64Error('data:image/png;base64,AAAA')).toBe('illegal base64 data at input byte 4');
    expect(goBase64Error('aGVsbG8')).toBe('illegal base64 data at input byte 4'); // missing padding
    expect(goBase64Error('aGVsbA==AAAA')).toBe('illegal base64 data at input byte 8'); // data after padding
    expect(goBase64Error('aGVsbG8-')).toBe('illegal base64 data at input byte 7'); // URL alphabet
  });

  it('syntax errors name the byte and where the scanner was', () => {
    const message = (text: string): string | undefined => {
      const r = goDecode(text, { kind: 'any' });
      return r.ok ? undefined : r.message;
    };
    expect(message('{"a": tru}')).toBe("invalid character '}' in literal true (expecting 'e')");
    expect(message('{"a": 1 "b": 2}')).toBe(`invalid character '"' after object key:value pair`);
    expect(message('{"a": "\n"}')).toBe("invalid character '\\n' in string literal");
    expect(message('[1,]')).toBe("invalid character ']' looking for beginning of value");
    expect(message('{"a": 01}')).toBe("invalid character '1' after object key:value pair");
    expect(message('"abc')).toBe('unexpected EOF');
    // Like json.Decoder, only the first value is read.
    expect(goDecode('{"a": 1} trailing', { kind: 'any' })).toEqual({ ok: true, value: { a: 1 } });
    expect(goDecode(' \n', { kind: 'any' })).toMatchObject({ ok: false, eof: true });
  });

  it('durations and quoting follow Go', () => {
    expect(parseGoDuration('1h30m')).toBe(5_400_000);
    expect(parseGoDuration('-1m')).toBe(-60_000);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('5')).toBeUndefined();
    expect(goQuote('say "hi"\n')).toBe('"say \\"hi\\"\\n"');
  });
});
