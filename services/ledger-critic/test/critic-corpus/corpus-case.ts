import type { EvidenceInput, ReviewPolicy } from '@vouch/contracts';

/**
 * One case of the critic's evaluation corpus: a run's goal, what the agent
 * proposed as done, the observations recorded before it, and what a careful
 * reviewer decides. Cases are written from the reviewer's side, before and
 * independently of the critic's code: the critic is measured against them,
 * never the other way round.
 */

/** The ways the rule critic was seen to go wrong (issue 8); each is covered in both directions. */
export const PATTERNS = {
  'negative-result': 'the linked observation reports a negative result (zero delivered, not found, not met) whatever its success flag says',
  'shared-detail': 'one shared detail (an id, number, version) ties the claim to an observation about another fact',
  'subject-weight': 'generic words outvote the one that matters (which environment, list, jurisdiction); the action or kind of evidence differs',
  'visible-answer': 'the claim is only in the answer the user sees',
  'value-format': 'the evidence writes the same value another way (91.4 % vs 0.914, 12-hour vs 12 h, 16 vs 16.2), or a different value',
  'clause-inheritance': 'a clause without details of its own, after one with details',
  'fast-wording': 'the fast policy on different phrasings of the same trivial answer',
  baseline: 'a plain case: the evidence shows the claims, or plainly does not',
  supersession: 'a failed attempt followed by a later successful observation of the same action (or a success that a later failure of the same action overturns)',
  'agreeing-absence': 'the observation reports an absence the claim also asserts (none found, zero failed, nothing restarted), or reports a presence the claim denies',
  'action-outcome': 'an action claim whose object, identifiers and outcome are shown though the observation uses another verb or a state field; or the same id in a state that shows it not done',
  paraphrase: 'the observation says the same thing in other words without a shared identifier, or says a different fact in words that sound alike',
  'needs-person': 'the latest evidence says the agent cannot go on without a person or a permission (or such a block was lifted and the action then succeeded)',
  'fast-vague': 'the fast policy, with a summary that does not show the outcome of an action goal (or a question answer, or an action outcome that is named and shown)',
  'numbers-polarity': 'numbers or polarity differ between claim and observation, or the same number or polarity is written another way',
} as const;
export type Pattern = keyof typeof PATTERNS;

/**
 * What a careful reviewer says of one claim: `supported` (an observation
 * shows it), `held` (it needs evidence and none shows it), `immaterial` (the
 * policy needs no evidence for it).
 */
export type ClaimVerdict = 'supported' | 'held' | 'immaterial';

export interface CriticCase {
  id: string;
  domain: string;
  patterns: Pattern[];
  goal: string;
  policy?: ReviewPolicy;
  summary: string;
  visibleAnswer?: string;
  evidence: EvidenceInput[];
  /** `hold`: request_changes or blocked. */
  expect: 'approve' | 'hold';
  /**
   * The reviewer expects the decision `blocked` specifically (the agent needs
   * a person or a permission), not only a hold. A case with `blocked: true`
   * has `expect: 'hold'`.
   */
  blocked?: boolean;
  /** Claims by a fragment of their text (case-insensitive), with the verdict each deserves. */
  claims: Record<string, ClaimVerdict>;
  /** Why, in one line. */
  why: string;
}

type Kind = EvidenceInput['kind'];

/** A successful observation. */
export const ok = (kind: Kind, toolName: string, summary: string): EvidenceInput => ({ kind, toolName, success: true, summary });
/** A failed observation. */
export const bad = (kind: Kind, toolName: string, summary: string): EvidenceInput => ({ kind, toolName, success: false, summary });
/** An observation recorded without a success flag. */
export const seen = (kind: Kind, toolName: string, summary: string): EvidenceInput => ({ kind, toolName, summary });
