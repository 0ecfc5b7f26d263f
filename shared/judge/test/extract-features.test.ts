import { describe, expect, it } from 'vitest';
import {
  describeFeature,
  evidenceFeatures,
  extractFeatures,
  featureWeight,
  isPath,
  isRequiredFeature,
  stem,
  toolFeature,
  toolNameCandidates,
} from '../src/extract-features.js';

/**
 * The judge links a claim to evidence only through these features, and a
 * required feature (url, file, quote, id, a number of two digits) must be
 * shown by the evidence: each shape of token is pinned here, so a change to
 * the tokenizer shows which texts it reads differently.
 */
const features = (text: string) => [...extractFeatures(text)].sort();

describe('extractFeatures', () => {
  it.each([
    // URLs: the whole (its path's case kept), the origin, and the last segment as a file; a trailing slash or mark is not part of it.
    ['See https://Example.com/a/Health%20Check/ now.', ['file:health check', 'url:https://example.com', 'url:https://example.com/a/Health%20Check', 'word:see']],
    ['https://example.com/.', ['url:https://example.com']],
    ['https://x.io/a', ['url:https://x.io', 'url:https://x.io/a']],
    ['https://x.io/p?q=1,', ['url:https://x.io', 'url:https://x.io/p?q=1']],
    ['http://[bad', ['url:http://[bad']],
    ['https://x.io/a/%E0%A4%A', ['file:%e0%a4%a', 'url:https://x.io', 'url:https://x.io/a/%E0%A4%A']],
    // Paths: by base name; words joined by a slash are not one.
    ['src/app/main.ts', ['file:main.ts']],
    ['docs/readme.md', ['file:readme.md']],
    ['/etc/hosts', ['file:hosts']],
    ['./run', ['file:run']],
    ['../up', ['file:up']],
    ['~/x', ['file:x']],
    ['C:\\Users\\me\\file.txt', ['file:file.txt']],
    ['and/or', []],
    ['dir/', ['word:dir']],
    ['logs/2024/', ['id:logs/2024/']],
    // Versions, files, and English abbreviations (nothing).
    ['v1.2.3', ['id:v1.2.3']],
    ['2.14.3-rc.1', ['id:2.14.3-rc.1']],
    ['3.0', ['id:3.0']],
    ['config.yaml', ['file:config.yaml']],
    ['x.y.', ['file:x.y']],
    ['e.g. this, i.e', []],
    // Numbers: without separators, sign or unit.
    ['12,480', ['num:12480']],
    ['+5', ['num:5']],
    ['-3.5%', ['num:-3.5']],
    ['15ms', ['num:15']],
    ['1,2', ['num:1', 'num:2']],
    ['12:30', ['num:12', 'num:30']],
    // Identifiers.
    ['#311', ['id:#311']],
    ['@alice', ['id:@alice']],
    ['abc123', ['id:abc123']],
    ['snake_case', ['id:snake_case']],
    ['_x', []],
    ['getUser', ['id:getuser']],
    ['GetUser', ['id:getuser']],
    ['iPhone', ['id:iphone']],
    ['orders-restore-test', ['id:orders-restore-test', 'word:order', 'word:restor', 'word:test']],
    ['checkout.totalAmountValue', ['id:checkout.totalamountvalue', 'word:checkout', 'word:totalamountvalu']],
    ['foo.bar-baz', ['id:foo.bar-baz', 'word:bar', 'word:baz', 'word:foo']],
    // Weaker names: English compounds and acronyms.
    ['end-to-end', ['name:end-to-end', 'word:end']],
    ['follow-up', ['name:follow-up', 'word:follow']],
    ['API', ['name:api']],
    ['APIs', ['name:api']],
    ['PRs', ['name:pr']],
    ['CAN', []],
    // Words: stemmed, stopwords and short words dropped, punctuation and possessives stripped.
    ['Deployed the', ['word:deploy']],
    ['ab', []],
    ["it's Alice's", ['word:alic']],
    ['...hello?!', ['word:hello']],
    ['word*', ['word:word']],
    ['key:value', ['word:key', 'word:valu']],
    ['Rollout: done!', ['word:rollout']],
    // Quotes of every kind, spaces folded; an empty one is nothing.
    ['"Hello   World"', ['quote:hello world', 'word:hello', 'word:world']],
    ['“curly”', ['quote:curly', 'word:curly']],
    ['`code`', ['quote:code', 'word:cod']],
    ['‘single’', ['quote:single', 'word:singl']],
    ["said 'quoted text' here", ['quote:quoted text', 'word:quot', 'word:said', 'word:text']],
    ['" "', []],
  ])('%s', (text, expected) => {
    expect(features(text)).toEqual([...expected].sort());
  });
});

describe('URLs', () => {
  it('drops every trailing slash and trailing punctuation mark, and keeps a last segment of two letters as a file', () => {
    expect(features('see https://a.io/ab// now')).toEqual(['file:ab', 'url:https://a.io', 'url:https://a.io/ab', 'word:see']);
    expect(features('see https://a.io/ab.. now')).toEqual(['file:ab', 'url:https://a.io', 'url:https://a.io/ab', 'word:see']);
    expect(features('https://a.io/x/')).toEqual(['url:https://a.io', 'url:https://a.io/x']);
  });
});

describe('acronyms and tool candidates', () => {
  it('drops only the plural s at the end of an acronym, and keeps a two-letter tool name', () => {
    expect(features('SKUs')).toEqual(['name:sku']);
    expect(toolNameCandidates('go run')).toContain('tool:go');
  });
});

describe('stem', () => {
  it.each([
    ['deployed', 'deploy'],
    ['deploys', 'deploy'],
    ['deployment', 'deploy'],
    ['deploying', 'deploy'],
    ['Applications', 'applic'],
    ['copies', 'copy'],
    ['copied', 'copy'],
    ['carried', 'carry'],
    ['uses', 'use'],
    ['make', 'mak'],
    ['ale', 'ale'],
    ['bed', 'bed'],
    ['tied', 'tied'],
    ['ings', 'ing'],
  ])('%s → %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });
});

describe('feature weights and kinds', () => {
  it('weighs a strong feature 3 or 4, a name or a number of two digits 2, a one-digit number or a word 1', () => {
    expect(['url:x', 'file:x', 'quote:x', 'id:x', 'tool:x', 'name:x', 'num:12', 'num:1.5', 'num:7', 'word:x', 'other:x'].map(featureWeight)).toEqual([4, 3, 3, 3, 3, 2, 2, 2, 1, 1, 1]);
  });

  it('requires of evidence the details a claim can be wrong about', () => {
    expect(['url:x', 'file:x', 'quote:x', 'id:x', 'num:42', 'num:4', 'name:x', 'word:x', 'tool:x'].map(isRequiredFeature)).toEqual([true, true, true, true, true, false, false, false, false]);
  });

  it('describes a feature as a person reads it', () => {
    expect([describeFeature('quote:a b'), describeFeature('tool:kubectl'), describeFeature('id:v1.2'), describeFeature('url:https://x.io/a:b')]).toEqual(['"a b"', 'tool kubectl', 'v1.2', 'https://x.io/a:b']);
  });

  it('names a tool trimmed and lower-cased', () => {
    expect(toolFeature(' Kubectl ')).toBe('tool:kubectl');
  });
});

describe('isPath', () => {
  it.each([
    ['/', false],
    ['a/b', false],
    ['a/b/c', true],
    ['a/b.md', true],
    ['/x', true],
    ['.\\x', false],
    ['C:\\x', true],
  ])('%s → %s', (token, expected) => {
    expect(isPath(token)).toBe(expected);
  });
});

describe('tool names', () => {
  it('offers each word-like token of a text, and its stem, as a tool it may name', () => {
    expect(toolNameCandidates('Ran kubectl.apply -- and .x GIT_push deploys')).toEqual(['tool:ran', 'tool:kubectl.apply', 'tool:and', 'tool:git_push', 'tool:deploys', 'tool:deploy']);
  });

  it("adds an observation's tool as a tool feature and as words", () => {
    expect([...evidenceFeatures('ok done', ' Git-Push2 ')].sort()).toEqual(['tool:git-push2', 'word:git', 'word:push']);
    expect([...evidenceFeatures('ok done', undefined)]).toEqual([]);
    expect([...evidenceFeatures('ok done', '')]).toEqual([]);
  });
});
