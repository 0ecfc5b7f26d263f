import type { CardReview } from '@vouch/contracts';
import { quotesCouldHelp, supportByQuotes, type QuotedRequirement, type RuleVerdict } from './verify-card.js';

/**
 * The built-in verifier's verdict: the rule check is the floor, the LLM's
 * second opinion may turn an approval into a request for changes, and may
 * show a requirement only by quotes the judge checks (supportByQuotes). These
 * are the decisions; asking the model is the caller's I/O.
 */

/** The LLM verifier's answer (llm-verifier.ts LlmOpinion), as plain data. */
export interface SecondOpinion {
  ran: boolean;
  model?: string | undefined;
  decision?: 'approve' | 'request_changes' | undefined;
  reasons?: string[] | undefined;
  missing?: string[] | undefined;
  requirements?: QuotedRequirement[] | undefined;
  note?: string | undefined;
}

/**
 * Whether to ask the model: when the rules approve (it may object) or when
 * nothing contradicts what they could not see (it may show a requirement
 * with a quote). Not asked, the opinion that stands in for it, with why.
 */
export function verifierPlan(rule: RuleVerdict, llmConfigured: boolean): { ask: true } | { ask: false; opinion: SecondOpinion } {
  if (rule.decision === 'approve' || (llmConfigured && quotesCouldHelp(rule))) return { ask: true };
  return {
    ask: false,
    opinion: {
      ran: false,
      note: llmConfigured ? 'the evidence contradicts a requirement: the LLM was not asked (no quote outweighs a contradiction)' : 'OLLAMA_HOST is not set: the rule check decided alone',
    },
  };
}

export interface MergedVerdict {
  decision: 'approve' | 'request_changes';
  missing: string[];
  reasons: string[];
  /** The model's quotes, for the review to check again; absent when it gave none. */
  quotes?: QuotedRequirement[];
  /** What each stage said, recorded on the review. */
  verifier: NonNullable<CardReview['verifier']>;
}

/** The rule verdict and the second opinion, merged: approve only when the floor (after checked quotes) approves and the model does not object. */
export function mergeVerdicts(card: Parameters<typeof supportByQuotes>[0], rule: RuleVerdict, llm: SecondOpinion): MergedVerdict {
  const floor = supportByQuotes(card, rule, llm.requirements ?? []);
  const decision = floor.decision === 'approve' && llm.decision !== 'request_changes' ? 'approve' : 'request_changes';
  const missing = floor.decision !== 'approve' ? floor.missing : decision === 'request_changes' ? (llm.missing?.length ? llm.missing : (llm.reasons ?? ['the verifier model asked for more evidence'])) : [];
  const reasons = [...floor.reasons, ...(llm.reasons ?? []).map((r) => `LLM verifier: ${r}`), ...(llm.note ? [llm.note] : [])];
  return {
    decision,
    missing,
    reasons,
    ...(llm.requirements?.length ? { quotes: llm.requirements } : {}),
    verifier: {
      rule: { decision: rule.decision, reasons: rule.reasons },
      ...(floor.judgement !== rule.judgement ? { afterQuotes: { decision: floor.decision, reasons: floor.reasons } } : {}),
      llm: { ran: llm.ran, ...(llm.model ? { model: llm.model } : {}), ...(llm.decision ? { decision: llm.decision } : {}), ...(llm.note ? { note: llm.note } : {}) },
    },
  };
}

