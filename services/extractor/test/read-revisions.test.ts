import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { artifactPathProblem, normalizeArtifactPath, binaryBodyProblem } from '@vouch/contracts';
import { indexLines, lineAt, linesText, rangeMatches } from '../src/domain/body-lines.js';
import { fidelityOf, planRead, type PathHead } from '../src/domain/plan-read.js';
import { artifactIdFor } from '../src/domain/artifact-identity.js';

const H = (c: string) => c.repeat(64);

describe('artifact paths', () => {
  it.each([
    ['/etc/passwd', 'not absolute'],
    ['C:/x', 'not absolute'],
    ['~/x', 'not absolute'],
    ['../secrets', '.. segments'],
    ['src/../../x', '.. segments'],
    ['src\\win.ts', 'forward slashes'],
    ['a\u0001b', 'control characters'],
    ['a\nb', 'control characters'],
    ['', 'must not be empty'],
    ['./', 'must name a file'],
  ])('refuses %j', (path, why) => {
    expect(artifactPathProblem(path)).toContain(why);
  });

  it('normalises ./ and repeated slashes, so two spellings are one path', () => {
    expect(normalizeArtifactPath('./src//uart/./config.ts')).toBe('src/uart/config.ts');
    expect(normalizeArtifactPath('src/uart/config.ts/')).toBe('src/uart/config.ts');
  });

  it('refuses binary bodies but keeps tabs, line breaks and ANSI escapes', () => {
    expect(binaryBodyProblem('a\tb\r\nc\f\u001b[31mred\u001b[0m')).toBeUndefined();
    expect(binaryBodyProblem('PK\u0003\u0004')).toContain('looks binary (control character U+0003 at offset 2)');
  });
});

describe('body lines', () => {
  const body = Buffer.from('alpha\nbeta\ngamma\n');
  const lines = indexLines(body);

  it('counts a final newline as the end of the last line', () => {
    expect(lines.starts.length).toBe(3);
    expect(indexLines(Buffer.from('a')).starts.length).toBe(1);
    expect(indexLines(Buffer.alloc(0)).starts.length).toBe(0);
    expect(linesText(lines, body, 2, 3)).toBe('beta\ngamma');
    expect(lineAt(lines, body.indexOf('gamma'))).toBe(3);
  });

  it('matches a partial read to its range, with or without the final newline', () => {
    expect(rangeMatches(body, Buffer.from('beta'), { unit: 'lines', start: 2, end: 2 })).toBe(true);
    expect(rangeMatches(body, Buffer.from('beta\n'), { unit: 'lines', start: 2, end: 2 })).toBe(true);
    expect(rangeMatches(body, Buffer.from('BETA'), { unit: 'lines', start: 2, end: 2 })).toBe(false);
    expect(rangeMatches(body, Buffer.from('pha'), { unit: 'bytes', start: 2, end: 5 })).toBe(true);
    expect(rangeMatches(body, Buffer.from('x'), { unit: 'lines', start: 9, end: 9 })).toBe(false);
  });
});

describe('planRead: revisions change only on evidence of a change', () => {
  const head: PathHead = { revision: 2, sourceHash: H('a'), gone: false };
  const full = (hash: string) => ({ hash, range: null, fidelity: 'full' as const, sourceHash: hash });

  it('starts a path at revision 1 with no reread', () => {
    expect(planRead(undefined, full(H('a')), () => undefined)).toEqual({ revision: 1, sourceHash: H('a'), reread: null });
  });

  it('keeps the revision for the same hash: reading again is never a penalty', () => {
    expect(planRead(head, full(H('a')), () => undefined)).toEqual({ revision: 2, sourceHash: H('a'), reread: null });
  });

  it('a new hash is a new revision and a justified reread naming the old one', () => {
    expect(planRead(head, full(H('b')), () => undefined)).toEqual({ revision: 3, sourceHash: H('b'), reread: { reason: 'hash_changed', previousRevision: 2, previousHash: H('a') } });
  });

  it('a partial read joins the revision when it agrees with the full body, and starts one when it does not', () => {
    const partial = { hash: H('c'), range: { unit: 'lines' as const, start: 1, end: 2 }, fidelity: 'partial' as const, sourceHash: null };
    expect(planRead(head, partial, () => true).revision).toBe(2);
    expect(planRead(head, partial, () => false)).toMatchObject({ revision: 3, reread: { reason: 'content_changed' } });
  });

  it('a file reported gone and read again reappears as a new revision', () => {
    expect(planRead({ ...head, gone: true }, full(H('a')), () => undefined)).toMatchObject({ revision: 3, reread: { reason: 'reappeared' } });
  });

  it('property: the revision never decreases and grows by at most one per read', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 30 }), (hashes) => {
        let h: PathHead | undefined;
        for (const c of hashes) {
          const plan = planRead(h, full(H(c)), () => undefined);
          if (h) {
            expect(plan.revision - h.revision).toBe(h.sourceHash === H(c) ? 0 : 1);
            expect(plan.reread !== null).toBe(h.sourceHash !== H(c));
          }
          h = { revision: plan.revision, sourceHash: plan.sourceHash, gone: false };
        }
      }),
    );
  });

  it('fidelity: full, partial with a range, capped when cut short', () => {
    expect(fidelityOf({})).toBe('full');
    expect(fidelityOf({ range: { unit: 'lines', start: 1, end: 2 } })).toBe('partial');
    expect(fidelityOf({ capped: true })).toBe('capped');
  });

  it('artifact ids differ across tenants for identical reads', () => {
    const key = { workspace: 'w', path: 'p', revision: 1, hash: H('a'), range: null, fidelity: 'full' as const };
    expect(artifactIdFor({ tenant: 'acme', ...key })).not.toBe(artifactIdFor({ tenant: 'globex', ...key }));
    expect(artifactIdFor({ tenant: 'acme', ...key })).toMatch(/^art-[0-9a-f]{24}$/);
  });
});
