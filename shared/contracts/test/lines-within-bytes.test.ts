import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes, linesWithinBytes } from '../src/result-budget.js';

// A text answer bounded by bytes (board.synthesize, ledger.render): cut at a line, never past the budget as JSON,
// with a last line naming what was left out.
describe('linesWithinBytes', () => {
  const tail = (left: readonly string[]) => `… ${left.length} more lines`;

  it('returns a text that fits as it is', () => {
    expect(linesWithinBytes('a\nb', 100, tail)).toEqual({ text: 'a\nb', truncated: false });
  });

  it('keeps whole lines from the first, within the budget as JSON, and names the rest', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 60, unit: fc.constantFrom('a', '"', 'é', '\\', '\t', '😀') }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 40, max: 3_000 }), (lines, maxBytes) => {
        const text = lines.join('\n');
        const out = linesWithinBytes(text, maxBytes, tail);
        if (!out.truncated) {
          expect(out.text).toBe(text);
          return;
        }
        expect(jsonBytes(out.text)).toBeLessThanOrEqual(maxBytes);
        const kept = out.text.split('\n');
        const shown = kept.length - 1;
        expect(kept.slice(0, shown)).toEqual(lines.slice(0, shown));
        expect(kept.at(-1)).toBe(`… ${lines.length - shown} more lines`);
        // Not one more line would have fitted beside the tail.
        if (shown < lines.length) expect(jsonBytes([...lines.slice(0, shown + 1), tail(lines)].join('\n'))).toBeGreaterThan(maxBytes);
      }),
      { numRuns: 300 },
    );
  });
});
