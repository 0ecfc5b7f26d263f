import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyClaim, deriveClaims, segmentClaims, splitSentences } from '../src/derive-claims.js';
import { extractFeatures } from '../src/extract-features.js';
import { TASK_DOMAINS } from '@vouch/testing';

describe('claim extraction across unrelated task domains', () => {
  for (const domain of TASK_DOMAINS) {
    it(`splits and grades the claims of a ${domain.name} task`, () => {
      const claims = deriveClaims({ goal: domain.goal, summary: domain.summary }, { cycle: 1 });
      expect(claims.map((c) => ({ text: c.text, kind: c.kind, materiality: c.materiality }))).toEqual(domain.expected);
      expect(claims.map((c) => c.id)).toEqual(domain.expected.map((_, i) => `cl-1-${i + 1}`));
      expect(claims.every((c) => c.source === 'task_complete_summary')).toBe(true);
    });
  }

  it('has no branch, list or word that belongs to any of those domains', () => {
    const dir = join(import.meta.dirname, '../src');
    const code = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n')
      // Comments may explain with examples; only code can branch.
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '')
      .toLowerCase();
    for (const word of TASK_DOMAINS.flatMap((d) => d.vocabulary)) expect(code, word).not.toContain(word);
  });
});

describe('segmentation', () => {
  it('keeps file names, versions, decimals and URLs inside one sentence', () => {
    expect(splitSentences('Saved out.v2.json and v1.2.3 at 3.5 ms. See https://x.example.com/a.b?c=1. Done.')).toEqual([
      'Saved out.v2.json and v1.2.3 at 3.5 ms.',
      'See https://x.example.com/a.b?c=1.',
      'Done.',
    ]);
  });

  it('splits list items, and clauses where a conjunction starts a new predicate', () => {
    const text = '- Updated a.txt and b.txt\n- Rebuilt the image, pushed it and then restarted node-3; logs are clean\n1. Ran the checks';
    expect(segmentClaims(text).map((s) => s.text)).toEqual(['Updated a.txt and b.txt', 'Rebuilt the image', 'pushed it', 'restarted node-3', 'logs are clean', 'Ran the checks']);
  });

  it('lets a hedge at the head of a sentence cover every clause of it', () => {
    const [first, second] = segmentClaims('I think I fixed issue #12 and deployed build_7.');
    expect(first).toMatchObject({ text: 'I think I fixed issue #12', hedged: true });
    expect(second).toMatchObject({ text: 'deployed build_7', hedged: true });
    expect(classifyClaim(second!.text, second!)).toEqual({ kind: 'hedged', materiality: 'medium' });
  });
});

describe('materiality from generic cues', () => {
  it.each([
    ['Updated the schedule for 2025-04-01', 'action', 'high'],
    ['The invoice was sent to the client', 'action', 'high'],
    ['All 31 checks pass', 'verification', 'high'],
    ['Confirmed the numbers match the ledger total', 'verification', 'high'],
    ['This should fix the crash in parser.c', 'hedged', 'medium'],
    ['This should fix the crash', 'hedged', 'low'],
    ['It might be worth a second look', 'hedged', 'low'],
    ['I will send the summary tomorrow', 'plan', 'low'],
    ['Could not reach the second server', 'limitation', 'low'],
    ['Fixed the upload that failed to resume', 'action', 'high'],
    ['The capital of Australia is Canberra', 'statement', 'medium'],
    ['Do you want me to continue?', 'aside', 'low'],
    ['Here is what I did:', 'aside', 'low'],
    ['Answered the question about train times', 'aside', 'low'],
    ['Explained the error in parser.c', 'action', 'high'],
    ['Thanks', 'aside', 'low'],
  ])('%s → %s, %s', (text, kind, materiality) => {
    expect(classifyClaim(text)).toEqual({ kind, materiality });
  });

  it('derives a claim over the goal when the attempt says nothing concrete', () => {
    const claims = deriveClaims({ goal: 'Rename every *.jpeg in photos/2024 to *.jpg', summary: 'All done!' }, { cycle: 2 });
    expect(claims.at(-1)).toMatchObject({ id: 'cl-2-2', source: 'derived', kind: 'action', materiality: 'high', text: 'The goal was achieved: Rename every *.jpeg in photos/2024 to *.jpg' });
  });

  it('under the fast policy, claims an action goal whose outcome the texts do not show, and leaves an answered question light', () => {
    const vague = deriveClaims({ goal: 'Deploy release 4.2 of the billing service to production', summary: 'Done, all good.' }, { cycle: 1, policy: 'fast' });
    expect(vague.at(-1)).toMatchObject({ source: 'derived', materiality: 'high', text: 'The goal was achieved: Deploy release 4.2 of the billing service to production' });
    const shown = deriveClaims({ goal: 'Deploy release 4.2 of the billing service to production', summary: 'Deployed release 4.2 of the billing service to production.' }, { cycle: 1, policy: 'fast' });
    expect(shown.map((c) => c.source)).toEqual(['task_complete_summary']);
    const answered = deriveClaims({ goal: 'What is the capital of Peru?', summary: 'Answered.', visibleAnswer: 'Lima.' }, { cycle: 1, policy: 'fast' });
    expect(answered.find((c) => c.source === 'derived')).toMatchObject({ materiality: 'medium' });
  });

  it('keeps a claim made in both the summary and the visible answer once', () => {
    const claims = deriveClaims({ goal: 'g', summary: 'Wrote notes.md.', visibleAnswer: 'Wrote notes.md. Ping me for more.' }, { cycle: 1 });
    expect(claims.map((c) => [c.text, c.source])).toEqual([
      ['Wrote notes.md', 'task_complete_summary'],
      ['Ping me for more', 'assistant_visible_text'],
    ]);
  });

  it('names the specific details a claim needs evidence for', () => {
    const [claim] = deriveClaims({ goal: 'g', summary: 'Deployed api-gw v1.4.2 to https://api.example.net/v1 with "blue" colour.' }, { cycle: 1 });
    expect(claim?.evidenceRequirement).toBe(
      'a successful observation (tool result, file change or delivery result) that it was done, mentioning v1.4.2, "blue", https://api.example.net/v1',
    );
  });
});

describe('salient features', () => {
  it('extracts files, paths, URLs, identifiers, numbers and quoted strings', () => {
    const features = [...extractFeatures('Moved /srv/data/Q3.xlsx to `archive` (1,204 rows) for PR #88 via getUser() in user_svc; see https://Docs.Example.com/a/ and "exact title".')].sort();
    expect(features).toEqual(
      expect.arrayContaining([
        'file:q3.xlsx',
        'quote:archive',
        'quote:exact title',
        'num:1204',
        'id:#88',
        'id:user_svc',
        'url:https://docs.example.com/a',
        'url:https://docs.example.com',
        'word:mov',
      ]),
    );
    expect(features.some((f) => f.startsWith('word:the') || f === 'word:for')).toBe(false);
  });
});
