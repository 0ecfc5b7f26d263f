import type { BoardEvidenceKind } from '@vouch/contracts';

/**
 * One case of the board verifier's evaluation corpus: a work card, its
 * evidence requirements, the worker's submission and the evidence attached,
 * and what a careful independent verifier decides. Cases are written from the
 * verifier's side, without reading the verifier's code: the verifier is
 * measured against them, never the other way round.
 */

/** The ways a card's evidence can mislead a verifier; each is covered in both directions where it has two. */
export const CARD_PATTERNS = {
  'self-certifying': "the evidence is the worker's own say-so (a message such as 'done', 'lol', 'verified'), with covers naming the requirement, and shows none of it",
  'numbers-polarity': 'the evidence states a different number or the opposite result from the requirement',
  paraphrase: 'the evidence shows the requirement in other words',
  'fail-then-succeed': 'an earlier evidence item shows a failure, a later one the success (or the reverse order)',
  'no-requirements': 'the card states no evidence requirements: the evidence must show the card title is done',
  'partial-coverage': 'some requirements are shown, one is not',
  'wrong-covers': 'covers names a requirement the item does not show, while another item shows it (or nothing does)',
  baseline: 'a plain case',
} as const;
export type CardPattern = keyof typeof CARD_PATTERNS;

/** One piece of evidence attached to the card, as the worker attached it. */
export interface CardEvidenceCase {
  kind: BoardEvidenceKind;
  /** The evidence itself: what the tool returned, what the file or page shows. */
  summary: string;
  /** Where the evidence lives (a URL for `url` evidence). */
  ref?: string;
  /** Requirement ids (r1, r2, …) the worker says this item covers. */
  covers?: string[];
}

export interface CardCase {
  id: string;
  domain: string;
  patterns: CardPattern[];
  title: string;
  description?: string;
  /** Evidence requirement texts; their ids are r1, r2, … in this order. */
  requirements: string[];
  /** The worker's submission summary. */
  submission: string;
  evidence: CardEvidenceCase[];
  /** What a careful independent verifier decides. */
  expect: 'verify' | 'hold';
  /** Why, in one line. */
  why: string;
}
