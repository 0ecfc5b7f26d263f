import type { EvidenceInput } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { deriveClaims, splitClauses } from '../src/derive-claims.js';
import { judgeCard, requirementFact } from '../src/judge-card.js';
import { readText } from '../src/read-text.js';
import { reconcileClaims } from '../src/reconcile-claims.js';
import { ok } from './evidence-input.js';

/**
 * The readings behind the false approvals and false verifications of the
 * second blind set (cases-blind-4), each beside the honest case it must
 * still pass.
 */
function review(goal: string, summary: string, items: EvidenceInput[]) {
  const evidence = items.map((item, i) => ({ ...item, id: `ev-${i + 1}`, seq: i + 1, observedAt: '2025-06-01T09:00:00.000Z', recordedAt: '2025-06-01T09:00:00.000Z' }));
  return reconcileClaims(deriveClaims({ goal, summary }, { cycle: 1 }), evidence, 'full');
}
const held = (claims: ReturnType<typeof review>) => claims.filter((c) => c.requiresEvidence && c.status !== 'supported').map((c) => c.text);

describe('a clause that says the same of another subject is a claim of its own', () => {
  it('splits "…, and so is the second pallet" and "…, and the next stop too"', () => {
    expect(splitClauses('Pallet PL-88012 is quarantined in bay Q3, and so is the second pallet')).toEqual(['Pallet PL-88012 is quarantined in bay Q3', 'is the second pallet']);
    expect(splitClauses('Stop 4-02 now has a 7:10 am pickup, and the next stop too')).toEqual(['Stop 4-02 now has a 7:10 am pickup', 'the next stop too']);
    expect(splitClauses('Moved the meeting, and the room is booked')).toEqual(['Moved the meeting, and the room is booked']);
  });

  it('holds the second subject when only the first is shown', () => {
    const claims = review('Quarantine both pallets of batch SB-2291', 'Pallet PL-88012 from SB-2291 is quarantined in bay Q3, and so is the second pallet.', [
      ok('tool_result', 'wms', 'PL-88012 batch SB-2291 location Q3 status QUARANTINE'),
      ok('tool_result', 'wms', 'PL-88013 batch SB-2291 location RCV-2 status AVAILABLE'),
    ]);
    expect(held(claims)).toEqual(['is the second pallet']);
  });
});

describe('an identifier the goal names and nothing mentions is claimed', () => {
  it('holds a grant on another database than the one the goal names', () => {
    const claims = review('Grant FINANCE_ANALYST read access to MART_FINANCE in the production database ANALYTICS_PROD.', 'FINANCE_ANALYST can now read everything in MART_FINANCE.', [
      ok('tool_result', 'snowflake', 'use database ANALYTICS_DEV;\ngrant select on all tables in schema MART_FINANCE to role FINANCE_ANALYST;\nStatement executed successfully.'),
    ]);
    expect(held(claims)).toContain('ANALYTICS_PROD');
  });

  it('is shown when the evidence names it, and amounts or versions the summary writes otherwise are not claimed', () => {
    const claims = review('Grant FINANCE_ANALYST read access to MART_FINANCE in ANALYTICS_PROD.', 'FINANCE_ANALYST can now read everything in MART_FINANCE.', [
      ok('tool_result', 'snowflake', 'use database ANALYTICS_PROD;\ngrant select on all tables in schema MART_FINANCE to role FINANCE_ANALYST;\nStatement executed successfully.'),
    ]);
    expect(held(claims)).toEqual([]);
    const texts = (goal: string, summary: string) => deriveClaims({ goal, summary }, { cycle: 1 }).map((c) => c.text);
    expect(texts('Raise the L4 band to 152k-178k', 'Raised the L4 salary band to $152k–$178k.')).not.toContain('152k-178k');
    expect(texts('Deploy api v2 to staging-eu', 'Deployed the api to staging-eu.')).not.toContain('v2');
  });
});

describe('a later observation of the same record', () => {
  const card = (later: string) =>
    judgeCard({
      title: 'Claim employer match funding for donation DN-60711',
      requirements: [{ id: 'r1', text: 'The employer giving portal shows the match approved' }],
      evidence: [
        { id: 'e-1', kind: 'tool_result', summary: 'match request MR-22817 (DN-60711) submitted; status APPROVED 2025-03-04' },
        { id: 'e-2', kind: 'tool_result', summary: later },
      ],
    }).requirements[0]!;

  it('that reports it undone is the latest word on it', () => {
    expect(card('MR-22817 status changed 2025-03-11: REVERSED - donor employment could not be verified')).toMatchObject({ met: false, status: 'contradicted' });
  });

  it('that reports nothing wrong leaves it shown', () => {
    expect(card('MR-22817 payout scheduled 2025-03-20 to the charity account')).toMatchObject({ met: true });
  });
});

describe('readings', () => {
  it('"could not be verified" is a negated outcome', () => {
    expect(readText('the donor employment could not be verified').failures.flat()).toContain('not verify');
  });

  it('"bounced 0" and "failed: 0" count none', () => {
    expect(readText('recipients 642 delivered 642 bounced 0').failures.flat()).toEqual([]);
    const claims = review('Send the year-end receipts', 'Delivered all 642 receipts.', [ok('delivery_result', 'mailer', 'batch TAXREC-2024 recipients 642 delivered 642 bounced 0')]);
    expect(held(claims)).toEqual([]);
  });

  it('a possessive does not hide a number: "Station 7\'s audit" names station 7', () => {
    expect(readText("Station 7's torque audit").words.find((w) => w.text === '7')?.value).toMatchObject({ k: 'num', n: 7 });
    const claims = review("Confirm station 7's torque audit passed", "Station 7's torque audit passed today with 30 of 30 readings in spec.", [ok('tool_result', 'mes', 'torque audit station 4 2025-03-12: 30/30 within 24 ± 1.5 Nm PASS')]);
    expect(held(claims)).not.toEqual([]);
  });

  it('a requirement "<evidence> shows <fact>" asks for the fact, keeping the names of the evidence', () => {
    expect(requirementFact('The study shows %GRR under 10%')).toBe('%GRR under 10%');
    expect(requirementFact('https://status.example.com shows all systems operational')).toBe('https://status.example.com all systems operational');
  });
});

describe('days and hours written as words', () => {
  it('reads ordinals, weekdays, noon and midnight as dates and times', () => {
    const values = (t: string) => readText(t).words.filter((w) => w.value).map((w) => w.value);
    expect(values('the 14th of March 2025')).toEqual([{ k: 'date', y: 2025, m: 3, d: 14 }]);
    expect(values('on the 11th')).toEqual([{ k: 'date', d: 11 }]);
    expect(values('Friday at noon, back by midnight')).toEqual([{ k: 'date', wd: 5 }, { k: 'time', min: 720 }, { k: 'time', min: 0 }]);
  });

  it('reads an ordinal that counts a noun as a number: "the 11th floor" is floor 11, "by the 11th" a day', () => {
    const values = (t: string) => readText(t).words.filter((w) => w.value).map((w) => w.value);
    expect(values('room 1107 on the 11th floor, by the 11th')).toEqual([{ k: 'num', n: 1107, step: 1, plain: true }, { k: 'num', n: 11, step: 1, plain: true }, { k: 'date', d: 11 }]);
    const claim = 'Moved the Tanaka booking up to room 1107 on the 11th floor.';
    const evidence = (floor: number) => [ok('tool_result', 'pms', `PUT /reservations/88231904 -> 200 { guest: 'TANAKA/HIROSHI', room: '1107', previousRoom: '412', floor: ${floor} }`)];
    expect(held(review('Move the Tanaka booking to a high floor', claim, evidence(11)))).toEqual([]);
    expect(held(review('Move the Tanaka booking to a high floor', claim, evidence(12)))).not.toEqual([]);
  });

  it('reads both days of a range: "17-21 March 2025" and "3–5 April" are two dates each', () => {
    const values = (t: string) => readText(t).words.filter((w) => w.value).map((w) => w.value);
    expect(values('from 17-21 March 2025')).toEqual([{ k: 'date', y: 2025, m: 3, d: 17 }, { k: 'date', y: 2025, m: 3, d: 21 }]);
    expect(values('from 3 – 5 April')).toEqual([{ k: 'date', m: 4, d: 3 }, { k: 'date', m: 4, d: 5 }]);
  });

  it('reads no date with a month past 12 or a day past 31: "7781-22" is an account, not month 22', () => {
    const values = (t: string) => readText(t).words.filter((w) => w.value).map((w) => w.value);
    expect(values('account 7781-22').some((v) => v?.k === 'date')).toBe(false);
    expect(values('on 2025-03-32').some((v) => v?.k === 'date')).toBe(false);
    expect(values('on 2025-12-31')).toEqual([{ k: 'date', y: 2025, m: 12, d: 31 }]);
  });

  it('a weekday is shown by a date that falls on it, and not by one that does not', () => {
    const claim = 'The road closure permit RC-7781 starts Friday at noon.';
    const shown = review('Book the road closure RC-7781', claim, [ok('tool_result', 'permits', 'permit RC-7781 road closure: start 2025-03-14 12:00, status ISSUED')]);
    expect(held(shown)).toEqual([]);
    const other = review('Book the road closure RC-7781', claim, [ok('tool_result', 'permits', 'permit RC-7781 road closure: start 2025-03-15 12:00, status ISSUED')]);
    expect(held(other)).not.toEqual([]);
  });
});

describe('a pinned record', () => {
  it('with its identifier and every value shown, forgives words the record has no reason to say', () => {
    const claims = review('Set the shipping weight of LMP-BRS-02', 'LMP-BRS-02 now weighs in at 2.4 kg for shipping quotes.', [ok('tool_result', 'catalog', 'PATCH /products/LMP-BRS-02 {shipping_weight_g: 2400} -> 200; shipping weight 2400 g')]);
    expect(held(claims)).toEqual([]);
  });

  it('does not forgive a different value', () => {
    const claims = review('Set the shipping weight of LMP-BRS-02', 'LMP-BRS-02 now weighs in at 2.4 kg for shipping quotes.', [ok('tool_result', 'catalog', 'PATCH /products/LMP-BRS-02 {shipping_weight_g: 2100} -> 200; shipping weight 2100 g')]);
    expect(held(claims)).not.toEqual([]);
  });
});

describe('a record pinned by its identifier and every value', () => {
  it('forgives the words a record has no reason to say: "renewed through 31 March 2026" and "new expiry 2026-03-31"', () => {
    const claims = review('Renew permit MFV-2024-0231', 'MFV-2024-0231 is renewed through 31 March 2026.', [ok('tool_result', 'permits', 'MFV-2024-0231 renewal RNW-5512 approved; new expiry 2026-03-31; fee 275.00 paid')]);
    expect(held(claims)).toEqual([]);
  });

  it('not with another date, nor without the identifier', () => {
    expect(held(review('Renew permit MFV-2024-0231', 'MFV-2024-0231 is renewed through 31 March 2026.', [ok('tool_result', 'permits', 'MFV-2024-0231 renewal RNW-5512 approved; new expiry 2025-03-31')]))).not.toEqual([]);
    expect(held(review('Renew the permit', 'The permit is renewed through 31 March 2026.', [ok('tool_result', 'permits', 'renewal RNW-5512 approved; new expiry 2026-03-31')]))).not.toEqual([]);
  });
});

describe('under the fast policy, a summary that pins the goal\'s record', () => {
  const goalClaimed = (summary: string) =>
    deriveClaims({ goal: 'Renew mobile food vendor permit MFV-2024-0231 for another year.', summary }, { cycle: 1, policy: 'fast' }).some((c) => c.text.startsWith('The goal was achieved'));

  it('shows the goal\'s outcome in its own words: "MFV-2024-0231 is renewed through 31 March 2026"', () => {
    expect(goalClaimed('MFV-2024-0231 is renewed through 31 March 2026.')).toBe(false);
  });

  it('does not when it names only the record', () => {
    expect(goalClaimed('Looked at MFV-2024-0231.')).toBe(true);
  });
});

describe('words an identifier spells', () => {
  const goal = 'Import the supplier feed for the garden range';
  it('"garden_feed_v2.csv" says "garden" and "feed"', () => {
    const claims = review(goal, 'Imported the garden feed: 312 rows.', [ok('tool_result', 'catalog.import', 'import imp_8819 garden_feed_v2.csv: 312 rows processed, 0 errors')]);
    expect(held(claims)).toEqual([]);
  });

  it('an identifier with other words is no stand-in: "kitchen_feed_v2.csv" does not say "garden"', () => {
    const claims = review(goal, 'Imported the garden feed: 312 rows.', [ok('tool_result', 'catalog.import', 'import imp_8819 kitchen_feed_v2.csv: 312 rows processed, 0 errors')]);
    expect(held(claims)).not.toEqual([]);
  });

  it('a name is spelled exactly: "tokyo-07" says Tokyo, "tokyoite-07" and "osaka-07" do not', () => {
    const claims = (host: string) => review('Restart the Tokyo game server', 'Restarted the Tokyo game server.', [ok('tool_result', 'fleet-ctl', `restart ${host} game server: healthy in 14s`)]);
    expect(held(claims('tokyo-07'))).toEqual([]);
    expect(held(claims('tokyoite-07'))).not.toEqual([]);
    expect(held(claims('osaka-07'))).not.toEqual([]);
  });
});

describe('a count of zero written beside a problem noun is its absence', () => {
  const goal = 'Import the supplier feed FD-12';
  for (const observed of ['312 rows processed, 0 errors', '312 rows processed, errors: 0']) {
    it(`"no errors" is what "${observed}" says`, () => {
      expect(held(review(goal, 'Imported FD-12: 312 rows, no errors.', [ok('tool_result', 'catalog.import', `import FD-12: ${observed}`)]))).toEqual([]);
    });
  }
  it('"no errors" is not what "errors: 3" says, nor "0 errors" what "3 errors" says', () => {
    expect(held(review(goal, 'Imported FD-12: 312 rows, no errors.', [ok('tool_result', 'catalog.import', 'import FD-12: 312 rows processed, errors: 3')]))).not.toEqual([]);
    expect(held(review(goal, 'Imported FD-12: 312 rows with 0 errors.', [ok('tool_result', 'catalog.import', 'import FD-12: 312 rows processed, 3 errors')]))).not.toEqual([]);
  });
});
