import type { BoardEvidence, EvidenceRequirement } from '@vouch/contracts';
import { ruleVerify } from '../../src/domain/verify-card.js';
import { CARD_PATTERNS, type CardCase, type CardPattern } from './card-case.js';

/**
 * Runs each card case through the built-in verifier's rule check exactly as a
 * review does (the card as replay builds it: requirements r1, r2, …, evidence
 * e-1, e-2, … attached by the worker) and compares its decision with the
 * case's.
 */

export interface CardResult {
  case: CardCase;
  got: 'verify' | 'hold';
  correct: boolean;
  reasons: string[];
}

export interface CardReport {
  cases: number;
  domains: number;
  matrix: { verifyVerify: number; verifyHold: number; holdVerify: number; holdHold: number };
  falseVerifications: CardResult[];
  falseHolds: CardResult[];
  /** Verified cards whose evidence is only the worker's say-so. */
  selfCertified: CardResult[];
  patterns: Record<CardPattern, { cases: number; correct: number; falseVerifications: number; falseHolds: number }>;
  results: CardResult[];
}

export function cardOf(c: CardCase): Parameters<typeof ruleVerify>[0] {
  const evidenceRequirements: EvidenceRequirement[] = c.requirements.map((text, i) => ({ id: `r${i + 1}`, text }));
  const evidence: BoardEvidence[] = c.evidence.map((e, i) => ({
    id: `e-${i + 1}`,
    kind: e.kind,
    summary: e.summary,
    ...(e.ref !== undefined ? { ref: e.ref } : {}),
    covers: e.covers ?? [],
    attachedBy: 'worker-1',
    at: '2025-06-01T09:00:00.000Z',
  }));
  return Object.freeze({ id: 'c-1', title: c.title, evidenceRequirements: Object.freeze(evidenceRequirements) as EvidenceRequirement[], evidence: Object.freeze(evidence) as BoardEvidence[], submission: c.submission });
}

export function runCard(c: CardCase): CardResult {
  const verdict = ruleVerify(cardOf(c));
  const got = verdict.decision === 'approve' ? 'verify' : 'hold';
  return { case: c, got, correct: got === c.expect, reasons: verdict.reasons };
}

export function evaluateCards(cases: readonly CardCase[]): CardReport {
  const results = cases.map(runCard);
  const patterns = Object.fromEntries((Object.keys(CARD_PATTERNS) as CardPattern[]).map((p) => [p, { cases: 0, correct: 0, falseVerifications: 0, falseHolds: 0 }])) as CardReport['patterns'];
  const matrix = { verifyVerify: 0, verifyHold: 0, holdVerify: 0, holdHold: 0 };
  for (const r of results) {
    matrix[`${r.case.expect}${r.got === 'verify' ? 'Verify' : 'Hold'}` as keyof typeof matrix]++;
    for (const p of r.case.patterns) {
      const t = patterns[p];
      t.cases++;
      if (r.correct) t.correct++;
      if (r.case.expect === 'hold' && r.got === 'verify') t.falseVerifications++;
      if (r.case.expect === 'verify' && r.got === 'hold') t.falseHolds++;
    }
  }
  return {
    cases: results.length,
    domains: new Set(cases.map((c) => c.domain)).size,
    matrix,
    falseVerifications: results.filter((r) => r.case.expect === 'hold' && r.got === 'verify'),
    falseHolds: results.filter((r) => r.case.expect === 'verify' && r.got === 'hold'),
    selfCertified: results.filter((r) => r.got === 'verify' && r.case.patterns.includes('self-certifying')),
    patterns,
    results,
  };
}
