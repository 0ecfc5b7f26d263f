import type { BoardEvidence, EvidenceRequirement } from '@vouch/contracts';
import type { CardState } from './replay-board.js';

/**
 * The built-in verifier's rule check: a card is verifiable only when it has
 * evidence, and every evidence requirement is covered by some of it. Evidence
 * covers a requirement when it says so (`covers: ['r1']`), or when it
 * mentions most of the requirement's content words (a worker that forgot to
 * name the requirement is not failed for the omission). This is the floor:
 * an LLM second opinion may reject what it approves, never the reverse.
 */

export interface RequirementCoverage {
  requirement: EvidenceRequirement;
  evidenceIds: string[];
}

export interface RuleVerdict {
  decision: 'approve' | 'request_changes';
  reasons: string[];
  /** What is still missing, one item each, when changes are requested. */
  missing: string[];
  coverage: RequirementCoverage[];
}

const STOP_WORDS = new Set(['the', 'and', 'for', 'that', 'this', 'with', 'from', 'are', 'was', 'were', 'has', 'have', 'its', 'all', 'any', 'each', 'every', 'into', 'onto', 'of', 'to', 'in', 'on', 'a', 'an', 'is', 'it', 'be', 'by', 'or', 'as', 'at']);

/** The words of a text that carry meaning: lowercase, 3+ characters, not stop words. */
export function contentWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}._/-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu) ?? [])].filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
}

/** Share of a requirement's content words that must appear in one piece of evidence for it to count without `covers`. */
const LEXICAL_COVERAGE = 0.6;

function mentions(evidence: BoardEvidence, words: readonly string[]): boolean {
  if (words.length === 0) return false;
  const haystack = `${evidence.summary} ${evidence.ref ?? ''}`.toLowerCase();
  const hits = words.filter((w) => haystack.includes(w)).length;
  return hits / words.length >= LEXICAL_COVERAGE;
}

export function coverageOf(card: Pick<CardState, 'evidenceRequirements' | 'evidence'>): RequirementCoverage[] {
  return card.evidenceRequirements.map((requirement) => {
    const words = contentWords(requirement.text);
    const evidenceIds = card.evidence.filter((e) => e.covers.includes(requirement.id) || mentions(e, words)).map((e) => e.id);
    return { requirement, evidenceIds };
  });
}

export function ruleVerify(card: Pick<CardState, 'id' | 'evidenceRequirements' | 'evidence'>): RuleVerdict {
  const coverage = coverageOf(card);
  if (card.evidence.length === 0) {
    return {
      decision: 'request_changes',
      reasons: [`card ${card.id} has no evidence: nothing shows the work was done`],
      missing: ['evidence that shows the work was done (a tool result, file, URL or message)', ...coverage.map((c) => `${c.requirement.id}: ${c.requirement.text}`)],
      coverage,
    };
  }
  const uncovered = coverage.filter((c) => c.evidenceIds.length === 0);
  if (uncovered.length > 0) {
    return {
      decision: 'request_changes',
      reasons: uncovered.map((c) => `requirement ${c.requirement.id} (${c.requirement.text}) is not covered by any evidence`),
      missing: uncovered.map((c) => `${c.requirement.id}: ${c.requirement.text}`),
      coverage,
    };
  }
  const reasons =
    coverage.length === 0
      ? [`card ${card.id} has ${card.evidence.length} evidence item${card.evidence.length === 1 ? '' : 's'} and no stated requirements`]
      : coverage.map((c) => `requirement ${c.requirement.id} is covered by ${c.evidenceIds.join(', ')}`);
  return { decision: 'approve', reasons, missing: [], coverage };
}
