import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ArtifactPathSchema, artifactPathProblem, artifactRead, normalizeArtifactPath, binaryBodyProblem } from '@vouch/contracts';
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

  it('normalises to NFC, so a name typed composed and decomposed is one path', () => {
    const nfd = 'docs/cafe\u0301.txt';
    const nfc = 'docs/caf\u00e9.txt';
    expect(normalizeArtifactPath(nfd)).toBe(nfc);
    expect(ArtifactPathSchema.parse(nfd)).toBe(nfc);
    expect(artifactRead.input.parse({ workspace: 'fw', path: `./${nfd}`, content: 'x' }).path).toBe(`./${nfc}`);
    // Any path, however its accents are composed, has one canonical spelling.
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'e', 'o', '\u00e9', 'e\u0301', '\u1e69', 's\u0323\u0307', '\u212b', '/', '.', '\u0451', '\u0435\u0308') }), (s) => {
        fc.pre(artifactPathProblem(s) === undefined);
        expect(normalizeArtifactPath(s.normalize('NFD'))).toBe(normalizeArtifactPath(s.normalize('NFC')));
        expect(normalizeArtifactPath(s)).toBe(normalizeArtifactPath(s).normalize('NFC'));
      }),
    );
  });

  it.each([
    ['invoice\u202Efdp.exe', 'path must not contain bidirectional control characters (U+202E at offset 7): rename the file without them'],
    ['a\u202Ab.ts', 'bidirectional control characters (U+202A at offset 1)'],
    ['src/\u2066x\u2069.ts', 'bidirectional control characters (U+2066 at offset 4)'],
    ['a\u200Eb', 'bidirectional control characters (U+200E at offset 1)'],
    ['a\u200Fb', 'bidirectional control characters (U+200F at offset 1)'],
    ['\u061Cملف.txt', 'bidirectional control characters (U+061C at offset 0)'],
    ['pay\u200Bpal.txt', 'path must not contain invisible or format characters (U+200B at offset 3): rename the file without them'],
    ['a\u200Cb', 'invisible or format characters (U+200C at offset 1)'],
    ['a\u200Db', 'invisible or format characters (U+200D at offset 1)'],
    ['\uFEFFconfig.ts', 'invisible or format characters (U+FEFF at offset 0)'],
    ['re\u00ADport.md', 'invisible or format characters (U+00AD at offset 2)'],
    ['a\u2060b', 'invisible or format characters (U+2060 at offset 1)'],
  ])('refuses hidden characters: %j', (path, why) => {
    expect(artifactPathProblem(path)).toContain(why);
    expect(ArtifactPathSchema.safeParse(path).success).toBe(false);
  });

  it.each([
    ['p\u0430ypal.txt', 'Cyrillic U+0430 at offset 1'],
    ['src/g\u03BF\u03BFgle/index.ts', 'Greek U+03BF at offset 5'],
    ['\u0440\u0430y.md', 'Latin U+0079 at offset 2'],
    ['\u0391\u0412.txt', 'Cyrillic U+0412 at offset 1'],
  ])('refuses a word that mixes Latin, Cyrillic or Greek letters: %j', (path, where) => {
    const problem = artifactPathProblem(path);
    expect(problem).toContain('path must not mix Latin, Cyrillic and Greek letters in one word');
    expect(problem).toContain(where);
    expect(problem).toContain('spell each word in one alphabet');
  });

  it.each(['\u043e\u0442\u0447\u0451\u0442.txt', '\u5831\u544a.txt', 'caf\u00e9.txt', 'cafe\u0301.txt', 'docs/\u03bb-calculus.md', '\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac/\u03c3\u03b7\u03bc\u03b5\u03b9\u03ce\u03c3\u03b5\u03b9\u03c2.md', '\u0645\u0644\u0641.txt', 'na\u00efve/\u00fcber_\u0434\u0430\u043d\u043d\u044b\u0435.ts', '\u30ec\u30dd\u30fc\u30c8 2024.txt'])(
    'accepts plain names in any script: %j',
    (path) => {
      expect(artifactPathProblem(path)).toBeUndefined();
      expect(ArtifactPathSchema.safeParse(path).success).toBe(true);
    },
  );

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
