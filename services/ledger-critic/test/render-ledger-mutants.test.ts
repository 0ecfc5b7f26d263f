import type { CompletionClaim, CompletionEvidence, CritiqueRecord, LedgerSnapshot, UnresolvedItem } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { publicSafe, renderLedger } from '../src/domain/render-ledger.js';
import { toLedgerSnapshot } from '../src/domain/replay-ledger.js';
import { LedgerDriver } from './drive-ledger.js';

// The admin and public texts of a ledger, word for word for each status, found unpinned by
// mutation testing (npm run test:mutation).

const AT = '2025-03-01T10:00:00.000Z';

function evidence(seq: number, over: Partial<CompletionEvidence> = {}): CompletionEvidence {
  return { id: `ev-${seq}`, seq, kind: 'tool_result', toolName: 'shell', success: true, summary: `output ${seq}`, observedAt: AT, recordedAt: AT, ...over };
}

function claim(id: string, text: string, over: Partial<CompletionClaim> = {}): CompletionClaim {
  return {
    id,
    text,
    source: 'task_complete_summary',
    kind: 'action',
    materiality: 'medium',
    evidenceRequirement: `a record of it`,
    requiresEvidence: true,
    features: [],
    evidenceIds: [],
    missingFeatures: [],
    status: 'supported',
    statusReason: 'shown',
    evidenceSpans: [],
    ...over,
  } as CompletionClaim;
}

function critique(cycle: number, decision: CritiqueRecord['decision'], llm: CritiqueRecord['critics']['llm'] = { ran: false, note: 'rule only' }): CritiqueRecord {
  return {
    cycle,
    proposalId: `job-${cycle}`,
    decision,
    status: 'request_changes',
    reasons: [],
    missingEvidence: [],
    critics: { rule: { decision, reasons: [] }, llm },
    baseVersion: 1,
    evidenceSeqAtCritique: 0,
    at: AT,
  };
}

function snapshot(over: Partial<LedgerSnapshot> = {}): LedgerSnapshot {
  const run = new LedgerDriver('run-7');
  run.open('Rename the files in ./data and report');
  return { ...toLedgerSnapshot(run.ledger), ...over };
}

const proposal = { proposalId: 'job-1', cycle: 1, summary: 'Renamed the files.', openItems: [], proposedAt: AT };

describe('the status line', () => {
  const line = (over: Partial<LedgerSnapshot>) => renderLedger(snapshot(over), 'admin').text.split('\n')[0];

  it('says where the run stands, never calling an unapproved run done', () => {
    expect(line({})).toBe('Run run-7: open: 0 observations recorded; no completion reviewed yet.');
    expect(line({ evidence: [evidence(1), evidence(2)] })).toBe('Run run-7: open: 2 observations recorded; no completion reviewed yet.');
    expect(line({ status: 'request_changes', critiques: [critique(1, 'request_changes')] })).toBe(
      'Run run-7: changes requested (review 1 of 3): not done yet; the items under "Not verified / blocked" need evidence.',
    );
    expect(line({ status: 'incomplete_verification', critiques: [critique(1, 'blocked')] })).toBe(
      'Run run-7: incomplete verification: verification was blocked in review 1 of 3. This run is not marked done.',
    );
    expect(line({ status: 'incomplete_verification', critiques: [critique(1, 'request_changes'), critique(2, 'request_changes'), critique(3, 'request_changes')] })).toBe(
      'Run run-7: incomplete verification: review 3 of 3 still requested changes and the review budget is spent. This run is not marked done.',
    );
    expect(line({ status: 'blocked' })).toBe('Run run-7: blocked: verification cannot proceed. This run is not marked done.');
    expect(line({ status: 'approved' })).toBe('Run run-7: approved: completed. Every claim that needs evidence is backed by recorded evidence (no review yet).');
  });
});

describe('the admin render', () => {
  it('lists what was done and verified with the ids backing it, what is not, the critic\'s reasons, the open loops and the evidence', () => {
    const unresolved: UnresolvedItem[] = [
      { id: 'un-1-1', kind: 'missing_evidence', text: 'a listing', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-2', kind: 'open_item', text: 'Tell the team', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-3', kind: 'failed_observation', text: 'curl failed: HTTP 503', evidenceIds: ['ev-4'], firstRaisedCycle: 1, timesRaised: 2 },
    ];
    const ledger = snapshot({
      status: 'request_changes',
      proposal,
      evidence: [
        evidence(1),
        evidence(2, { kind: 'critic_feedback', toolName: undefined, success: undefined, summary: 'the critic asked for a listing' }),
        evidence(3, { toolName: undefined, rawRef: 'blob://raw/3', summary: `  long\n${'x'.repeat(400)}` }),
        evidence(4, { toolName: 'curl', success: false, summary: 'HTTP 503' }),
      ],
      proposedClaims: [
        claim('c1', 'Renamed a.txt', { evidenceIds: ['ev-1', 'ev-2', 'ev-4'], evidenceSpans: [{ evidenceId: 'ev-1', start: 0, end: 214, text: `renamed a.txt ${'y'.repeat(200)}` }] }),
        claim('c2', 'The files are in ./data', { kind: 'verification', evidenceIds: ['ev-3'] }),
        claim('c3', 'Cleaned up', { materiality: 'low' }),
        claim('c4', 'Uploaded the report', { status: 'unsupported', statusReason: 'nothing mentions it', evidenceRequirement: 'an upload result' }),
        claim('c5', 'Pinged the team', { status: 'contradicted', materiality: 'low', requiresEvidence: false, statusReason: 'ev-4 failed', evidenceSpans: [{ evidenceId: 'ev-4', start: 0, end: 8, text: 'HTTP 503' }] }),
        claim('c6', 'Felt good', { status: 'unsupported', materiality: 'low', requiresEvidence: false }),
        claim('c7', 'Checked prod', { status: 'blocked', materiality: 'low', statusReason: 'access denied' }),
      ],
      critiques: [critique(1, 'request_changes', { ran: true, model: 'm', decision: 'request_changes', reasons: ['the upload is not shown'] })],
      unresolved,
    });
    expect(renderLedger(ledger, 'admin')).toEqual({
      runId: 'run-7',
      form: 'admin',
      status: 'request_changes',
      completed: false,
      text: [
        'Run run-7: changes requested (review 1 of 3): not done yet; the items under "Not verified / blocked" need evidence.',
        'Goal: Rename the files in ./data and report',
        '',
        'Done',
        `- Renamed a.txt (ev-1) ← ev-1: "renamed a.txt ${'y'.repeat(145)}…"`,
        '',
        'Verified',
        '- The files are in ./data (ev-3)',
        '',
        'Not verified / blocked',
        '- [unsupported] Uploaded the report: nothing mentions it. Needs an upload result',
        '- [contradicted] Pinged the team: ev-4 failed ← ev-4: "HTTP 503"',
        '- [blocked] Checked prod: access denied. Needs a record of it',
        '- [critic] the upload is not shown',
        '- [open item] Tell the team',
        '- [failed observation] curl failed: HTTP 503 (ev-4)',
        '',
        'Evidence (4)',
        `- ev-1 #1 tool_result shell ok ${AT}: output 1`,
        `- ev-2 #2 critic_feedback observed ${AT}: the critic asked for a listing`,
        `- ev-3 #3 tool_result ok ${AT}: long ${'x'.repeat(294)}… [raw: blob://raw/3]`,
        `- ev-4 #4 tool_result curl FAILED ${AT}: HTTP 503`,
      ].join('\n'),
      truncated: false,
    });
  });

  it('says so where a section is empty, and cites at most the five latest backing ids', () => {
    const text = renderLedger(snapshot(), 'admin').text;
    expect(text.split('\n').slice(2)).toEqual(['', 'Done', '- (nothing verified as done)', '', 'Verified', '- (none)', '', 'Not verified / blocked', '- (none)', '', 'Evidence (0)', '- (none recorded)']);
    const many = snapshot({ evidence: Array.from({ length: 7 }, (_, i) => evidence(i + 1)), proposedClaims: [claim('c1', 'Renamed them', { evidenceIds: ['ev-1', 'ev-2', 'ev-3', 'ev-4', 'ev-5', 'ev-6', 'ev-7'] })] });
    expect(renderLedger(many, 'admin').text).toContain('Done\n- Renamed them (ev-3, ev-4, ev-5, ev-6, ev-7)\n');
  });

  it('shows the latest 50 observations and says how many earlier ones ledger.get lists', () => {
    const text = renderLedger(snapshot({ evidence: Array.from({ length: 53 }, (_, i) => evidence(i + 1)) }), 'admin').text;
    expect(text).toContain('Evidence (53)\n- (3 earlier items not shown: ledger.get lists them all)\n- ev-4 #4 tool_result shell ok');
    expect(text.split('\n').filter((l) => l.startsWith('- ev-'))).toHaveLength(50);
  });

  it('adds the LLM critic\'s reasons only when it held the run back', () => {
    const gapsOf = (decision: CritiqueRecord['decision'], llmDecision: CritiqueRecord['decision'] | undefined) => {
      const llm = llmDecision ? { ran: true, model: 'm', decision: llmDecision, reasons: ['model reason'] } : { ran: true, model: 'm', note: 'its answer was not used' };
      return renderLedger(snapshot({ status: 'request_changes', critiques: [critique(1, decision, llm)] }), 'admin').text.includes('- [critic] model reason');
    };
    expect(gapsOf('request_changes', 'request_changes')).toBe(true);
    expect(gapsOf('approve', 'request_changes')).toBe(false);
    expect(gapsOf('request_changes', 'approve')).toBe(false);
    expect(gapsOf('request_changes', undefined)).toBe(false);
  });
});

describe('the public render', () => {
  it('while reviews go on: what is confirmed with the tools that checked it, what is not and why, what is still open', () => {
    const ledger = snapshot({
      status: 'request_changes',
      proposal,
      evidence: [evidence(1, { toolName: '/usr/bin/mv' }), evidence(2, { toolName: undefined, kind: 'delivery_result' }), evidence(3, { success: false }), evidence(4, { kind: 'critic_feedback' })],
      proposedClaims: [
        claim('c1', 'Renamed a.txt (ev-1)', { evidenceIds: ['ev-1', 'ev-2', 'ev-3', 'ev-4'] }),
        claim('c2', 'Uploaded the report', { status: 'unsupported' }),
        claim('c3', 'Emailed 40 owners', { status: 'unverified', missingFeatures: ['40', '/srv/owners.csv'] }),
        claim('c4', 'Checked the backup', { status: 'unverified' }),
        claim('c5', 'Pinged the team', { status: 'contradicted' }),
        claim('c6', 'Checked prod', { status: 'blocked' }),
      ],
      unresolved: [
        { id: 'un-1-1', kind: 'open_item', text: 'Tell the team at /home/a/notes.md', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
        { id: 'un-1-2', kind: 'missing_evidence', text: 'a listing', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      ],
    });
    expect(renderLedger(ledger, 'public').text).toBe(
      [
        'Still being verified: parts of this are not confirmed yet.',
        '',
        'Confirmed:',
        '- Renamed a.txt (checked: mv, delivery result)',
        '',
        'Not confirmed:',
        '- Uploaded the report: no evidence was recorded',
        '- Emailed 40 owners: nothing recorded confirms 40, owners.csv',
        '- Checked the backup: nothing recorded confirms it',
        '- Pinged the team: the last check of it failed',
        '- Checked prod: it could not be checked',
        '',
        'Still open:',
        '- Tell the team at notes.md',
      ].join('\n'),
    );
  });

  it('before any attempt says the work is in progress; a blocked run is not verified', () => {
    expect(renderLedger(snapshot(), 'public').text).toBe('In progress: nothing has been proposed as done yet.');
    expect(renderLedger(snapshot({ status: 'blocked', proposal }), 'public').text).toBe('Not verified: I could not confirm all of this with recorded evidence, so it is not marked done.');
  });

  it('an approved run answers with its visible answer or summary, and the tools that checked it, three at most per claim', () => {
    const tools = ['ls', 'mv', 'stat', 'sha256sum'];
    const approved = snapshot({
      status: 'approved',
      proposal,
      evidence: tools.map((toolName, i) => evidence(i + 1, { toolName })),
      proposedClaims: [claim('c1', 'Renamed the files', { evidenceIds: ['ev-1', 'ev-2', 'ev-3', 'ev-4'] }), claim('c2', 'Low', { materiality: 'low', evidenceIds: ['ev-1'] })],
    });
    expect(renderLedger(approved, 'public')).toMatchObject({ completed: true, text: 'Renamed the files.\n\nChecked with: mv, stat, sha256sum.' });
    expect(renderLedger({ ...approved, proposedClaims: [] }, 'public').text).toBe('Renamed the files.');
    expect(renderLedger({ ...approved, proposal: null, proposedClaims: [] }, 'public').text).toBe('');
  });
});

describe('public-safe text', () => {
  it('keeps public addresses, withholds every internal one, and drops internal ids and the brackets they leave', () => {
    expect(publicSafe('see https://example.com/r and http://localhost:3000/a and http://10.1.2.3/b and http://192.168.0.9/c and http://172.20.0.1/d and http://172.32.0.1/e')).toBe(
      'see https://example.com/r and an internal address and an internal address and an internal address and an internal address and http://172.32.0.1/e',
    );
    expect(publicSafe('http://0.0.0.0:80/x and https://exa mple')).toBe('an internal address and https://exa mple');
    expect(publicSafe('done (ev-1, cl-2-3)  and   un-4 ok ( )')).toBe('done and ok');
    expect(publicSafe('wrote ./out/report.pdf and ~/notes/todo.txt and dir/sub/deeper/')).toBe('wrote report.pdf and todo.txt and deeper');
  });

  it('withholds IPv6 loopback and private addresses, and keeps the punctuation after a withheld address', () => {
    expect(publicSafe('see http://[::1]:8080/x for it')).toBe('see an internal address for it');
    expect(publicSafe('on http://[fd12:3456::1]/v1, then http://[fe80::2]/a; done')).toBe('on an internal address, then an internal address; done');
    expect(publicSafe('fetched http://10.0.0.5/a, then https://example.com/b.')).toBe('fetched an internal address, then https://example.com/b.');
    expect(publicSafe('docs at http://[2001:db8::1]/x')).toBe('docs at http://[2001:db8::1]/x');
  });
});
