import type { CompletionClaim, CompletionEvidence, CriticPacket, CritiqueRecord, UnresolvedItem } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { PACKET_LIMITS, buildCriticPacket, buildCriticPrompt, toPacketEvidence } from '../src/domain/critic-packet.js';
import type { LedgerState } from '../src/domain/replay-ledger.js';
import type { CritiqueVerdict } from '../src/domain/rule-critic.js';
import { LedgerDriver } from './drive-ledger.js';

// What the critics are shown: the packet's bounds, order and settled objections, and the prompt
// built from it, word for word. Found unpinned by mutation testing (npm run test:mutation).

const AT = '2025-03-01T10:00:00.000Z';

function evidence(seq: number, over: Partial<CompletionEvidence> = {}): CompletionEvidence {
  return { id: `ev-${seq}`, seq, kind: 'tool_result', toolName: 'shell', success: true, summary: `output ${seq}`, rawRef: `blob://${seq}`, observedAt: AT, recordedAt: AT, ...over };
}

function claim(id: string, over: Partial<CompletionClaim> = {}): CompletionClaim {
  return {
    id,
    text: `claim ${id}`,
    source: 'task_complete_summary',
    kind: 'action',
    materiality: 'medium',
    evidenceRequirement: `evidence of ${id}`,
    requiresEvidence: true,
    features: [],
    evidenceIds: [],
    missingFeatures: [],
    status: 'unsupported',
    statusReason: 'nothing mentions it',
    evidenceSpans: [],
    ...over,
  } as CompletionClaim;
}

function ledger(over: Partial<LedgerState> = {}): LedgerState {
  const run = new LedgerDriver();
  run.open('Rename the files');
  return { ...run.ledger, ...over };
}

const floor: CritiqueVerdict = { decision: 'request_changes', reasons: ['claim c1 has no evidence'], missingEvidence: [] };

function critique(over: Partial<CritiqueRecord> = {}): CritiqueRecord {
  return {
    cycle: 1,
    proposalId: 'job-1',
    decision: 'request_changes',
    status: 'request_changes',
    reasons: ['the rename of c.txt has no evidence'],
    missingEvidence: [],
    critics: { rule: { decision: 'request_changes', reasons: [] }, llm: { ran: false, note: 'rule only' } },
    baseVersion: 2,
    evidenceSeqAtCritique: 1,
    at: AT,
    ...over,
  };
}

describe('evidence as a critic sees it', () => {
  it('drops the raw reference and clips the summary to 500 characters', () => {
    expect(toPacketEvidence(evidence(3, { summary: `${'a'.repeat(600)}` }))).toEqual({ id: 'ev-3', seq: 3, kind: 'tool_result', toolName: 'shell', success: true, summary: `${'a'.repeat(499)}…`, observedAt: AT });
    expect(toPacketEvidence(evidence(4, { summary: `  two\n\nlines  ${'b'.repeat(487)}` })).summary).toBe(`two lines ${'b'.repeat(487)}`);
    const bare = toPacketEvidence({ id: 'ev-5', seq: 5, kind: 'human_input', summary: 'ok', observedAt: AT, recordedAt: AT });
    expect(bare).toEqual({ id: 'ev-5', seq: 5, kind: 'human_input', summary: 'ok', observedAt: AT });
    expect(PACKET_LIMITS).toEqual({ claims: 150, evidence: 200, evidenceSince: 50, failures: 30, summaryChars: 500 });
  });
});

describe('the packet', () => {
  it('lists the material claims, high first then as stated, with the evidence they map to in seq order', () => {
    const state = ledger({ evidence: [evidence(1), evidence(2), evidence(3)] });
    const claims = [
      claim('c1', { materiality: 'low', evidenceIds: ['ev-2'] }),
      claim('c2', { evidenceIds: ['ev-3'] }),
      claim('c3', { materiality: 'high', evidenceIds: ['ev-3', 'ev-1'] }),
      claim('c4'),
    ];
    const packet = buildCriticPacket({ state, cycle: 1, claims, openItems: [], failures: [], floor });
    expect(packet.claims.map((c) => c.id)).toEqual(['c3', 'c2', 'c4']);
    expect(packet.evidence.map((e) => e.id)).toEqual(['ev-1', 'ev-3']);
    expect(packet.omitted).toEqual({ claims: 0, evidence: 0 });
    expect(packet).toMatchObject({ runId: 'run-1', goal: 'Rename the files', policy: 'full', cycle: 1, cycleBudget: 3, priorCritique: null, floor: { decision: 'request_changes', reasons: ['claim c1 has no evidence'] } });
    expect(packet.claims[0]).toEqual({
      id: 'c3',
      text: 'claim c3',
      kind: 'action',
      materiality: 'high',
      requiresEvidence: true,
      evidenceRequirement: 'evidence of c3',
      status: 'unsupported',
      statusReason: 'nothing mentions it',
      evidenceIds: ['ev-3', 'ev-1'],
      missingFeatures: [],
      evidenceSpans: [],
    });
  });

  it('holds at most 150 claims, 200 mapped observations and the latest 30 failures, counting what it left out', () => {
    const all = Array.from({ length: 205 }, (_, i) => evidence(i + 1));
    const state = ledger({ evidence: all });
    const claims = Array.from({ length: 152 }, (_, i) => claim(`c${i + 1}`, { evidenceIds: i === 0 ? all.map((e) => e.id) : [] }));
    const failures = Array.from({ length: 32 }, (_, i) => evidence(i + 1, { success: false }));
    const packet = buildCriticPacket({ state, cycle: 1, claims, openItems: [], failures, floor });
    expect(packet.claims).toHaveLength(150);
    expect(packet.claims.at(-1)!.id).toBe('c150');
    expect(packet.evidence).toHaveLength(200);
    expect(packet.evidence[0]!.id).toBe('ev-6');
    expect(packet.omitted).toEqual({ claims: 2, evidence: 5 });
    expect(packet.failedObservations.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
  });

  it('keeps only the loops still open: failures still failing, todos still listed, objections not settled', () => {
    const unresolved: UnresolvedItem[] = [
      { id: 'un-1-1', kind: 'failed_observation', text: 'shell failed', evidenceIds: ['ev-1'], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-2', kind: 'failed_observation', text: 'curl failed', evidenceIds: ['ev-2'], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-3', kind: 'open_item', text: 'Update the index', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-4', kind: 'open_item', text: 'Tell the team', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-5', kind: 'missing_evidence', text: 'the rename of c.txt', claimText: 'Renamed c.txt', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-6', kind: 'missing_evidence', text: 'the rename of d.txt', claimText: 'Renamed d.txt', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
      { id: 'un-1-7', kind: 'missing_evidence', text: 'a screenshot', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 1 },
    ];
    const prior = critique({
      missingEvidence: [
        { claimText: 'Renamed c.txt', need: 'the rename of c.txt', features: [] },
        { claimText: 'Renamed d.txt', need: 'the rename of d.txt', features: [] },
      ],
    });
    const state = ledger({ evidence: [evidence(1, { success: false }), evidence(2, { success: false }), evidence(3)], critiques: [prior], unresolved });
    const claims = [claim('c1', { text: 'Renamed c.txt', status: 'supported', evidenceIds: ['ev-3'] }), claim('c2', { text: 'Renamed d.txt' })];
    const packet = buildCriticPacket({ state, cycle: 2, claims, openItems: [{ text: 'update the index', kind: 'todo' }], failures: [state.evidence[0]!], floor });
    expect(packet.unresolved.map((u) => u.id)).toEqual(['un-1-1', 'un-1-3', 'un-1-6', 'un-1-7']);
    expect(packet.openItems).toEqual([{ text: 'update the index', kind: 'todo' }]);
  });

  it('says of each prior objection whether new evidence resolved it, the claim was withdrawn, or it still stands', () => {
    const prior = critique({
      evidenceSeqAtCritique: 2,
      missingEvidence: [
        { need: 'a screenshot', features: [] },
        { claimText: 'Update the index', need: 'the index updated', features: [] },
        { claimText: 'Renamed a.txt', need: 'the rename of a.txt', features: [] },
        { claimText: 'Renamed b.txt', need: 'the rename of b.txt', features: [] },
        { claimText: 'Renamed c.txt', need: 'the rename of c.txt', features: [] },
        { claimText: 'Renamed e.txt', need: 'the rename of e.txt', features: [] },
        { claimText: 'Renamed f.txt', need: 'the rename of f.txt', features: [] },
      ],
    });
    const state = ledger({ evidence: [evidence(1), evidence(2), evidence(3), evidence(4)], critiques: [prior] });
    const claims = [
      claim('c1', { text: 'Renamed a.txt', status: 'supported', evidenceIds: ['ev-1', 'ev-3'] }),
      claim('c2', { text: 'Renamed b.txt', status: 'unsupported', evidenceIds: ['ev-4'] }),
      claim('c3', { text: 'renamed c.txt.', status: 'supported', evidenceIds: ['ev-2'] }),
      claim('c4', { text: 'Renamed e.txt', status: 'supported', evidenceIds: ['ev-9'] }),
    ];
    const packet = buildCriticPacket({ state, cycle: 2, claims, openItems: [{ text: 'Update the index', kind: 'todo' }], failures: [], floor });
    expect(packet.priorCritique).toEqual({
      cycle: 1,
      decision: 'request_changes',
      reasons: ['the rename of c.txt has no evidence'],
      objections: [
        { need: 'a screenshot', resolution: 'still_open', evidenceIds: [] },
        { need: 'the index updated', claimText: 'Update the index', resolution: 'still_open', evidenceIds: [] },
        { need: 'the rename of a.txt', claimText: 'Renamed a.txt', resolution: 'resolved_by_new_evidence', evidenceIds: ['ev-3'] },
        { need: 'the rename of b.txt', claimText: 'Renamed b.txt', resolution: 'still_open', evidenceIds: ['ev-4'] },
        { need: 'the rename of c.txt', claimText: 'Renamed c.txt', resolution: 'still_open', evidenceIds: [] },
        { need: 'the rename of e.txt', claimText: 'Renamed e.txt', resolution: 'still_open', evidenceIds: [] },
        { need: 'the rename of f.txt', claimText: 'Renamed f.txt', resolution: 'claim_withdrawn', evidenceIds: [] },
      ],
      evidenceSince: [toPacketEvidence(evidence(3)), toPacketEvidence(evidence(4))],
      noEvidenceSince: false,
      evidenceSinceOmitted: 0,
    });
    expect(packet.instructions).toEqual([
      'Approve only if every claim that needs evidence is supported by the evidence listed. A claim with no supporting evidence cannot be approved.',
      'The rule critic decided request_changes. You may keep or tighten that decision (approve < request_changes < blocked), never loosen it.',
      'A failed observation with no later success contradicts the claims it touches; a later successful observation of the same thing clears it.',
      'For each objection, name the specific evidence that is missing: which observation, about which file, identifier, number, quoted string or URL.',
      'Use blocked only when verification cannot happen in this run (access denied, a dependency unavailable); use request_changes when more work or evidence can fix it.',
      'This is review 2 of 3. If the last review still requests changes, the run ends as incomplete_verification, never as completed.',
      'Do not repeat an objection of the prior critique (cycle 1) that evidence recorded since it resolves: objections marked resolved_by_new_evidence or claim_withdrawn are settled.',
    ]);
  });

  it('shows the latest 50 observations since the prior critique, counting the rest', () => {
    const state = ledger({ evidence: Array.from({ length: 60 }, (_, i) => evidence(i + 1)), critiques: [critique({ evidenceSeqAtCritique: 5 })] });
    const prior = buildCriticPacket({ state, cycle: 2, claims: [], openItems: [], failures: [], floor }).priorCritique!;
    expect(prior.evidenceSince.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 11));
    expect(prior.evidenceSinceOmitted).toBe(5);
  });
});

describe('the critic prompt', () => {
  const packet: CriticPacket = {
    runId: 'run-1',
    goal: 'Rename the files',
    policy: 'full',
    cycle: 2,
    cycleBudget: 3,
    claims: [
      {
        id: 'c1',
        text: 'Renamed a.txt',
        kind: 'action',
        materiality: 'high',
        requiresEvidence: true,
        evidenceRequirement: 'a listing with a.txt renamed',
        status: 'supported',
        statusReason: 'ev-3 shows it',
        evidenceIds: ['ev-3'],
        missingFeatures: [],
        evidenceSpans: [{ evidenceId: 'ev-3', start: 0, end: 22, text: 'renamed a.txt to b.txt' }],
      },
      {
        id: 'c2',
        text: 'The index is current',
        kind: 'statement',
        materiality: 'medium',
        requiresEvidence: false,
        evidenceRequirement: 'the index file',
        status: 'unsupported',
        statusReason: 'nothing mentions it',
        evidenceIds: [],
        missingFeatures: [],
        evidenceSpans: [],
      },
    ],
    evidence: [
      { id: 'ev-3', seq: 3, kind: 'tool_result', toolName: 'shell', success: true, summary: 'renamed a.txt to b.txt', observedAt: AT },
      { id: 'ev-4', seq: 4, kind: 'human_input', summary: 'looks fine', observedAt: AT },
    ],
    failedObservations: [{ id: 'ev-2', seq: 2, kind: 'tool_result', toolName: 'curl', success: false, summary: 'HTTP 503', observedAt: AT }],
    priorCritique: {
      cycle: 1,
      decision: 'request_changes',
      reasons: ['no evidence for a.txt'],
      objections: [
        { need: 'the rename of a.txt', claimText: 'Renamed a.txt', resolution: 'resolved_by_new_evidence', evidenceIds: ['ev-3'] },
        { need: 'a screenshot', resolution: 'still_open', evidenceIds: [] },
      ],
      evidenceSince: [{ id: 'ev-3', seq: 3, kind: 'tool_result', toolName: 'shell', success: true, summary: 'renamed a.txt to b.txt', observedAt: AT }],
      noEvidenceSince: false,
      evidenceSinceOmitted: 4,
    },
    unresolved: [{ id: 'un-1-2', kind: 'missing_evidence', text: 'a screenshot', evidenceIds: [], firstRaisedCycle: 1, timesRaised: 2 }],
    openItems: [{ text: 'Update the index', kind: 'todo' }],
    floor: { decision: 'request_changes', reasons: ['"The index is current" is not verified'] },
    instructions: ['Approve only with evidence.'],
    omitted: { claims: 2, evidence: 7 },
  };

  it('lays out the packet for the model, section by section', () => {
    expect(buildCriticPrompt(packet).user).toBe(
      [
        '# Review 2 of 3 (policy: full)',
        '',
        '## Goal',
        'Rename the files',
        '',
        '## Rule critic floor',
        'Decision: request_changes. You may keep or tighten it, never loosen it.',
        '- "The index is current" is not verified',
        '',
        '## Material claims',
        '- c1 [high, action, needs evidence] "Renamed a.txt"',
        '  status: supported (ev-3 shows it); evidence: ev-3',
        '  rests on ev-3: "renamed a.txt to b.txt"',
        '- c2 [medium, statement] "The index is current"',
        '  status: unsupported (nothing mentions it); evidence: none',
        '  needs: the index file',
        '(2 more material claims left out of this packet)',
        '',
        '## Evidence mapped to the claims',
        `- ev-3 (seq 3, tool_result, shell, succeeded, ${AT}): renamed a.txt to b.txt`,
        `- ev-4 (seq 4, human_input, observed, ${AT}): looks fine`,
        '(7 older mapped observations left out)',
        '',
        '## Failed observations with no later success',
        `- ev-2 (seq 2, tool_result, curl, FAILED, ${AT}): HTTP 503`,
        '',
        '## Prior critique (review 1: request_changes)',
        'Reasons:',
        '- no evidence for a.txt',
        'Objections and what happened since:',
        '- [resolved_by_new_evidence (ev-3)] "Renamed a.txt": the rename of a.txt',
        '- [still_open] a screenshot',
        'Evidence recorded since the prior critique (review 1):',
        `- ev-3 (seq 3, tool_result, shell, succeeded, ${AT}): renamed a.txt to b.txt`,
        '(4 older observations since the critique left out)',
        '',
        '## Loops still open from earlier reviews',
        '- un-1-2 [missing_evidence, raised in review 1, 2x] a screenshot',
        '',
        '## Open todos and board cards',
        '- [todo] Update the index',
        '',
        '## Instructions',
        '- Approve only with evidence.',
      ].join('\n'),
    );
  });

  it('says "none" where a section is empty', () => {
    const empty: CriticPacket = { ...packet, claims: [], evidence: [], failedObservations: [], priorCritique: null, unresolved: [], openItems: [], omitted: { claims: 0, evidence: 0 } };
    expect(buildCriticPrompt(empty).user).toBe(
      [
        '# Review 2 of 3 (policy: full)',
        '',
        '## Goal',
        'Rename the files',
        '',
        '## Rule critic floor',
        'Decision: request_changes. You may keep or tighten it, never loosen it.',
        '- "The index is current" is not verified',
        '',
        '## Material claims',
        '(none: the attempt makes no claim that needs checking)',
        '',
        '## Evidence mapped to the claims',
        '(none)',
        '',
        '## Failed observations with no later success',
        '(none)',
        '',
        '## Loops still open from earlier reviews',
        '(none)',
        '',
        '## Open todos and board cards',
        '(none)',
        '',
        '## Instructions',
        '- Approve only with evidence.',
      ].join('\n'),
    );
    const quiet = buildCriticPrompt({ ...empty, priorCritique: { ...packet.priorCritique!, evidenceSince: [], noEvidenceSince: true, evidenceSinceOmitted: 0 } }).user;
    expect(quiet).toContain('Objections and what happened since:\n- [resolved_by_new_evidence (ev-3)] "Renamed a.txt": the rename of a.txt\n- [still_open] a screenshot\nNo evidence has been recorded since the prior critique (review 1).\n');
    expect(quiet).not.toContain('older observations since the critique');
  });

  it('tells the model what to answer and how to judge each claim', () => {
    const { system } = buildCriticPrompt(packet);
    expect(system.split('\n')).toHaveLength(4);
    expect(system).toContain('Answer with JSON only: {"decision": "approve" | "request_changes" | "blocked", "reasons": [string], "missingEvidence": [{"claimId": string, "need": string}], "claims": [{"claimId": string');
    expect(system).toContain('"entails" only if one observation states that fact');
  });
});
