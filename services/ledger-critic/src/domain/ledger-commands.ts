import {
  BadInputError,
  ConflictError,
  LEDGER_LIMITS,
  NotFoundError,
  type CompletionClaim,
  type CompletionEvidence,
  type CompletionProposal,
  type CriticPacket,
  type CriticRuns,
  type CritiqueOutcome,
  type CritiqueRecord,
  type EvidenceInput,
  type LlmClaimJudgement,
  type OpenItem,
  type PacketClaim,
  type ReviewPolicy,
} from '@vouch/contracts';
import { combineVerdicts, planLlmCritic, type LlmCriticPlan } from './combine-verdicts.js';
import { buildCriticPacket, buildCriticPrompt, type CriticPrompt } from './critic-packet.js';
import { checkQuotedSupport, describeObservation, isBlockingFailure, deriveClaims, type DerivedClaim, observeEvidence, type ObservationFeatures, type StoredObservation, candidateSeqs, findCandidates, indexEvidence, judgeCandidates, readEvidenceInMemory, unresolvedFailures, type ClaimCandidates, type EvidenceIndex, type FeaturesBySeq } from '@vouch/judge';
import type { LedgerEvent } from './ledger-events.js';
import { checkClaimJudgements, toCritiqueVerdict, type LlmVerdict } from './llm-verdict.js';
import { applyEvents, type LedgerState } from './replay-ledger.js';
import { ruleCritic, type CritiqueVerdict } from './rule-critic.js';
import { isClosed, statusAfterCritique } from './terminal-status.js';
import { trackUnresolved } from './unresolved-items.js';

/**
 * Commands decide, from the current state and a validated input, which events
 * to append, or refuse with a typed error that changes nothing. A handler
 * loads the state, calls one of these, and appends the events in one
 * transaction with the state's version as the expected version.
 */

export interface Decision {
  events: LedgerEvent[];
  /** The state after the events. */
  state: LedgerState;
}

function after(state: LedgerState | undefined, events: LedgerEvent[]): LedgerState {
  const next = applyEvents(state, events);
  if (!next) throw new Error('a command produced no ledger');
  return next;
}

function requireLedger(state: LedgerState | undefined, runId: string): LedgerState {
  if (!state) throw new NotFoundError(`no ledger for run "${runId}": open one with ledger.open first`, { runId });
  return state;
}

function closedError(state: LedgerState, what: string): ConflictError {
  const outcome = state.status === 'approved' ? 'was approved' : `ended as ${state.status}`;
  return new ConflictError(
    `the ledger of run "${state.runId}" ${outcome} and takes no more ${what}. Read it with ledger.get or ledger.render; to keep working, open a new ledger under a new run id.`,
    { runId: state.runId, status: state.status, version: state.version },
  );
}

export interface OpenLedgerCommand {
  runId: string;
  goal: string;
  policy: ReviewPolicy;
  /** The cycle budget, already defaulted from the service config. */
  cycleBudget: number;
  /** A board whose open cards each review counts as open items. */
  boardId?: string | undefined;
  at: string;
}

/** Opens a ledger. Opening it again with the same goal, policy and budget is a no-op that returns it. */
export function openLedger(state: LedgerState | undefined, cmd: OpenLedgerCommand): Decision & { alreadyOpened: boolean } {
  if (state) {
    if (state.goal === cmd.goal && state.policy === cmd.policy && state.cycleBudget === cmd.cycleBudget && (state.boardId ?? undefined) === cmd.boardId) return { events: [], state, alreadyOpened: true };
    throw new ConflictError(
      `run "${cmd.runId}" already has a ledger with a different goal, policy, cycle budget or board: open the new task under a new run id, or read this one with ledger.get`,
      { runId: cmd.runId, status: state.status, version: state.version, policy: state.policy, cycleBudget: state.cycleBudget },
    );
  }
  if (!Number.isInteger(cmd.cycleBudget) || cmd.cycleBudget < 1 || cmd.cycleBudget > LEDGER_LIMITS.maxCycleBudget) {
    throw new BadInputError(`cycleBudget must be a whole number from 1 to ${LEDGER_LIMITS.maxCycleBudget}`, [{ path: 'cycleBudget', message: `got ${cmd.cycleBudget}` }]);
  }
  const events: LedgerEvent[] = [
    { type: 'ledger_opened', seq: 1, at: cmd.at, runId: cmd.runId, goal: cmd.goal, policy: cmd.policy, cycleBudget: cmd.cycleBudget, ...(cmd.boardId !== undefined ? { boardId: cmd.boardId } : {}) },
  ];
  return { events, state: after(undefined, events), alreadyOpened: false };
}

export interface RecordEvidenceCommand {
  runId: string;
  items: readonly EvidenceInput[];
  at: string;
  /**
   * What the critic reads from each item (extractObservationFeatures), when
   * the caller read it already: the handler reads it before it locks the
   * ledger, so a large batch does not hold the lock while it is read.
   */
  features?: readonly ObservationFeatures[];
}

/**
 * Records a batch of observations, failures included; each gets an id and the
 * next evidence seq. `observations` are the features of the new items, to be
 * stored (ledger_observations) in the transaction that appends the events.
 */
export function recordEvidence(state: LedgerState | undefined, cmd: RecordEvidenceCommand): Decision & { recorded: Array<{ id: string; seq: number }>; observations: StoredObservation[] } {
  const ledger = requireLedger(state, cmd.runId);
  if (isClosed(ledger.status)) throw closedError(ledger, 'evidence');
  if (cmd.items.length === 0) throw new BadInputError('items must hold at least one observation', [{ path: 'items', message: 'empty' }]);
  const held = ledger.evidence.length;
  if (held + cmd.items.length > LEDGER_LIMITS.evidencePerLedger) {
    throw new ConflictError(
      `the ledger of run "${cmd.runId}" holds ${held} of at most ${LEDGER_LIMITS.evidencePerLedger} evidence items, and this batch of ${cmd.items.length} would pass the limit: record one compact summary per step, with the raw output behind rawRef`,
      { runId: cmd.runId, evidenceCount: held, version: ledger.version },
    );
  }
  if (cmd.features && cmd.features.length !== cmd.items.length) throw new Error(`a batch of ${cmd.items.length} items came with features of ${cmd.features.length}`);
  const items: CompletionEvidence[] = cmd.items.map((input, k) => {
    const seq = held + k + 1;
    return {
      id: `ev-${seq}`,
      seq,
      kind: input.kind,
      ...(input.toolName !== undefined ? { toolName: input.toolName } : {}),
      ...(input.success !== undefined ? { success: input.success } : {}),
      summary: input.summary,
      ...(input.rawRef !== undefined ? { rawRef: input.rawRef } : {}),
      observedAt: input.observedAt ?? cmd.at,
      recordedAt: cmd.at,
    };
  });
  // Read once, here or by the handler: every later review uses what is stored.
  const given = cmd.features;
  const observations = given ? items.map((item, k) => ({ seq: item.seq, features: given[k] as ObservationFeatures })) : observeEvidence(items);
  const events: LedgerEvent[] = [{ type: 'evidence_recorded', seq: ledger.version + 1, at: cmd.at, items }];
  return { events, state: after(ledger, events), recorded: items.map((i) => ({ id: i.id, seq: i.seq })), observations };
}

export interface ProposeCompletionCommand {
  runId: string;
  /** Identifies this attempt across job retries (the critique job's id). */
  proposalId: string;
  summary: string;
  visibleAnswer?: string | undefined;
  openItems: readonly OpenItem[];
  at: string;
}

/** Everything a review needs before the LLM critic is asked; pure, so the handler can call the LLM in between. */
export interface CompletionReview {
  /** The ledger version the review was planned on. */
  baseVersion: number;
  /** The evidence it saw: seq 1 to this. */
  evidenceSeen: number;
  cycle: number;
  proposal: CompletionProposal;
  claims: CompletionClaim[];
  failures: CompletionEvidence[];
  rule: CritiqueVerdict;
  packet: CriticPacket;
  llm: LlmCriticPlan;
  /** The latest observation, when it says the agent needs a person or a permission to go on. */
  latestBlocker?: string;
  /** The LLM critic's prompt, when it should run. */
  prompt?: CriticPrompt;
}

export type ReviewPlan = { kind: 'review'; review: CompletionReview } | { kind: 'already_reviewed'; outcome: CritiqueOutcome };

/**
 * A review before it has read the evidence: the ledger it read, the attempt
 * and the claims derived from it. A review runs in three steps, so that the
 * handler reads from the store only what each step needs: draft (no
 * features), find the candidates (the index keys of the evidence the review
 * sees), plan (the full features of those candidates only).
 */
export interface ReviewDraft {
  ledger: LedgerState;
  cycle: number;
  proposal: CompletionProposal;
  claims: DerivedClaim[];
}

export type ReviewStart = { kind: 'draft'; draft: ReviewDraft } | { kind: 'already_reviewed'; outcome: CritiqueOutcome };

/** Starts a review of a completion attempt: a retried job finds its attempt already reviewed and gets the recorded outcome back. */
export function draftCompletionReview(state: LedgerState | undefined, cmd: ProposeCompletionCommand): ReviewStart {
  const ledger = requireLedger(state, cmd.runId);
  const done = ledger.critiques.find((c) => c.proposalId === cmd.proposalId);
  if (done) return { kind: 'already_reviewed', outcome: critiqueOutcome(ledger, done, true) };
  if (isClosed(ledger.status)) throw closedError(ledger, 'completion attempts');
  const cycle = ledger.critiques.length + 1;
  const proposal: CompletionProposal = {
    proposalId: cmd.proposalId,
    cycle,
    summary: cmd.summary,
    ...(cmd.visibleAnswer !== undefined && cmd.visibleAnswer.trim() !== '' ? { visibleAnswer: cmd.visibleAnswer } : {}),
    openItems: [...cmd.openItems],
    proposedAt: cmd.at,
  };
  const claims = deriveClaims({ goal: ledger.goal, summary: cmd.summary, visibleAnswer: proposal.visibleAnswer }, { cycle, policy: ledger.policy });
  return { kind: 'draft', draft: { ledger, cycle, proposal, claims } };
}

/** The evidence a drafted review judges: its index, each claim's candidates, and the seqs whose features it needs. */
export interface ReviewCandidates {
  index: EvidenceIndex;
  claims: ClaimCandidates[];
  /** Evidence seqs of every claim's candidates, ascending: the only features the review reads. */
  seqs: number[];
}

/** Finds each claim's candidates among all the evidence the review sees, by the index keys stored for each item (by position). */
export function findReviewCandidates(draft: ReviewDraft, keys: ReadonlyArray<readonly string[]>): ReviewCandidates {
  const index = indexEvidence(draft.ledger.evidence, keys);
  const claims = findCandidates(draft.claims, index);
  return { index, claims, seqs: candidateSeqs(claims, index) };
}

/** Reconciles the claims with their candidates' features, runs the rule critic and builds the packet. */
export function planCompletionReview(draft: ReviewDraft, found: ReviewCandidates, features: FeaturesBySeq, opts: { llmConfigured: boolean }): CompletionReview {
  const { ledger, cycle, proposal } = draft;
  const claims = judgeCandidates(found.claims, found.index, features, ledger.policy);
  const failures = unresolvedFailures(found.index);
  const latestBlocker = latestNeedsPerson(ledger.evidence);
  const rule = ruleCritic({ claims, openItems: proposal.openItems, policy: ledger.policy, ...(latestBlocker ? { latestBlocker } : {}) });
  const packet = buildCriticPacket({ state: ledger, cycle, claims, openItems: proposal.openItems, failures, floor: rule });
  const llm = planLlmCritic(ledger.policy, rule.decision, opts.llmConfigured);
  return {
    baseVersion: ledger.version,
    evidenceSeen: ledger.evidence.length,
    cycle,
    proposal,
    claims,
    failures,
    rule,
    packet,
    llm,
    ...(latestBlocker ? { latestBlocker } : {}),
    ...(llm.run ? { prompt: buildCriticPrompt(packet) } : {}),
  };
}

/** The latest observation, when it says the agent cannot go on without a person or a permission. */
function latestNeedsPerson(evidence: readonly CompletionEvidence[]): string | undefined {
  for (let i = evidence.length - 1; i >= 0; i--) {
    const item = evidence[i] as CompletionEvidence;
    if (item.kind === 'critic_feedback') continue;
    return isBlockingFailure(item) ? describeObservation(item) : undefined;
  }
  return undefined;
}

/**
 * The three steps in one, with the evidence's features in memory (by
 * position; read from the summaries where absent or stale): for tests, the
 * critic corpus and benchmarks. The service reads them from the store.
 */
export function reviewInMemory(state: LedgerState | undefined, cmd: ProposeCompletionCommand, opts: { llmConfigured: boolean }, observations?: ReadonlyArray<ObservationFeatures | undefined>): ReviewPlan {
  const start = draftCompletionReview(state, cmd);
  if (start.kind === 'already_reviewed') return start;
  const { index, features } = readEvidenceInMemory(start.draft.ledger.evidence, observations);
  const found = findReviewCandidates(start.draft, index.keys);
  return { kind: 'review', review: planCompletionReview(start.draft, found, features, opts) };
}

/** What the LLM critic did: not asked, answered, or failed (timeout, bad JSON); a failure leaves the rule verdict standing. */
export type LlmCriticResult = { ran: false; note: string } | { ran: true; model: string; verdict: LlmVerdict } | { ran: true; model: string; error: string };

/**
 * Where a planned review stands against the ledger now. Evidence recorded since
 * it was planned does not matter: the review decides on what it read, and that
 * evidence is evidence since it for the next cycle. Only another review
 * concluded in between makes it stale: it was planned as a cycle that is taken
 * (or, for a retried job, it is already recorded).
 */
export type ReviewStanding = { kind: 'current' } | { kind: 'already_reviewed'; outcome: CritiqueOutcome } | { kind: 'superseded' };

export function reviewStanding(state: LedgerState, review: CompletionReview): ReviewStanding {
  const done = state.critiques.find((c) => c.proposalId === review.proposal.proposalId);
  if (done) return { kind: 'already_reviewed', outcome: critiqueOutcome(state, done, true) };
  if (state.critiques.length !== review.cycle - 1 || state.version < review.baseVersion) return { kind: 'superseded' };
  return { kind: 'current' };
}

/**
 * Claims the rules left unverified or unsupported that the LLM critic found
 * entailed, with a quote the judge accepts (checkQuotedSupport): supported,
 * decided by the quote. A contradicted or blocked claim stays as it is: a
 * quote cannot outweigh a failure the rules saw.
 */
export function supportByQuotes(claims: readonly CompletionClaim[], judgements: readonly LlmClaimJudgement[], evidence: ReadonlyMap<string, CompletionEvidence>): CompletionClaim[] {
  let changed = false;
  const out = claims.map((claim) => {
    if (!claim.requiresEvidence || (claim.status !== 'unverified' && claim.status !== 'unsupported')) return claim;
    const j = judgements.find((x) => x.claimId === claim.id && x.verdict === 'entails' && x.quoteFound && x.quote !== undefined);
    if (!j || j.quote === undefined) return claim;
    const checked = checkQuotedSupport(claim, j.quote, j.evidenceId === undefined ? undefined : evidence.get(j.evidenceId));
    if (!checked.ok) return claim;
    changed = true;
    return {
      ...claim,
      status: 'supported' as const,
      statusReason: `shown by ${checked.span.evidenceId}, quoted by the LLM critic and checked by the judge: "${checked.span.text}"`,
      missingFeatures: [],
      evidenceIds: claim.evidenceIds.includes(checked.span.evidenceId) ? claim.evidenceIds : [...claim.evidenceIds, checked.span.evidenceId],
      evidenceSpans: [checked.span],
      decidedBy: 'llm_quote' as const,
    };
  });
  return changed ? out : (claims as CompletionClaim[]);
}

/**
 * Combines the verdicts, applies terminal discipline and emits the review's
 * events at the ledger's head, which may be past the version the review read.
 * `concludedAt` is when it concludes (the proposal time when absent).
 */
export function concludeCompletionReview(state: LedgerState, review: CompletionReview, llm: LlmCriticResult, concludedAt?: string): Decision & { outcome: CritiqueOutcome } {
  if (reviewStanding(state, review).kind !== 'current') {
    throw new ConflictError(`the ledger of run "${state.runId}" was reviewed by another completion attempt while this one was (cycle ${review.cycle}): propose again`, {
      runId: state.runId,
      version: state.version,
    });
  }
  const evidenceById = new Map(state.evidence.map((e) => [e.id, e]));
  const judgements = llm.ran && 'verdict' in llm ? checkClaimJudgements(llm.verdict, evidenceById) : [];
  // The LLM may support a claim the rules could not see, with a quote the judge checks; the floor is then taken again.
  const claims = supportByQuotes(review.claims, judgements, evidenceById);
  const floor = claims === review.claims ? review.rule : ruleCritic({ claims, openItems: review.proposal.openItems, policy: state.policy, ...(review.latestBlocker ? { latestBlocker: review.latestBlocker } : {}) });
  const llmVerdict = llm.ran && 'verdict' in llm ? toCritiqueVerdict(llm.verdict, claims, judgements) : undefined;
  const combined = combineVerdicts(floor, llmVerdict);
  const terminal = statusAfterCritique(combined.decision, review.cycle, state.cycleBudget);
  const critics: CriticRuns = {
    rule: { decision: review.rule.decision, reasons: review.rule.reasons },
    ...(floor !== review.rule ? { afterQuotes: { decision: floor.decision, reasons: floor.reasons } } : {}),
    llm: !llm.ran
      ? { ran: false, note: llm.note }
      : 'verdict' in llm
        ? { ran: true, model: llm.model, decision: llm.verdict.decision, reasons: llm.verdict.reasons, ...(judgements.length ? { claims: judgements } : {}) }
        : { ran: true, model: llm.model, note: `its answer was not used: ${llm.error}` },
  };
  const critique: CritiqueRecord = {
    cycle: review.cycle,
    proposalId: review.proposal.proposalId,
    decision: combined.decision,
    status: terminal.status,
    reasons: combined.reasons,
    missingEvidence: combined.missingEvidence,
    critics,
    baseVersion: review.baseVersion,
    evidenceSeqAtCritique: review.evidenceSeen,
    at: review.proposal.proposedAt,
  };
  const unresolved = trackUnresolved({ prior: state.unresolved, cycle: review.cycle, missingEvidence: combined.missingEvidence, failures: review.failures, openItems: review.proposal.openItems });
  // The events land after whatever was recorded while the critics ran; their time never goes back past it.
  const at = [review.proposal.proposedAt, concludedAt ?? '', state.updatedAt].reduce((a, b) => (b > a ? b : a));
  const v = state.version;
  const events: LedgerEvent[] = [
    { type: 'completion_proposed', seq: v + 1, at, proposal: review.proposal, claims },
    { type: 'critique_recorded', seq: v + 2, at, critique, unresolved, packet: review.packet },
    { type: 'status_changed', seq: v + 3, at, from: state.status, to: terminal.status, reason: terminal.reason },
  ];
  const next = after(state, events);
  return { events, state: next, outcome: critiqueOutcome(next, critique, false) };
}

function countClaims(claims: ReadonlyArray<CompletionClaim | PacketClaim>): CritiqueOutcome['claims'] {
  const count = (status: CompletionClaim['status']): number => claims.filter((c) => c.requiresEvidence && c.status === status).length;
  return {
    total: claims.length,
    material: claims.filter((c) => c.requiresEvidence).length,
    supported: count('supported'),
    unsupported: count('unsupported'),
    contradicted: count('contradicted'),
    unverified: count('unverified'),
    blocked: count('blocked'),
  };
}

/** The result of a review as the critique job returns it: status and decision apart from any text. */
export function critiqueOutcome(state: LedgerState, critique: CritiqueRecord, alreadyReviewed: boolean): CritiqueOutcome {
  const latest = critique.cycle === state.critiques.length;
  const claims = latest ? state.proposedClaims : (state.packets[critique.cycle - 1]?.claims ?? []);
  return {
    runId: state.runId,
    cycle: critique.cycle,
    cycleBudget: state.cycleBudget,
    decision: critique.decision,
    status: critique.status,
    completed: critique.status === 'approved',
    reasons: critique.reasons,
    missingEvidence: critique.missingEvidence,
    critics: critique.critics,
    claims: countClaims(claims),
    alreadyReviewed,
  };
}
