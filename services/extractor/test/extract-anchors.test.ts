import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RequirementResult } from '@vouch/contracts';
import { indexLines } from '../src/domain/body-lines.js';
import { extractDeterministically } from '../src/domain/deterministic-extract.js';
import { buildPrompts, planWindows, parseModelAnswer, DEFAULT_WINDOW_LIMITS } from '../src/domain/extract-windows.js';
import { confidenceOf, coverageOf, finalizeResults, renderEvidence, verifyAnchor } from '../src/domain/finalize-extract.js';
import { bodyLineStrings } from '../src/extract-artifact.js';

const SOURCE = [
  '// UART settings; baudRate was 9600 on the old board',
  'export const uart = {',
  '  baudRate: 115200,',
  '  parity: "none",',
  '};',
  'const radio = { channel: 11 };',
  'function channelCount() { return 3; }',
  '',
].join('\n');
const body = Buffer.from(SOURCE);
const lines = indexLines(body);

describe('deterministic extraction', () => {
  it('anchors a value defined once, ignoring comments and longer identifiers', () => {
    const results = finalizeResults(body, lines, [{ id: 'baudRate' }, { id: 'channel' }], extractDeterministically(bodyLineStrings(body), [{ id: 'baudRate' }, { id: 'channel' }]));
    expect(results).toEqual([
      { id: 'baudRate', status: 'satisfied', value: '115200', anchor: { startLine: 3, endLine: 3, quote: 'baudRate: 115200,' }, confidence: 1 },
      { id: 'channel', status: 'satisfied', value: '11', anchor: { startLine: 6, endLine: 6, quote: 'const radio = { channel: 11 };' }, confidence: 1 },
    ]);
    expect(coverageOf(results)).toEqual({ total: 2, satisfied: 2, unresolved: 0, complete: true });
  });

  it('leaves a missing or ambiguous requirement unresolved with a bounded reason and a recovery', () => {
    const twice = Buffer.from('a = { timeout: 5 }\nb = { timeout: 9 }\n');
    const [missing, ambiguous] = extractDeterministically(bodyLineStrings(twice), [{ id: 'channel' }, { id: 'timeout' }]);
    expect(missing).toMatchObject({ status: 'unresolved', code: 'not_found', reason: 'no line of the source mentions channel', recovery: { readLines: [], search: ['channel\\s*[:=]'] } });
    expect(ambiguous).toMatchObject({ status: 'unresolved', code: 'ambiguous', recovery: { readLines: [{ start: 1, end: 2 }, { start: 1, end: 2 }] } });
    expect((ambiguous as { reason: string }).reason).toContain('2 different values (5, 9)');
  });
});

describe('anchor verification', () => {
  it('accepts the exact quote on its line and refuses paraphrase, a wrong line or a value outside the quote', () => {
    expect(verifyAnchor(body, lines, { startLine: 3, endLine: 3, quote: 'baudRate: 115200' }, '115200')).toBeUndefined();
    expect(verifyAnchor(body, lines, { startLine: 3, endLine: 3, quote: 'baudRate = 115200' }, '115200')).toContain('not on lines 3-3');
    expect(verifyAnchor(body, lines, { startLine: 4, endLine: 4, quote: 'baudRate: 115200' }, '115200')).toContain('not on lines 4-4');
    expect(verifyAnchor(body, lines, { startLine: 3, endLine: 3, quote: 'baudRate: 115200' }, '9600')).toContain('value is not within');
    expect(verifyAnchor(body, lines, { startLine: 99, endLine: 99, quote: 'x' }, 'x')).toContain('outside the source');
  });

  it('turns a failed anchor, or an omitted requirement, into unresolved', () => {
    const results = finalizeResults(body, lines, [{ id: 'baudRate' }, { id: 'channel' }], [{ id: 'baudRate', status: 'satisfied', value: '57600', anchor: { startLine: 3, endLine: 3, quote: 'baudRate: 57600' }, confidence: 0.99 }]);
    expect(results.map((r) => [r.id, r.status, r.status === 'unresolved' ? r.code : ''])).toEqual([
      ['baudRate', 'unresolved', 'anchor_failed'],
      ['channel', 'unresolved', 'model_unresolved'],
    ]);
    expect(coverageOf(results).complete).toBe(false);
    expect(confidenceOf(results)).toBe(0);
  });

  it('property: coverage is never complete while any requirement is open, whatever the extractor claims', () => {
    const result = fc.oneof(
      fc.record({ id: fc.constant('x'), status: fc.constant('satisfied' as const), value: fc.constant('115200'), anchor: fc.record({ startLine: fc.integer({ min: 1, max: 8 }), endLine: fc.integer({ min: 1, max: 8 }), quote: fc.constantFrom('baudRate: 115200', '115200', 'nope') }), confidence: fc.double({ min: 0, max: 1, noNaN: true }) }),
      fc.constant({ id: 'x', status: 'unresolved' as const, code: 'not_found' as const, reason: 'r', recovery: { readLines: [], search: [] } }),
    );
    fc.assert(
      fc.property(fc.array(result, { minLength: 1, maxLength: 6 }), (proposed) => {
        const reqs = proposed.map((_, i) => ({ id: `r${i}` }));
        const final = finalizeResults(body, lines, reqs, proposed.map((p, i) => ({ ...p, id: `r${i}` }) as RequirementResult));
        const coverage = coverageOf(final);
        expect(coverage.satisfied + coverage.unresolved).toBe(reqs.length);
        expect(coverage.complete).toBe(final.every((r) => r.status === 'satisfied'));
        for (const r of final) if (r.status === 'satisfied') expect(verifyAnchor(body, lines, r.anchor, r.value)).toBeUndefined();
      }),
    );
  });

  it('renders compact evidence: one line per requirement', () => {
    const results = finalizeResults(body, lines, [{ id: 'baudRate' }, { id: 'missing' }], extractDeterministically(bodyLineStrings(body), [{ id: 'baudRate' }, { id: 'missing' }]));
    expect(renderEvidence(results)).toBe('baudRate = 115200 [L3: "baudRate: 115200,"]\nmissing: UNRESOLVED (not_found) no line of the source mentions missing');
  });
});

describe('windows for model extraction', () => {
  const big = Array.from({ length: 5_000 }, (_, i) => `filler line ${i} ${'x'.repeat(60)}`);
  big[1234] = '  baudRate: 57600,';
  big[3999] = '  channel: 7,';

  it('finds candidate windows by lexical search and keeps every prompt under the limit', () => {
    const windows = planWindows(big, [{ id: 'baudRate' }, { id: 'channel' }]);
    expect(windows.map((w) => [w.startLine, w.endLine, w.requirementIds])).toEqual([
      [1231, 1239, ['baudRate']],
      [3996, 4004, ['channel']],
    ]);
    // Each prompt names only its window's requirement and shows that window's numbered lines, candidate line included.
    const shown = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}: ${big[from + i - 1]}`).join('\n');
    const prompts = windows.flatMap((w) => buildPrompts(big, w, [{ id: 'baudRate' }, { id: 'channel' }]));
    expect(prompts.map((p) => p.user)).toEqual([
      `Requirements:\n- baudRate\n\nLines:\n${shown(1231, 1239)}\n`,
      `Requirements:\n- channel\n\nLines:\n${shown(3996, 4004)}\n`,
    ]);
    expect(prompts[0]!.user).toContain('\n1235:   baudRate: 57600,\n');
    expect(prompts[1]!.user).toContain('\n4000:   channel: 7,\n');
    for (const prompt of prompts) expect(prompt.chars).toBeLessThanOrEqual(DEFAULT_WINDOW_LIMITS.maxPromptChars);
    const [tight, ...more] = buildPrompts(big, windows[0]!, [{ id: 'baudRate' }], { ...DEFAULT_WINDOW_LIMITS, maxPromptChars: 900 });
    expect(more).toEqual([]);
    expect(tight!.chars).toBeLessThanOrEqual(900);
    expect(tight!.user).toContain('1235:   baudRate: 57600,');
  });

  it('refuses a model answer that is not the schema', () => {
    expect(parseModelAnswer('{"results":[{"id":"a"}]}')).toMatchObject({ ok: false });
    expect(parseModelAnswer('not json')).toEqual({ ok: false, error: 'the model answer is not JSON' });
  });
});
