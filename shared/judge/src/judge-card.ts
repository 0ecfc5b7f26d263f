import type { ClaimStatus, CompletionClaim, CompletionEvidence, EvidenceKind, EvidenceSpan } from '@vouch/contracts';
import { classifyClaim, deriveClaims, type DerivedClaim } from './derive-claims.js';
import { extractFeatures } from './extract-features.js';
import { FEEDBACK_ONLY_REASON, reconcileClaims } from './reconcile-claims.js';

/**
 * A work card judged like a completion: its evidence requirements (or, with
 * none, its title) and the worker's submission are claims; its evidence items
 * are the observations. A requirement is met only when an item's content
 * shows it. What the worker says about its own evidence (`covers`) and its
 * summary are not evidence: `covers` only says where to look first, and the
 * submission is a claim to check, never an observation.
 */

/** The board's kinds of evidence, as the judge reads them. */
export type CardEvidenceKind = 'tool_result' | 'file' | 'url' | 'message' | 'verification_note';

export interface CardEvidenceItem {
  id: string;
  kind: CardEvidenceKind;
  summary: string;
  ref?: string | undefined;
  /** The requirement ids the worker says it covers: a hint of where to look, never proof. */
  covers?: readonly string[] | undefined;
}

export interface CardToJudge {
  title: string;
  requirements: ReadonlyArray<{ id: string; text: string }>;
  submission?: string | undefined;
  evidence: readonly CardEvidenceItem[];
}

export interface RequirementJudgement {
  /** The requirement's id, or `title` for a card without requirements. */
  requirementId: string;
  text: string;
  met: boolean;
  status: ClaimStatus;
  reason: string;
  /** The evidence items its verdict rests on, and the words in them. */
  evidenceIds: string[];
  spans: EvidenceSpan[];
  /** Items whose covers named it but whose content does not show it. */
  unsupportedCovers: string[];
}

export interface CardJudgement {
  met: boolean;
  requirements: RequirementJudgement[];
  /** The submission's material claims that the evidence contradicts or does not show. */
  submissionClaims: CompletionClaim[];
}

// A note is an opinion about the evidence, as critic feedback is in a ledger: it neither shows nor contradicts. So is a
// message: what someone said (the worker itself, more often than not), not what was observed. A message that repeats
// the requirement's words word for word would otherwise verify it; the tool result, file or URL it speaks of must be
// attached instead, and a person's word is for a reviewer to weigh (board.reviewCard with approve).
const KIND: Record<CardEvidenceKind, EvidenceKind> = {
  tool_result: 'tool_result',
  file: 'file_change',
  url: 'runtime_observation',
  message: 'critic_feedback',
  verification_note: 'critic_feedback',
};

const AT = '1970-01-01T00:00:00.000Z';

/** The card's evidence as observations, in the order it was attached; the ref (a path, a URL) is part of what was seen. */
export function cardObservations(evidence: readonly CardEvidenceItem[]): CompletionEvidence[] {
  return evidence.map((item, i) => ({
    id: item.id,
    seq: i + 1,
    kind: KIND[item.kind],
    // After the summary, so that offsets of words in the summary stay those of the item's own summary.
    summary: item.ref && (item.kind === 'file' || item.kind === 'url') ? `${item.summary}\n${item.ref}` : item.summary,
    observedAt: AT,
    recordedAt: AT,
  }));
}

// A requirement often describes the evidence and then the fact it must show: "<the test output> showing <0 failures>",
// "<the postmortem document> with <timeline, root cause and action items>". The description says where to look; the
// fact is what must be shown. Names and identifiers in the description still say which thing ("the MultiQC report").
const MEDIUM_RE = /^(.{1,80}?)\s+(?:showing|that shows?|which shows?|shows?|lists|states|confirms|proves|listing|stating|confirming|proving|with)\s+(.+)$/i;

/** The fact a requirement asks the evidence to show, without the words that only describe the evidence. */
// "the inventory output", "the deploy log": a form word at the end names the evidence, the words before it the fact.
const TRAILING_FORM_RE = /^(.*\S)\s+(?:output|log|logs|listing|report|record|screenshot|dump|printout|transcript|excerpt|capture)$/i;

export function requirementFact(text: string): string {
  const whole = text.replace(/\s+/g, ' ').trim();
  const trailing = TRAILING_FORM_RE.exec(whole);
  const flat = trailing && /[A-Za-z]{3,}/.test((trailing[1] as string).replace(/^(?:the|a|an)(?:\s+|$)/i, '')) ? (trailing[1] as string) : whole;
  const m = MEDIUM_RE.exec(flat);
  if (!m || (m[1] as string).split(' ').length > 6) return flat;
  // "the same listing for us-east-1": "listing" names the evidence here, and what follows is no fact on its own.
  const factWords = (m[2] as string).split(' ').filter((w) => /^[A-Za-z]{3,}$/.test(w) && !/^(?:the|and|for|with|from|that|this|its|their|every|each|all|any)$/i.test(w));
  if (factWords.length < 2 && !/\d/.test(m[2] as string)) return flat;
  if (/^(?:of|for|from|on|in)\b/i.test(m[2] as string)) return flat;
  // Names, identifiers, URLs and paths in the description still say which thing: "https://status.example.com shows …".
  const names = (m[1] as string).split(' ').filter((w) => /[A-Z0-9]/.test(w.slice(1)) || /\d/.test(w) || /[/.:@_]\w/.test(w) || (/^[A-Z]/.test(w) && !/^(?:The|A|An)$/.test(w)));
  return [...names, m[2] as string].join(' ');
}

function requirementClaims(card: CardToJudge): DerivedClaim[] {
  const sources = card.requirements.length ? card.requirements : [{ id: 'title', text: card.title }];
  return sources.map((r) => {
    const text = card.requirements.length ? requirementFact(r.text) : r.text;
    const judged = classifyClaim(text);
    return {
      id: r.id,
      text,
      source: 'derived',
      // A requirement states what must be shown: it needs evidence whatever its wording.
      kind: judged.kind === 'action' || judged.kind === 'verification' ? judged.kind : card.requirements.length ? 'statement' : 'action',
      materiality: 'high',
      evidenceRequirement: `evidence that shows: ${r.text}`,
      features: [...extractFeatures(text)].sort(),
    } satisfies DerivedClaim;
  });
}

/** A span within the item's own summary (a span may reach into the ref read after it). */
function clipToSummary(span: EvidenceSpan, evidence: readonly CardEvidenceItem[]): EvidenceSpan {
  const summary = evidence.find((e) => e.id === span.evidenceId)?.summary ?? '';
  if (span.end <= summary.length) return span;
  const start = Math.min(span.start, summary.length);
  return { ...span, start, end: summary.length, text: summary.slice(start) };
}

/** Judges a card: every requirement (or the title) shown by an item's content, and no submitted claim contradicted. */
export function judgeCard(card: CardToJudge): CardJudgement {
  const observations = cardObservations(card.evidence);
  const sources = card.requirements.length ? card.requirements : [{ id: 'title', text: card.title }];
  const judged = reconcileClaims(requirementClaims(card), observations, 'full');
  const requirements = judged.map((claim, i): RequirementJudgement => {
    const source = sources[i] as { id: string; text: string };
    const evidenceIds = claim.status === 'supported' ? [...new Set(claim.evidenceSpans.map((s) => s.evidenceId))] : [];
    const unsupportedCovers = card.evidence.filter((e) => e.covers?.includes(source.id) && !evidenceIds.includes(e.id)).map((e) => e.id);
    return {
      requirementId: source.id,
      text: source.text,
      met: claim.status === 'supported',
      status: claim.status,
      reason: claim.statusReason === FEEDBACK_ONLY_REASON ? 'only a message or a verification note mentions it (what someone said); no tool result, file or URL shows it' : claim.statusReason,
      evidenceIds,
      spans: claim.status === 'supported' ? claim.evidenceSpans.map((span) => clipToSummary(span, card.evidence)) : [],
      unsupportedCovers,
    };
  });
  // The worker's own summary is a claim: what it says was done must not be contradicted by what it attached.
  const submitted = card.submission ? deriveClaims({ goal: card.title, summary: card.submission }, { cycle: 1 }).filter((c) => c.source !== 'derived') : [];
  const submissionClaims = reconcileClaims(submitted, observations, 'full').filter((c) => c.status === 'contradicted');
  // The submission is the worker's account: what it says wrong is reported, but the requirements decide, on what the items show.
  return { met: requirements.every((r) => r.met), requirements, submissionClaims };
}
