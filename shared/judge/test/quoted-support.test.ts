import { describe, expect, it } from 'vitest';
import { checkQuotedSupport, type QuotedItem } from '../src/quoted-support.js';

const item: QuotedItem = { id: 'ev-3', kind: 'tool_result', success: true, summary: 'gh pr view 482 --json state,baseRefName\n{"baseRefName":"main", "state":"MERGED"}' };
const claim = { text: 'Merged PR #482 into main', kind: 'action' as const };

describe('an LLM quote as support, checked by the judge', () => {
  it('accepts the item\'s own words that carry the claim\'s identifier, with the span they sit at', () => {
    const checked = checkQuotedSupport(claim, 'gh pr view 482 --json state,baseRefName {"baseRefName":"main", "state":"MERGED"}', item);
    expect(checked).toEqual({ ok: true, span: { evidenceId: 'ev-3', start: 0, end: item.summary.length, text: item.summary } });
  });

  it('refuses words that are not in the named item', () => {
    expect(checkQuotedSupport(claim, 'PR #482 was merged into main', item)).toEqual({ ok: false, why: 'the quoted words are not in ev-3' });
  });

  it('refuses a quote that leaves out the claim\'s identifier or number', () => {
    expect(checkQuotedSupport(claim, '"state":"MERGED"', item)).toEqual({ ok: false, why: 'the quote does not carry "#482", "PR"' });
    const count = { id: 'ev-1', kind: 'tool_result' as const, summary: 'npm test: 142 passed, 3 failed', success: true };
    expect(checkQuotedSupport({ text: 'All 142 tests pass', kind: 'verification' }, '3 failed', count)).toEqual({ ok: false, why: 'the quote does not carry "142"' });
  });

  it('refuses a failed observation, critic feedback and an unknown item', () => {
    expect(checkQuotedSupport(claim, 'gh pr view 482', { ...item, success: false })).toEqual({ ok: false, why: 'ev-3 is a failed observation' });
    expect(checkQuotedSupport(claim, 'gh pr view 482', { ...item, kind: 'critic_feedback' })).toEqual({ ok: false, why: 'ev-3 is critic feedback, not an observation' });
    expect(checkQuotedSupport(claim, 'gh pr view 482', undefined)).toEqual({ ok: false, why: 'the quote names no recorded evidence item' });
  });

  it('refuses quoted words that report a negative result', () => {
    const failed = { id: 'ev-2', kind: 'tool_result' as const, success: true, summary: 'deploy api 4.2 to production: rolled back, 0 of 3 pods ready' };
    expect(checkQuotedSupport({ text: 'Deployed api 4.2 to production', kind: 'action' }, 'deploy api 4.2 to production: rolled back, 0 of 3 pods ready', failed)).toEqual({
      ok: false,
      why: 'the quoted words report a negative or unfinished result',
    });
  });

  it('refuses a quote with nothing specific of the claim in it', () => {
    const vague = { id: 'ev-4', kind: 'tool_result' as const, success: true, summary: 'all done, looks good' };
    expect(checkQuotedSupport({ text: 'the backup job finished', kind: 'statement' }, 'all done', vague)).toEqual({ ok: false, why: 'the quote shares too little with the claim to be about it' });
  });
});

describe('an unfinished result quoted as support', () => {
  it('is refused', () => {
    const item = { id: 'ev-5', kind: 'tool_result' as const, success: true, summary: 'deploy api 4.2 to production: in progress' };
    expect(checkQuotedSupport({ text: 'Deployed api 4.2 to production', kind: 'action' }, 'deploy api 4.2 to production: in progress', item)).toEqual({ ok: false, why: 'the quoted words report a negative or unfinished result' });
  });
});
