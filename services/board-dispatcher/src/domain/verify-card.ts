import type { EvidenceRequirement } from '@vouch/contracts';
import { cardObservations, checkQuotedSupport, judgeCard, requirementFact, type CardJudgement } from '@vouch/judge';
import type { CardState } from './replay-board.js';

/**
 * The built-in verifier's rule check, through the one judge (@vouch/judge):
 * a card is verifiable only when it has evidence and the content of its
 * evidence shows every requirement (or, with none stated, the card's title),
 * and nothing attached contradicts what the worker submitted. `covers` is
 * the worker's hint of where to look, never proof: an item that names a
 * requirement it does not show is reported as such. This is the floor: an
 * LLM second opinion may support a requirement only with verbatim quotes
 * the judge checks, and may reject what this approves.
 */

export interface RequirementCoverage {
  requirement: EvidenceRequirement;
  /** The items whose content shows it (empty when none does). */
  evidenceIds: string[];
}

export interface RuleVerdict {
  decision: 'approve' | 'request_changes';
  reasons: string[];
  /** What is still missing, one item each, when changes are requested. */
  missing: string[];
  coverage: RequirementCoverage[];
  judgement: CardJudgement;
}

type JudgedCard = Pick<CardState, 'id' | 'title' | 'evidenceRequirements' | 'evidence'> & { submission?: string | null | undefined };

// A card's evidence array is replaced on every change and frozen after it (replay-board.ts), so a judgement keyed by it
// stays true for as long as the array lives: board.show renders coverage for every card without judging them again.
const judged = new WeakMap<object, { card: JudgedCard; judgement: CardJudgement }>();

/** The judge's verdict on a card's evidence, remembered while the card's frozen evidence is unchanged. */
export function judgeCardEvidence(card: JudgedCard): CardJudgement {
  const cached = judged.get(card.evidence);
  if (cached && cached.card.evidenceRequirements === card.evidenceRequirements && cached.card.title === card.title && cached.card.submission === card.submission) return cached.judgement;
  const judgement = judgeCard({
    title: card.title,
    requirements: card.evidenceRequirements,
    submission: card.submission ?? undefined,
    evidence: card.evidence,
  });
  if (Object.isFrozen(card.evidence)) judged.set(card.evidence, { card, judgement });
  return judgement;
}

export function coverageOf(card: JudgedCard): RequirementCoverage[] {
  if (card.evidenceRequirements.length === 0) return [];
  return judgeCardEvidence(card).requirements.map((r, i) => ({ requirement: card.evidenceRequirements[i] as EvidenceRequirement, evidenceIds: r.evidenceIds }));
}

function quoted(text: string): string {
  return text.length > 120 ? `"${text.slice(0, 119)}…"` : `"${text}"`;
}

export function ruleVerify(card: JudgedCard): RuleVerdict {
  const judgement = judgeCardEvidence(card);
  const coverage = coverageOf(card);
  if (card.evidence.length === 0) {
    return {
      decision: 'request_changes',
      reasons: [`card ${card.id} has no evidence: nothing shows the work was done`],
      missing: ['evidence that shows the work was done (a tool result, file or URL; a message is what someone said)', ...card.evidenceRequirements.map((r) => `${r.id}: ${r.text}`)],
      coverage,
      judgement,
    };
  }
  const reasons: string[] = [];
  const missing: string[] = [];
  for (const r of judgement.requirements) {
    const what = r.requirementId === 'title' ? `the card's outcome (${quoted(r.text)})` : `requirement ${r.requirementId} (${r.text})`;
    if (r.met) {
      const span = r.spans[0];
      reasons.push(`${what} is shown by ${r.evidenceIds.join(', ')}${span ? `: ${quoted(span.text)}` : ''}`);
      continue;
    }
    const claimed = r.unsupportedCovers.length ? `; ${r.unsupportedCovers.join(', ')} says it covers it but its content does not show it` : '';
    reasons.push(`${what} is not shown by the evidence: ${r.reason}${claimed}`);
    missing.push(r.requirementId === 'title' ? `evidence whose content shows the card is done: ${r.text}` : `${r.requirementId}: ${r.text}`);
  }
  // Changes requested name only what is missing; an approval names what shows each requirement.
  if (!judgement.met) reasons.splice(0, reasons.length, ...reasons.filter((r) => !/ is shown by /.test(r)));
  // The worker's account is checked too, and what the evidence contradicts in it is said; the requirements decide.
  for (const c of judgement.submissionClaims) reasons.push(`note: the submission says ${quoted(c.text)}, but ${c.statusReason}`);
  return { decision: judgement.met ? 'approve' : 'request_changes', reasons, missing, coverage, judgement };
}

/** The model's word on one requirement (llm-verifier.ts), as plain data. */
export interface QuotedRequirement {
  requirementId: string;
  shown: boolean;
  evidenceId?: string | undefined;
  quote?: string | undefined;
}

/** Whether a second opinion could change the rule verdict: only requirements nothing contradicts may be shown by a quote. */
export function quotesCouldHelp(rule: RuleVerdict): boolean {
  return rule.decision !== 'approve' && rule.judgement.requirements.every((r) => r.met || r.status === 'unverified' || r.status === 'unsupported');
}

/**
 * The rule verdict with the requirements a second opinion showed by quoting
 * an item's own words, each quote checked by the judge (in the item verbatim,
 * carrying the requirement's identifiers and numbers, nothing negative). A
 * quote never outweighs a contradiction: a contradicted requirement stays.
 */
export function supportByQuotes(card: JudgedCard, rule: RuleVerdict, quotes: readonly QuotedRequirement[]): RuleVerdict {
  if (rule.decision === 'approve' || !quotesCouldHelp(rule)) return rule;
  const items = new Map(cardObservations(card.evidence).map((o) => [o.id, o]));
  const reasons: string[] = [];
  const requirements = rule.judgement.requirements.map((r) => {
    if (r.met) return r;
    const q = quotes.find((x) => x.requirementId === r.requirementId && x.shown && x.quote !== undefined);
    if (!q || q.quote === undefined) return r;
    const checked = checkQuotedSupport({ text: r.requirementId === 'title' ? r.text : requirementFact(r.text), kind: 'statement' }, q.quote, q.evidenceId === undefined ? undefined : items.get(q.evidenceId));
    if (!checked.ok) {
      reasons.push(`LLM verifier's quote for ${r.requirementId} not accepted: ${checked.why}`);
      return r;
    }
    reasons.push(`${r.requirementId === 'title' ? "the card's outcome" : `requirement ${r.requirementId} (${r.text})`} is shown by ${checked.span.evidenceId}, quoted by the LLM verifier and checked by the judge: ${quoted(checked.span.text)}`);
    return { ...r, met: true, status: 'supported' as const, evidenceIds: [checked.span.evidenceId], spans: [checked.span] };
  });
  const met = requirements.every((r) => r.met);
  // Refused quotes are said; a verdict whose judgement is the rule's own changed nothing (the handler records no afterQuotes).
  if (!met) return { ...rule, reasons: [...rule.reasons, ...reasons] };
  return {
    decision: 'approve',
    reasons: [...rule.reasons.filter((x) => / is shown by /.test(x)), ...reasons],
    missing: [],
    coverage: rule.coverage.map((c, i) => ({ ...c, evidenceIds: requirements[i]?.evidenceIds ?? c.evidenceIds })),
    judgement: { ...rule.judgement, met: true, requirements },
  };
}
