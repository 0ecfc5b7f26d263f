import type { EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { readText } from '../src/read-text.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * Whose result a negative word is, and which value a word belongs to: the
 * readings behind false holds of the issue-16 blind set, each beside the
 * trap that keeps it from approving what it must not.
 */
function judge(claim: string, items: EvidenceInput[]) {
  const evidence = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' }));
  const [reconciled] = reconcileClaims(deriveClaims({ goal: 'g', summary: claim }, { cycle: 1 }).slice(0, 1), evidence, 'full');
  return reconciled!;
}

describe('a negative word in a segment about another subject', () => {
  it('"moderation pending" beside "graded 28/28" is the moderation\'s state, not the marking\'s', () => {
    expect(judge('All 28 scripts for 10B physics are marked.', [ok('tool_result', 'markbook', 'Physics mock — class 10B: scripts 28, graded 28/28, remaining 0, moderation pending')]).status).toBe('supported');
  });

  it('a failure word in a segment with no subject of its own is still the result', () => {
    expect(judge('All 28 scripts for 10B physics are marked.', [ok('tool_result', 'markbook', 'Physics mock — class 10B: scripts 28, graded 28/28, remaining 0, pending')]).status).toBe('contradicted');
  });

  it('a zero count in such a segment stays the result: "0 of 3 pods ready"', () => {
    expect(judge('Deployed api 4.2 to production.', [ok('tool_result', 'deploy', 'deploy api 4.2 to production: rolled back, 0 of 3 pods ready')]).status).not.toBe('supported');
  });

  it('"no contempt risk" after the head is an absence the claim does not speak of', () => {
    expect(judge('Published courts story 88255.', [ok('tool_result', 'cms', 'story 88255 published: reviewed by legal, no contempt risk, live at 09:14')]).status).toBe('supported');
  });

  it('"no acknowledgement from valve" names the claimed valve, and stays a negative result', () => {
    expect(judge('Opened valve V-12 on the north line.', [ok('tool_result', 'controller', 'open valve V-12 on north line: command sent, no acknowledgement from valve')]).status).not.toBe('supported');
  });
});

describe('absences and states', () => {
  it('"no server crashes" is shown by a query for crashes that counted 0', () => {
    expect(judge('Since hotfix 2.7.2 went out there have been no server crashes.', [ok('tool_result', 'crash-reporter', 'query crashes where build = "2.7.2" (6h window, 48 servers): 0 reports')]).status).toBe('supported');
  });

  it('the same query counting 3 does not show it', () => {
    expect(judge('Since hotfix 2.7.2 went out there have been no server crashes.', [ok('tool_result', 'crash-reporter', 'query crashes where build = "2.7.2" (6h window, 48 servers): 3 reports')]).status).not.toBe('supported');
  });

  it('"status AVAILABLE → QUARANTINE": the state now is the one after the arrow', () => {
    expect(judge('Quarantined insulin glargine lot 4471B.', [ok('tool_result', 'pharmacy-ims', 'lot 4471B (insulin glargine pen): status AVAILABLE → QUARANTINE; 64 units moved to bin Q-02')]).status).toBe('supported');
  });

  it('"status QUARANTINE → AVAILABLE" is the release, not the quarantine', () => {
    expect(judge('Quarantined insulin glargine lot 4471B.', [ok('tool_result', 'pharmacy-ims', 'lot 4471B (insulin glargine pen): status QUARANTINE → AVAILABLE; 64 units moved to bin A-01')]).status).not.toBe('supported');
  });
});

describe('values', () => {
  it('three digit groups are one identifier, two are a range', () => {
    expect(readText('MEL 25-31-01 cat C').words.find((w) => w.text === '25-31-01')?.value).toEqual({ k: 'id', key: '253101' });
    expect(readText('from 2015-2025').words.filter((w) => w.value?.k === 'num').map((w) => w.text)).toEqual(['2015', '2025']);
  });

  it('a capital letter with a full stop before a name is an initial, not a label', () => {
    expect(readText('adjuster M. Soto').words.find((w) => w.text === 'M')?.value).toBeUndefined();
    expect(readText('zone B is closed').words.find((w) => w.text === 'B')?.value).toEqual({ k: 'id', key: 'zoneb' });
  });

  it('a word after another value of the claim is that value\'s: "212 pages at 600 ppi", "500 at 300 dpi"', () => {
    expect(judge('Scanned box 14: 212 pages at 600 ppi.', [ok('tool_result', 'scanner', 'box 14 scan finished: 212 pages, 600 ppi')]).status).toBe('supported');
    expect(judge('Printed 500 at 300 dpi.', [ok('tool_result', 'printer', 'print job finished: 500 copies, 300 dpi')]).status).toBe('supported');
  });

  it('a different count beside the word is still another value: "212 pages" against "208 pages"', () => {
    expect(judge('Scanned box 14: 212 pages at 600 ppi.', [ok('tool_result', 'scanner', 'box 14 scan finished: 208 pages, 600 ppi')]).status).not.toBe('supported');
  });
});
