import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { indexLines } from '../src/domain/body-lines.js';
import { GrepPatternError, compileGrepPattern, requiredLiteral } from '../src/domain/grep-pattern.js';
import { runAtOnce } from '@vouch/platform';
import { SCAN_SLICE_BYTES, scanTargets, type ScanTarget } from '../src/domain/grep-scan.js';
import { adviseNarrowing } from '../src/domain/narrow-grep.js';

function target(path: string, text: string): ScanTarget {
  const body = Buffer.from(text);
  return { artifactId: `art-${path.length.toString(16).padStart(24, '0')}`, path, body, lines: () => indexLines(body) };
}

describe('grep patterns', () => {
  it('finds the literal every match must contain', () => {
    expect(requiredLiteral('baudRate\\s*[:=]')).toBe('baudRate');
    expect(requiredLiteral('foo|bar')).toBeNull();
    expect(requiredLiteral('(?i)foo')).toBeNull();
    expect(requiredLiteral('ab?cdef')).toBe('cdef');
    expect(requiredLiteral('x*hello+')).toBe('hello');
    expect(requiredLiteral('a\\.b\\dcc')).toBe('a.b');
    expect(requiredLiteral('[abc]+')).toBeNull();
    expect(requiredLiteral('(group)tail')).toBe('tail');
    expect(requiredLiteral('ab{0,3}cd')).toBe('cd');
  });

  it('property: a line the regex matches always holds the literal (the prefilter never hides a match)', () => {
    const atom = fc.constantFrom('a', 'b', 'ab', '.', 'a*', 'b?', '[ab]', '(a|b)', '\\.', 'c+', 'x{0,2}', '^', '$', 'a{2}');
    fc.assert(
      fc.property(fc.array(atom, { minLength: 1, maxLength: 6 }), fc.array(fc.stringMatching(/^[abcx.]{0,12}$/), { minLength: 1, maxLength: 20 }), (atoms, lines) => {
        const source = atoms.join('');
        const literal = requiredLiteral(source);
        if (literal === null) return;
        const re = RE2JS.compile(source);
        for (const line of lines) if (re.test(line)) expect(line.includes(literal)).toBe(true);
      }),
    );
  });

  it('prefilters a case-insensitive search by its ASCII literal, except letters RE2 folds beyond ASCII', () => {
    expect(compileGrepPattern('baudRate\\s*=', true).foldedLiteral?.flags).toBe('gi');
    expect(compileGrepPattern('mask', true).foldedLiteral).toBeNull(); // s also matches ſ (U+017F) under RE2's folding
    expect(compileGrepPattern('baudRate', false).foldedLiteral).toBeNull();
    const out = runAtOnce(scanTargets([target('a.ts', 'BAUDRATE = 1\nbaudrate = 2\nnothing\n')], compileGrepPattern('baudrate\\s*=', true), { capBytes: 1_000, scanCapBytes: 1_000, lineChars: 100 }));
    expect(out.matches.map((m) => m.line)).toEqual([1, 2]);
  });

  it('refuses invalid and backtracking-only syntax with a way out', () => {
    expect(() => compileGrepPattern('(a', false)).toThrow(GrepPatternError);
    expect(() => compileGrepPattern('(a)\\1', false)).toThrow(/no backreferences or lookaround/);
    expect(() => compileGrepPattern('(?=a)', false)).toThrow(GrepPatternError);
    expect(() => compileGrepPattern('a{1000}{1000}', false)).toThrow(GrepPatternError);
  });

  it('answers a classic catastrophic-backtracking pattern in linear time', () => {
    const p = compileGrepPattern('(a+)+$', false);
    const hostile = `${'a'.repeat(50_000)}!`;
    expect(p.test(hostile)).toBe(false);
    const q = compileGrepPattern('(x+x+)+y', false);
    expect(q.test('x'.repeat(100_000))).toBe(false);
  });
});

describe('scanTargets', () => {
  const files = [target('a.ts', 'const baudRate = 9600;\nother\nbaudRate: 1\n'), target('b.ts', 'no match here\n'), target('c.ts', 'x baudRate = 3\n')];

  it('returns every matching line with its line number when nothing is capped', () => {
    const out = runAtOnce(scanTargets(files, compileGrepPattern('baudRate\\s*[:=]', false), { capBytes: 1_000, scanCapBytes: 1_000, lineChars: 100 }));
    expect(out.matches.map((m) => `${m.path}:${m.line}:${m.text}`)).toEqual(['a.ts:1:const baudRate = 9600;', 'a.ts:3:baudRate: 1', 'c.ts:1:x baudRate = 3']);
    expect(out).toMatchObject({ matchesCounted: 3, filesScanned: 3, truncatedBy: [] });
  });

  it('keeps counting after the result cap, so a capped result says what it left out', () => {
    const out = runAtOnce(scanTargets(files, compileGrepPattern('baudRate', false), { capBytes: 120, scanCapBytes: 1_000, lineChars: 100 }));
    expect(out.matches).toHaveLength(1);
    expect(out.matchesCounted).toBe(3);
    expect(out.truncatedBy).toEqual(['result_cap']);
  });

  it('stops at the scan cap and reports the files it did not scan', () => {
    const out = runAtOnce(scanTargets(files, compileGrepPattern('baudRate', false), { capBytes: 1_000, scanCapBytes: 60, lineChars: 100 }));
    expect(out.filesScanned).toBe(2);
    expect(out.truncatedBy).toEqual(['scan_cap']);
  });

  it('searches every line without a literal (ignoreCase) with the same results', () => {
    const out = runAtOnce(scanTargets(files, compileGrepPattern('BAUDRATE\\s*[:=]', true), { capBytes: 1_000, scanCapBytes: 1_000, lineChars: 100 }));
    expect(out.matchesCounted).toBe(3);
  });

  it('yields about every slice of bytes it scans, at line ends, with each kind of pattern', () => {
    // 2 MB in 32-byte lines: a literal, a folded literal and a regex with none each yield about once per slice.
    const big = [target('big.log', 'line of text with baudRate = 96\n'.repeat(65_536))];
    for (const pattern of [compileGrepPattern('baudRate', false), compileGrepPattern('BAUDRATE', true), compileGrepPattern('^line.*\\d+$', false)]) {
      const steps = scanTargets(big, pattern, { capBytes: 1_000, scanCapBytes: 4_000_000, lineChars: 100 });
      let yields = 0;
      let step = steps.next();
      for (; !step.done; step = steps.next()) yields += 1;
      expect(yields).toBe(Math.ceil(big[0]!.body!.length / SCAN_SLICE_BYTES) - 1);
      expect(step.value.matchesCounted).toBe(65_536);
    }
  });

  it('property: the outcome does not depend on where the scan yields', () => {
    const line = fc.stringMatching(/^[ab x=0-9]{0,20}$/);
    fc.assert(
      fc.property(fc.array(fc.array(line, { maxLength: 30 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 64 }), fc.constantFrom('a', 'A', 'a\\s*=', 'b|x'), (files, sliceBytes, source) => {
        const targets = files.map((lines, i) => target(`f${i}.txt`, lines.join('\n')));
        const limits = { capBytes: 400, scanCapBytes: 600, lineChars: 8 };
        const pattern = compileGrepPattern(source, source === 'A');
        const whole = runAtOnce(scanTargets(targets, pattern, { ...limits, sliceBytes: 1 << 30 }));
        expect(runAtOnce(scanTargets(targets, pattern, { ...limits, sliceBytes }))).toEqual(whole);
      }),
    );
  });

  it('advises deterministically: top files, a path prefix, tighter patterns', () => {
    const perPath = new Map([
      ['src/uart/b.ts', 5],
      ['src/uart/a.ts', 5],
      ['src/spi/c.ts', 1],
    ]);
    const advice = adviseNarrowing({ pattern: 'baudRate', ignoreCase: false, pathPrefix: undefined, perPath, counts: { returned: 3, counted: 11, filesScanned: 3, filesTotal: 3, capBytes: 1024 } });
    expect(advice.topFiles.map((f) => f.path)).toEqual(['src/uart/a.ts', 'src/uart/b.ts', 'src/spi/c.ts']);
    expect(advice.pathPrefix).toBe('src/');
    expect(advice.tighterPatterns).toEqual(['\\bbaudRate\\b', '^\\s*(?:baudRate)', 'baudRate\\s*[:=]']);
    expect(advice.instruction).toContain('partial result, not the absence of matches');
    expect(adviseNarrowing({ pattern: 'baudRate', ignoreCase: false, pathPrefix: undefined, perPath, counts: { returned: 3, counted: 11, filesScanned: 3, filesTotal: 3, capBytes: 1024 } })).toEqual(advice);
  });
});
