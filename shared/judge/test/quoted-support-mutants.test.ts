import { describe, expect, it } from 'vitest';
import { checkQuotedSupport, type QuotedItem } from '../src/quoted-support.js';

const item = (summary: string, id = 'ev-1'): QuotedItem => ({ id, kind: 'tool_result', success: true, summary });
const pr = item('gh pr view 482 --json state,baseRefName\n{"baseRefName":"main", "state":"MERGED"}', 'ev-3');
const merged = { text: 'Merged PR #482 into main', kind: 'action' as const };

describe('checkQuotedSupport: where the quote sits', () => {
  it('finds a quote with stray spaces and quotation marks around it, and gives the span of the item\'s own words', () => {
    expect(checkQuotedSupport(merged, '  "gh pr view 482"  ', pr)).toEqual({ ok: true, span: { evidenceId: 'ev-3', start: 0, end: 14, text: 'gh pr view 482' } });
    expect(checkQuotedSupport(merged, 'pr view 482', pr)).toEqual({ ok: true, span: { evidenceId: 'ev-3', start: 3, end: 14, text: 'pr view 482' } });
  });

  it('quotes the words inside the summary, not the whole summary', () => {
    const mail = item('mail sent: emailed the weekly report to Lang at 09:00');
    expect(checkQuotedSupport({ text: 'Emailed the weekly report to Lang', kind: 'action' }, 'emailed the weekly report to Lang', mail)).toEqual({
      ok: true,
      span: { evidenceId: 'ev-1', start: 11, end: 44, text: 'emailed the weekly report to Lang' },
    });
  });

  it('finds nothing for an empty quote', () => {
    expect(checkQuotedSupport(merged, '', pr)).toEqual({ ok: false, why: 'the quoted words are not in ev-3' });
    expect(checkQuotedSupport(merged, '  ""  ', pr)).toEqual({ ok: false, why: 'the quoted words are not in ev-3' });
  });
});

describe('checkQuotedSupport: the names the claim states', () => {
  const mail = item('mail sent: emailed the weekly report to Lang at 09:00');

  it('compares a name as written, but for a plural s', () => {
    expect(checkQuotedSupport({ text: 'Emailed the weekly report to Lange', kind: 'action' }, 'emailed the weekly report to Lang', mail)).toEqual({ ok: false, why: 'the quote does not carry "Lange"' });
    expect(checkQuotedSupport({ text: 'Emailed the weekly report to Langs', kind: 'action' }, 'emailed the weekly report to Lang', mail)).toMatchObject({ ok: true });
  });

  it('takes an all-capitals word for a name, whatever its part of speech', () => {
    const fix = item('fixed the bug in the parser, released ASAP');
    expect(checkQuotedSupport({ text: 'fixed the bug ASAP', kind: 'action' }, 'fixed the bug', fix)).toEqual({ ok: false, why: 'the quote does not carry "ASAP"' });
  });
});

describe('checkQuotedSupport: how much the quote shares with the claim', () => {
  const backup = item('backup job finished: nightly snapshot stored');
  const finished = { text: 'the backup job finished', kind: 'statement' as const };

  it('needs two of the claim\'s words when it states no value or name', () => {
    expect(checkQuotedSupport(finished, 'backup job', backup)).toEqual({ ok: true, span: { evidenceId: 'ev-1', start: 0, end: 10, text: 'backup job' } });
    expect(checkQuotedSupport(finished, 'job finished', backup)).toEqual({ ok: true, span: { evidenceId: 'ev-1', start: 7, end: 19, text: 'job finished' } });
    expect(checkQuotedSupport(finished, 'finished', backup)).toEqual({ ok: false, why: 'the quote shares too little with the claim to be about it' });
    expect(checkQuotedSupport(finished, 'nightly snapshot stored', backup)).toEqual({ ok: false, why: 'the quote shares too little with the claim to be about it' });
  });

  it('is content with the claim\'s values and names when it states them', () => {
    // One shared word, but the quote carries the version the claim states.
    expect(checkQuotedSupport({ text: 'Deployed api 4.2 to production', kind: 'action' }, 'api 4.2', item('api 4.2: 3 of 3 pods ready'))).toEqual({
      ok: true,
      span: { evidenceId: 'ev-1', start: 0, end: 7, text: 'api 4.2' },
    });
    // A name and no value.
    expect(checkQuotedSupport({ text: 'Emailed Lang', kind: 'action' }, 'Lang', item('mail sent to Lang'))).toEqual({ ok: true, span: { evidenceId: 'ev-1', start: 13, end: 17, text: 'Lang' } });
  });
});

describe('checkQuotedSupport: what the quote reports', () => {
  it('accepts a quote that carries what the claim names, without every word of it', () => {
    expect(checkQuotedSupport(merged, 'gh pr view 482', pr)).toEqual({ ok: true, span: { evidenceId: 'ev-3', start: 0, end: 14, text: 'gh pr view 482' } });
  });

  it('refuses a quote that reports a partial or failed result, even if it does not show the whole claim', () => {
    const deployed = { text: 'Deployed api 4.2 to production', kind: 'action' as const };
    expect(checkQuotedSupport(deployed, 'api 4.2: 2 of 3 pods ready', item('api 4.2: 2 of 3 pods ready'))).toEqual({ ok: false, why: 'the quoted words report a negative or unfinished result' });
    expect(checkQuotedSupport(deployed, 'api 4.2 failed', item('api 4.2 failed'))).toEqual({ ok: false, why: 'the quoted words report a negative or unfinished result' });
    expect(checkQuotedSupport(deployed, 'deploy api 4.2 to production: pending', item('deploy api 4.2 to production: pending, waiting for approval'))).toEqual({
      ok: false,
      why: 'the quoted words report a negative or unfinished result',
    });
  });
});
