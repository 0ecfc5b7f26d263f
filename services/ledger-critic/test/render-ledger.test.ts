import { describe, expect, it } from 'vitest';
import { jsonBytes } from '@vouch/contracts';
import { publicSafe, renderLedger } from '../src/domain/render-ledger.js';
import { LedgerDriver, failed, ok } from './drive-ledger.js';

const GOAL = 'Rotate the TLS certificate on gw-eu-2 and confirm the new expiry date';

/** A run whose review budget runs out with one claim contradicted. */
function exhaustedRun(): LedgerDriver {
  const run = new LedgerDriver('cert-9');
  run.open(GOAL, 'full', 2);
  run.record(
    ok('file_change', 'shell', 'wrote /etc/ssl/private/gw-eu-2.pem (new key, 2048 bit)', { rawRef: 'file:///var/lib/vouch/raw/ab12.log' }),
    failed('runtime_observation', 'openssl', 'gw-eu-2 still serves the old certificate, expiry 2025-03-09'),
  );
  const summary = 'Rotated the certificate on gw-eu-2 and completed the task. Confirmed the new expiry is 2026-03-01.';
  run.propose({ summary });
  run.propose({ summary });
  expect(run.ledger.status).toBe('incomplete_verification');
  return run;
}

describe('admin render (the Telegram admin wrapper)', () => {
  it('gives the sections Done, Verified, Not verified / blocked and Evidence, with ids and raw references', () => {
    const { text, status, completed } = renderLedger(exhaustedRun().ledger, 'admin');
    expect({ status, completed }).toEqual({ status: 'incomplete_verification', completed: false });
    const lines = text.split('\n');
    const at = (heading: string): number => lines.indexOf(heading);
    expect(at('Done')).toBeGreaterThan(0);
    expect(at('Verified')).toBeGreaterThan(at('Done'));
    expect(at('Not verified / blocked')).toBeGreaterThan(at('Verified'));
    expect(at('Evidence (2)')).toBeGreaterThan(at('Not verified / blocked'));
    expect(text).toContain('- [contradicted] Rotated the certificate on gw-eu-2: the latest observation of it failed: ev-2 (openssl)');
    // The later check shows the old expiry: the claim of the new one is contradicted, and the words it rests on are quoted.
    expect(text).toContain('- [contradicted] Confirmed the new expiry is 2026-03-01: the latest observation of it failed: ev-2 (openssl)');
    expect(text).toContain('2026-03-01: the latest observation of it failed: ev-2 (openssl)');
    expect(text).toContain('mentioning gw-eu-2 ← ev-2: "gw-eu-2 still serves the old certificate"');
    expect(text).toContain('← ev-2: "expiry 2025-03-09"');
    expect(text).toContain('[raw: file:///var/lib/vouch/raw/ab12.log]');
  });

  it('never renders an incomplete_verification run as completed', () => {
    const { text } = renderLedger(exhaustedRun().ledger, 'admin');
    const [statusLine] = text.split('\n');
    expect(statusLine).toBe('Run cert-9: incomplete verification: review 2 of 2 still requested changes and the review budget is spent. This run is not marked done.');
    // The only "completed" is the agent's own words, quoted as a claim that was not verified.
    const outsideClaims = text.replace(/^- \[[a-z_ ]+\] .*$/gm, '');
    expect(outsideClaims).not.toMatch(/\bcompleted?\b/i);
    expect(text).not.toMatch(/status:\s*completed/i);
  });

  it('calls an approved run completed', () => {
    const run = new LedgerDriver('cert-10');
    run.open(GOAL);
    run.record(ok('runtime_observation', 'openssl', 'gw-eu-2 serves the new certificate, expiry 2026-03-01'));
    run.propose({ summary: 'Confirmed the new expiry on gw-eu-2 is 2026-03-01.' });
    const { text, completed } = renderLedger(run.ledger, 'admin');
    expect(completed).toBe(true);
    expect(text.split('\n')[0]).toBe('Run cert-10: approved: completed. Every claim that needs evidence is backed by recorded evidence (review 1 of 3).');
    expect(text).toContain('Verified\n- Confirmed the new expiry on gw-eu-2 is 2026-03-01 (ev-1)');
  });
});

describe('public render', () => {
  it('cites evidence compactly without internal ids, raw references or paths', () => {
    const { text, status } = renderLedger(exhaustedRun().ledger, 'public');
    expect(status).toBe('incomplete_verification');
    expect(text.split('\n')[0]).toBe('Not verified: I could not confirm all of this with recorded evidence, so it is not marked done.');
    expect(text).not.toMatch(/\b(ev|cl|un)-\d/);
    expect(text).not.toContain('/etc/ssl');
    expect(text).not.toContain('/var/lib');
    expect(text).not.toContain('raw');
    expect(text).toContain('- Rotated the certificate on gw-eu-2: the last check of it failed');
  });

  it('answers with the visible answer and the tools that checked it when approved', () => {
    const run = new LedgerDriver('tg-1');
    run.open('Book a table for two at 19:30', 'fast');
    run.record(ok('delivery_result', 'booking_api', 'reservation R-5521 booked: table for 2 at 19:30, confirmed', { rawRef: '/srv/raw/r5521.json' }));
    run.propose({ summary: 'Booked reservation R-5521 for 2 at 19:30.', visibleAnswer: 'Your table for two is booked for 19:30 (reservation R-5521).' });
    expect(renderLedger(run.ledger, 'public')).toEqual({
      runId: 'tg-1',
      form: 'public',
      status: 'approved',
      completed: true,
      text: 'Your table for two is booked for 19:30 (reservation R-5521).\n\nChecked with: booking_api.',
      truncated: false,
    });
  });

  it('reduces paths to file names and withholds internal addresses', () => {
    expect(publicSafe('Wrote /home/agent/projects/out/report.pdf and C:\\Users\\a\\notes.txt (ev-3); see http://127.0.0.1:8080/x and https://example.com/r and/or docs.')).toBe(
      'Wrote report.pdf and notes.txt; see an internal address and https://example.com/r and/or docs.',
    );
  });
});

describe('a render within the cap on one answer', () => {
  it('stops at a line past its budget as JSON, says so, and keeps the status beside the text', () => {
    const run = exhaustedRun();
    const whole = renderLedger(run.ledger, 'admin');
    expect(whole.truncated).toBe(false);
    const maxBytes = Math.floor(jsonBytes(whole.text) / 2);
    const cut = renderLedger(run.ledger, 'admin', maxBytes);
    expect(cut).toMatchObject({ status: 'incomplete_verification', completed: false, truncated: true });
    expect(jsonBytes(cut.text)).toBeLessThanOrEqual(maxBytes);
    const lines = cut.text.split('\n');
    expect(whole.text.startsWith(lines.slice(0, -1).join('\n'))).toBe(true);
    expect(lines.at(-1)).toBe(`… ${whole.text.split('\n').length - lines.length + 1} more lines not shown here, to keep this answer under ${maxBytes} bytes: ledger.get lists every claim and observation`);
    expect(renderLedger(run.ledger, 'public', 60).text.split('\n').at(-1)).toBe('… and more, not shown here.');
  });
});
