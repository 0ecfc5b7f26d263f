import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runAtOnce } from '@vouch/platform';
import { sha256HexInSlices } from '../src/domain/artifact-identity.js';
import { indexLines, indexLinesInSlices } from '../src/domain/body-lines.js';

// The read handler digests a body a slice at a time (extractor-handlers.ts, digestBody), so that an 8 MB body does
// not hold the loop for all of it. Sliced or whole, the digest must be the same.
describe('a body digested in slices', () => {
  const bodies = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'b', '\n', 'é', '𝄞') }),
    fc.constant('\n\n\n'),
    fc.constant(''),
    fc.constant('no newline at the end'),
  );
  const slices = fc.integer({ min: 1, max: 9 });

  it('has the lines of the whole body, whatever the slice size', () => {
    fc.assert(
      fc.property(bodies, slices, (text, size) => {
        const body = Buffer.from(text, 'utf8');
        expect(runAtOnce(indexLinesInSlices(body, size))).toEqual(indexLines(body));
      }),
    );
  });

  it('has the sha256 of the whole body, whatever the slice size', () => {
    fc.assert(
      fc.property(bodies, slices, (text, size) => {
        const body = Buffer.from(text, 'utf8');
        expect(runAtOnce(sha256HexInSlices(body, size))).toBe(createHash('sha256').update(body).digest('hex'));
      }),
    );
  });

  it('yields between slices, and not at all for a body within one slice', () => {
    const count = (work: Generator<void, unknown, void>) => {
      let yields = 0;
      while (!work.next().done) yields += 1;
      return yields;
    };
    const body = Buffer.from('line\n'.repeat(100), 'utf8'); // 500 bytes, 100 lines
    expect(count(sha256HexInSlices(body, 100))).toBe(4);
    expect(count(sha256HexInSlices(body, 500))).toBe(0);
    expect(count(indexLinesInSlices(body, 100))).toBeGreaterThanOrEqual(4);
    expect(count(indexLinesInSlices(body, 1_000))).toBe(0);
  });
});
