import type { CompletionClaim, CritiqueDecision } from '@vouch/contracts';
import { openLedger, recordEvidence, reviewInMemory } from '../../src/domain/ledger-commands.js';
import { deriveClaims, readEvidenceInMemory, reconcileClaims, type ObservationFeatures } from '@vouch/judge';
import type { LedgerState } from '../../src/domain/replay-ledger.js';
import { PATTERNS, type ClaimVerdict, type CriticCase, type Pattern } from './corpus-case.js';

/**
 * Runs each corpus case through the rule critic exactly as the service does
 * (open a ledger, record the evidence, review it with the features stored
 * when it was recorded) and compares the
 * decision and each named claim's verdict with the case's.
 */

const AT = '2025-06-01T09:00:00.000Z';

export interface CaseResult {
  case: CriticCase;
  decision: CritiqueDecision;
  got: 'approve' | 'hold';
  correct: boolean;
  claims: Array<{ fragment: string; expected: ClaimVerdict; got: ClaimVerdict | 'missing'; claim?: CompletionClaim }>;
  allClaims: CompletionClaim[];
}

function verdictOf(claim: CompletionClaim): ClaimVerdict {
  if (!claim.requiresEvidence) return 'immaterial';
  return claim.status === 'supported' ? 'supported' : 'held';
}

function recorded(c: CriticCase): { runId: string; state: LedgerState; observations: ObservationFeatures[] } {
  const runId = `eval-${c.id}`;
  let state: LedgerState = openLedger(undefined, { runId, goal: c.goal, policy: c.policy ?? 'full', cycleBudget: 3, at: AT }).state;
  let observations: ObservationFeatures[] = [];
  if (c.evidence.length) {
    const recorded = recordEvidence(state, { runId, items: c.evidence, at: AT });
    state = recorded.state;
    // As the service stores and reads them back (jsonb).
    observations = JSON.parse(JSON.stringify(recorded.observations.map((o) => o.features))) as ObservationFeatures[];
  }
  return { runId, state, observations };
}

/** One case timed: the judge alone (derive the claims, find and judge their candidates) and the whole rule-critic review. */
export function timeCase(c: CriticCase): { claims: number; judgeMs: number; reviewMs: number } {
  const { runId, state, observations } = recorded(c);
  const t0 = performance.now();
  const claims = deriveClaims({ goal: c.goal, summary: c.summary, visibleAnswer: c.visibleAnswer }, { cycle: 1, policy: c.policy ?? 'full' });
  reconcileClaims(claims, readEvidenceInMemory(state.evidence, observations), c.policy ?? 'full');
  const t1 = performance.now();
  reviewInMemory(state, { runId, proposalId: 'eval', summary: c.summary, visibleAnswer: c.visibleAnswer, openItems: [], at: AT }, { llmConfigured: false }, observations);
  const t2 = performance.now();
  return { claims: claims.length, judgeMs: t1 - t0, reviewMs: t2 - t1 };
}

export function runCase(c: CriticCase): CaseResult {
  const { runId, state, observations } = recorded(c);
  const plan = reviewInMemory(state, { runId, proposalId: 'eval', summary: c.summary, visibleAnswer: c.visibleAnswer, openItems: [], at: AT }, { llmConfigured: false }, observations);
  if (plan.kind !== 'review') throw new Error(`case ${c.id}: not reviewed`);
  const { rule, claims } = plan.review;
  const got = rule.decision === 'approve' ? 'approve' : 'hold';
  return {
    case: c,
    decision: rule.decision,
    got,
    correct: got === c.expect,
    claims: Object.entries(c.claims).map(([fragment, expected]) => {
      const claim = claims.find((cl) => cl.text.toLowerCase().includes(fragment.toLowerCase()));
      return { fragment, expected, got: claim ? verdictOf(claim) : 'missing', ...(claim ? { claim } : {}) };
    }),
    allClaims: claims,
  };
}

export interface PatternTally {
  cases: number;
  correct: number;
  falseApprovals: number;
  falseHolds: number;
  /** Cases of this pattern that should be held, and that should be approved. */
  shouldHold: number;
  shouldApprove: number;
}

export interface CorpusReport {
  cases: number;
  domains: number;
  matrix: { approveApprove: number; approveHold: number; holdApprove: number; holdHold: number };
  falseApprovals: CaseResult[];
  falseHolds: CaseResult[];
  falseHoldRate: number;
  claimVerdicts: { total: number; correct: number; missing: number };
  /** Cases a reviewer expects to end `blocked` (the agent needs a person or a permission), and how many did. */
  blocked: { expected: number; got: number; missed: CaseResult[] };
  patterns: Record<Pattern, PatternTally>;
  results: CaseResult[];
}

export function evaluateCorpus(cases: readonly CriticCase[]): CorpusReport {
  const results = cases.map(runCase);
  const patterns = Object.fromEntries(
    (Object.keys(PATTERNS) as Pattern[]).map((p) => [p, { cases: 0, correct: 0, falseApprovals: 0, falseHolds: 0, shouldHold: 0, shouldApprove: 0 }]),
  ) as Record<Pattern, PatternTally>;
  const matrix = { approveApprove: 0, approveHold: 0, holdApprove: 0, holdHold: 0 };
  let total = 0;
  let correct = 0;
  let missing = 0;
  for (const r of results) {
    const key = `${r.case.expect}${r.got === 'approve' ? 'Approve' : 'Hold'}` as keyof typeof matrix;
    matrix[key]++;
    for (const p of r.case.patterns) {
      const t = patterns[p];
      t.cases++;
      if (r.correct) t.correct++;
      if (r.case.expect === 'hold') t.shouldHold++;
      else t.shouldApprove++;
      if (r.case.expect === 'hold' && r.got === 'approve') t.falseApprovals++;
      if (r.case.expect === 'approve' && r.got === 'hold') t.falseHolds++;
    }
    for (const cl of r.claims) {
      total++;
      if (cl.got === cl.expected) correct++;
      if (cl.got === 'missing') missing++;
    }
  }
  const shouldApprove = results.filter((r) => r.case.expect === 'approve').length;
  const falseHolds = results.filter((r) => r.case.expect === 'approve' && r.got === 'hold');
  return {
    cases: results.length,
    domains: new Set(cases.map((c) => c.domain)).size,
    matrix,
    falseApprovals: results.filter((r) => r.case.expect === 'hold' && r.got === 'approve'),
    falseHolds,
    falseHoldRate: shouldApprove ? falseHolds.length / shouldApprove : 0,
    claimVerdicts: { total, correct, missing },
    blocked: {
      expected: results.filter((r) => r.case.blocked).length,
      got: results.filter((r) => r.case.blocked && r.decision === 'blocked').length,
      missed: results.filter((r) => r.case.blocked && r.decision !== 'blocked'),
    },
    patterns,
    results,
  };
}
