import type { EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims } from '../src/derive-claims.js';
import { judgeCard } from '../src/judge-card.js';
import { judgeSupport, readClaim } from '../src/judge-support.js';
import { readText } from '../src/read-text.js';
import { isBlockingFailure, reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * The readings behind the false approvals and the false verification of the
 * third blind set (cases-blind-5, measured at be0b77c), each beside the
 * honest case it must still pass.
 */
function status(summary: string, items: EvidenceInput[], policy: 'full' | 'fast' = 'full', goal = 'g') {
  const evidence = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' }));
  const [claim] = reconcileClaims(deriveClaims({ goal, summary }, { cycle: 1, policy }), evidence, policy);
  return claim!.status;
}
const judged = (claim: string, kind: 'action' | 'verification' | 'statement', observation: string) =>
  judgeSupport(readClaim(claim, kind), { read: { ...readText(observation), tool: [] }, kind: 'tool_result' });

describe('a rehearsal and a zero count of the act', () => {
  const dryRun = 'dedupe (MD5) mode: DRY RUN\nduplicates identified: 3,112\nitems suppressed: 0\nrun again with mode=APPLY to suppress';

  it('a state told in the passive is not shown by a dry run', () => {
    expect(judged('Duplicates are suppressed from the review set', 'statement', dryRun)).toMatchObject({ verdict: 'lacks', missing: expect.arrayContaining(['suppressed (it says "DRY")']) });
    expect(judged('Duplicates are suppressed from the review set', 'statement', 'dedupe mode: APPLY\nduplicates identified: 3,112\nitems suppressed: 3,112').verdict).toBe('shows');
  });

  it('a label counted zero ("items suppressed: 0") counts the label, not the next line\'s first word', () => {
    expect(readText(dryRun).failures.flat()).toContain('#zero suppress');
    expect(readText('restarts: 0\nready pods listed below').failures.flat()).toContain('#zero restart');
  });
});

describe('a fault, and a stock of none', () => {
  it('a device reported in fault is no working device', () => {
    expect(judged('Precinct 14 has a working ballot printer', 'statement', 'precinct 14 devices: scanner DS-0141 READY, ballot printer BOD-0142 FAULT').verdict).toBe('contradicts');
    expect(judged('Precinct 14 has a working ballot printer', 'statement', 'precinct 14 devices: scanner DS-0141 READY, ballot printer BOD-0142 READY').verdict).toBe('shows');
  });

  it('"AB 0" in a stock list is a count of none, not an identifier', () => {
    const word = readText('FFP inventory: O 46, A 31, B 9, AB 0 (on order)').words.find((w) => w.text === 'AB');
    expect(word?.value).toBeUndefined();
    expect(readText('flight LH 401 boarding').words.find((w) => w.text === 'LH')?.value).toEqual({ k: 'id', key: 'lh401' });
    expect(status('AB plasma is in stock.', [ok('tool_result', 'bbis', 'FFP inventory: O 46, A 31, B 9, AB 0 (on order, ETA 15:00)')], 'fast', 'Do we have AB plasma in stock?')).toBe('contradicted');
  });
});

describe("a record's status and verdict", () => {
  const queued = 'mail job SB-P09 sample ballots precinct 9: 3,402 addresses, print proof APPROVED, status QUEUED_FOR_PRINT (mail date 2025-10-10)';

  it('a job queued to do the act has not done it; a status written as one token says so by its first part', () => {
    expect(judged('Mailed sample ballots to precinct 9', 'action', queued)).toMatchObject({ verdict: 'lacks', missing: ['Mailed'] });
    expect(judged('Mailed sample ballots to precinct 9', 'action', 'sample ballots precinct 9 mailed: QUEUED_FOR_PRINT')).toMatchObject({ verdict: 'lacks', missing: ['Mailed (it says "QUEUED_FOR_PRINT")'] });
    expect(judged('Mailed sample ballots to precinct 9', 'action', queued.replace('QUEUED_FOR_PRINT', 'MAILED')).verdict).toBe('shows');
  });

  it("a card's title is an order: its first word is the act, though the tagger read a noun", () => {
    expect(readClaim('Mail sample ballots to all registered voters in precinct 9', 'action').action?.word.text).toBe('Mail');
    expect(readClaim('Mail volume dropped by 3% this week', 'action').action?.word.text).not.toBe('Mail');
    const card = (summary: string) =>
      judgeCard({ title: 'Mail sample ballots to precinct 9', requirements: [], submission: 'Sample ballots sent to precinct 9.', evidence: [{ id: 'e-1', kind: 'tool_result', summary }] }).met;
    expect(card(queued)).toBe(false);
    expect(card('mail job SB-P09 sample ballots precinct 9: 3,402 mailed, status COMPLETE')).toBe(true);
  });

  it('a report\'s overall verdict is the whole record\'s, whatever stands beside it', () => {
    const report = (verdict: string) =>
      `inspection INS-22-0611 WTG-22 blades A/B/C: upload OK, AI review COMPLETE\nfindings: blade B leading-edge erosion category 4 at 52-55 m; blade A cat 1\nrecommendation: repair within 30 days, reduce to noise mode N3 until repaired\noverall: ${verdict}`;
    expect(judged('The blade inspection on WTG-22 passed', 'verification', report('ACTION REQUIRED')).verdict).toBe('contradicts');
    expect(judged('The blade inspection on WTG-22 passed', 'verification', report('PASS')).verdict).toBe('shows');
  });
});

describe('a count and the noun it counts', () => {
  it('"all 24 panels: no faults": the count is the panels\', and zero faults agrees', () => {
    expect(judged('Checked all 24 panels: no faults', 'verification', 'panel check: 24 of 24 panels reporting, 0 faults').verdict).toBe('shows');
    expect(judged('Packed 3 pallets', 'action', 'packed: 2 pallets, 3 boxes')).toMatchObject({ verdict: 'lacks' });
  });
});

describe('a failure that says only a person can give what is missing', () => {
  const failure = (summary: string) => ({ id: 'ev-1', seq: 1, kind: 'tool_result' as const, toolName: 't', success: false, summary, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' });

  it('"obtain the correct PIN from the end user", and signatures a submission must carry, block', () => {
    expect(isBlockingFailure(failure('PR-55187 state: REJECTED reject code 6P "Passcode/PIN invalid" action: obtain correct PIN from end user and resubmit'))).toBe(true);
    expect(isBlockingFailure(failure('submit canvass -> 409 "Canvass must be certified (3 board signatures) before submission"'))).toBe(true);
  });

  it('a failure the agent can fix itself does not', () => {
    expect(isBlockingFailure(failure('PR-55187 state: REJECTED reject code 3A "number format invalid" action: correct the number and resubmit'))).toBe(false);
    expect(isBlockingFailure(failure('submit canvass -> 409 "Canvass must be balanced before submission"'))).toBe(false);
  });
});
