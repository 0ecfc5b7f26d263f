import type { CritiqueOutcome, EvidenceInput, OpenItem, ReviewPolicy } from '@vouch/contracts';
import { concludeCompletionReview, openLedger, recordEvidence, reviewInMemory, type CompletionReview, type LlmCriticResult } from '../src/domain/ledger-commands.js';
import type { LedgerEvent } from '../src/domain/ledger-events.js';
import type { ObservationFeatures } from '@vouch/judge';
import type { LedgerState } from '../src/domain/replay-ledger.js';

/**
 * Drives the ledger commands the way the service handler will: decide, keep the
 * events, carry the state. A fixed clock keeps every run reproducible.
 */
export class LedgerDriver {
  readonly events: LedgerEvent[] = [];
  state: LedgerState | undefined;
  readonly reviews: CompletionReview[] = [];
  /** What the critic read from each evidence item when it was recorded, by position: what the service keeps in ledger_observations. */
  readonly observations: ObservationFeatures[] = [];
  private clock = Date.parse('2025-03-01T10:00:00.000Z');
  private attempts = 0;

  constructor(readonly runId = 'run-1') {}

  now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  get ledger(): LedgerState {
    if (!this.state) throw new Error('no ledger opened yet');
    return this.state;
  }

  open(goal: string, policy: ReviewPolicy = 'full', cycleBudget = 3): LedgerState {
    const decision = openLedger(this.state, { runId: this.runId, goal, policy, cycleBudget, at: this.now() });
    this.events.push(...decision.events);
    this.state = decision.state;
    return decision.state;
  }

  record(...items: EvidenceInput[]): Array<{ id: string; seq: number }> {
    const decision = recordEvidence(this.state, { runId: this.runId, items, at: this.now() });
    this.events.push(...decision.events);
    this.state = decision.state;
    for (const o of decision.observations) this.observations[o.seq - 1] = o.features;
    return decision.recorded;
  }

  /** Proposes completion; `llm` answers for the LLM critic when the plan asks for it. */
  propose(input: {
    summary: string;
    visibleAnswer?: string;
    openItems?: OpenItem[];
    llm?: (review: CompletionReview) => LlmCriticResult;
    proposalId?: string;
    /** Evidence recorded after the review is planned and before it concludes, as while the critics run. */
    during?: EvidenceInput[];
  }): CritiqueOutcome {
    const proposalId = input.proposalId ?? `job-${++this.attempts}`;
    const plan = reviewInMemory(
      this.state,
      { runId: this.runId, proposalId, summary: input.summary, visibleAnswer: input.visibleAnswer, openItems: input.openItems ?? [], at: this.now() },
      { llmConfigured: input.llm !== undefined },
      this.observations,
    );
    if (plan.kind === 'already_reviewed') return plan.outcome;
    const { review } = plan;
    this.reviews.push(review);
    const llm: LlmCriticResult = review.llm.run && input.llm ? input.llm(review) : { ran: false, note: review.llm.run ? 'not configured' : review.llm.reason };
    if (input.during?.length) this.record(...input.during);
    const decision = concludeCompletionReview(this.ledger, review, llm);
    this.events.push(...decision.events);
    this.state = decision.state;
    return decision.outcome;
  }
}

export const ok = (kind: EvidenceInput['kind'], toolName: string, summary: string, extra: Partial<EvidenceInput> = {}): EvidenceInput => ({ kind, toolName, success: true, summary, ...extra });
export const failed = (kind: EvidenceInput['kind'], toolName: string, summary: string, extra: Partial<EvidenceInput> = {}): EvidenceInput => ({ kind, toolName, success: false, summary, ...extra });

/** An LLM critic that always answers with this decision. */
export const llmSays =
  (decision: 'approve' | 'request_changes' | 'blocked', reasons: string[] = [`the model says ${decision}`]) =>
  (): LlmCriticResult => ({ ran: true, model: 'test-critic', verdict: { decision, reasons, missingEvidence: [] } });
