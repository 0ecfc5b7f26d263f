import { BadInputError } from '@vouch/contracts';

/** Kind of each UTF-16 code unit in standard base64: 1 a digit of the alphabet, 2 whitespace, 0 anything else. */
const KIND = new Uint8Array(65_536);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') KIND[c.charCodeAt(0)] = 1;
for (const c of ' \t\r\n') KIND[c.charCodeAt(0)] = 2;
const DIGIT = 1;
const SPACE = 2;

function badBase64(message: string): BadInputError {
  return new BadInputError(`imageBase64 ${message}: send the file as standard base64 (A-Z, a-z, 0-9, +, / and = padding at the end; line breaks and spaces are ignored)`, [
    { path: 'imageBase64', message: 'invalid base64' },
  ]);
}

/** How often `ch` occurs in `s`: native indexOf calls, one per occurrence. */
function occurrences(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i !== -1; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

/** Base64 digits a string that decodes to `decodedBytes` holds (a 4-digit group is 3 bytes; a final 2 or 3 digits are 1 or 2). */
function digitsFor(decodedBytes: number): number {
  const rest = decodedBytes % 3;
  return Math.floor(decodedBytes / 3) * 4 + (rest ? rest + 1 : 0);
}

/**
 * Decodes standard base64 in one native pass, ignoring whitespace (the README
 * allows line-wrapped base64), and proves every other character was a base64
 * digit or final padding, without a regular expression or a compacted copy
 * of the string. Buffer.from skips what is not a digit and stops at the first
 * `=`, so the decoded length says how many digits it used; when that is every
 * character but the line breaks (counted with indexOf) and the final padding,
 * nothing was skipped. Three more native checks close the gaps Buffer.from
 * leaves: it takes the URL-safe digits - and _, and reads a character above
 * U+00FF by its low byte. Anything else (spaces, tabs, a bad character) takes
 * one character-by-character scan, which names the first bad character.
 */
export function decodeBase64Image(value: string): Buffer {
  if (value.startsWith('data:')) {
    throw new BadInputError('imageBase64 must be plain base64, without a data: URL prefix: drop everything up to and including the comma', [
      { path: 'imageBase64', message: 'has a data: URL prefix' },
    ]);
  }
  const bytes = Buffer.from(value, 'base64');
  let end = value.length;
  while (end > 0 && KIND[value.charCodeAt(end - 1)] === SPACE) end--;
  let padding = 0;
  while (padding < 2 && end - padding > 0 && value.charCodeAt(end - 1 - padding) === 0x3d) padding++;
  // Wrong when the text holds spaces or tabs: then the counts differ and the scan decides.
  const digits = value.length - occurrences(value, '\n') - occurrences(value, '\r') - padding;
  const allDigitsUsed = (digits + padding) % 4 === 0 && digitsFor(bytes.length) === digits;
  if (allDigitsUsed && value.indexOf('-') === -1 && value.indexOf('_') === -1 && Buffer.byteLength(value, 'utf8') === value.length) return bytes;
  return scanned(value, bytes);
}

/**
 * The slow path, for base64 with spaces or tabs, or with a bad character: one
 * scan that accepts the input (returning the bytes Buffer.from decoded) or
 * names its first bad character.
 */
function scanned(value: string, bytes: Buffer): Buffer {
  let digits = 0;
  let padding = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const kind = KIND[code];
    if (kind === SPACE) continue;
    if (kind === DIGIT && padding === 0) {
      digits++;
      continue;
    }
    if (code === 0x3d && padding < 2) {
      padding++;
      continue;
    }
    const shown = code >= 0x21 && code <= 0x7e ? `'${value[i]}'` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
    throw badBase64(`is not base64: character ${i} is ${shown}${kind === DIGIT || code === 0x3d ? ' after the = padding' : ''}`);
  }
  if (digits % 4 === 1) throw badBase64(`ends in a lone base64 digit (${digits} digits): the text was cut short`);
  if ((digits + padding) % 4 !== 0) throw badBase64(`ends without its = padding (${digits} digits and ${padding} =): the text was cut short, or pad it to a multiple of 4 characters`);
  return bytes;
}
