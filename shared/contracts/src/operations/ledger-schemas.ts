import { z } from 'zod';
import { text } from '../text.js';
import { IsoTimeSchema } from './common.js';

/**
 * Schemas of the completion ledger (ledger-critic): runs, evidence, claims,
 * critiques, critic packets and renderings. The operation entries are in
 * ledger.ts.
 */

/**
 * Bounds of the completion ledger. A ledger stays small: large raw outputs live
 * behind `rawRef`, and only a compact summary enters the ledger.
 */
export const LEDGER_LIMITS = {
  runIdChars: 200,
  goalChars: 4000,
  summaryChars: 4000,
  visibleAnswerChars: 8000,
  rawRefChars: 1000,
  toolNameChars: 200,
  evidencePerCall: 500,
  evidencePerLedger: 10_000,
  openItems: 100,
  openItemChars: 1000,
  maxCycleBudget: 10,
} as const;

/** Reviews a ledger allows before an unresolved request_changes ends it as incomplete_verification. */
export const DEFAULT_CYCLE_BUDGET = 3;

/** The caller's run id: one ledger per run, within the caller's tenant. */
export const LedgerRunIdSchema = text()
  .min(1, 'runId must not be empty: pass the id of the agent run this ledger belongs to')
  .max(LEDGER_LIMITS.runIdChars, `runId is at most ${LEDGER_LIMITS.runIdChars} characters`)
  .regex(/^[\x21-\x7e]+$/, 'runId must be printable ASCII with no spaces (the id your agent run already uses)');

export const LEDGER_STATUSES = ['open', 'approved', 'request_changes', 'blocked', 'incomplete_verification'] as const;
/**
 * `approved` is the only status that means completed. A blocked critique ends
 * the run as `incomplete_verification`; `blocked` is kept in the set so that
 * clients that know the blocked status parse every value.
 */
export const LedgerStatusSchema = z.enum(LEDGER_STATUSES);
export type LedgerStatus = z.infer<typeof LedgerStatusSchema>;

/** `fast`, for simple public tasks: only high-materiality claims need evidence and a clean rule pass approves. */
export const REVIEW_POLICIES = ['full', 'fast'] as const;
export const ReviewPolicySchema = z.enum(REVIEW_POLICIES, { error: 'policy is full or fast (fast: for simple public tasks)' });
export type ReviewPolicy = z.infer<typeof ReviewPolicySchema>;

export const EVIDENCE_KINDS = ['tool_result', 'file_change', 'delivery_result', 'runtime_observation', 'human_input', 'critic_feedback'] as const;
export const EvidenceKindSchema = z.enum(EVIDENCE_KINDS, { error: `kind must be one of ${EVIDENCE_KINDS.join(', ')}` });
export type EvidenceKind = z.infer<typeof EvidenceKindSchema>;

const ToolNameSchema = text()
  .min(1, 'toolName must not be empty: leave it out when no tool made the observation')
  .max(LEDGER_LIMITS.toolNameChars, `toolName is at most ${LEDGER_LIMITS.toolNameChars} characters`);

const SummarySchema = text()
  .trim()
  .min(1, 'summary must say what was observed, in a sentence or two')
  .max(LEDGER_LIMITS.summaryChars, `summary is at most ${LEDGER_LIMITS.summaryChars} characters: keep a compact summary and put the full output behind rawRef`);

const RawRefSchema = text()
  .min(1, 'rawRef must not be empty: leave it out when there is no stored raw output')
  .max(LEDGER_LIMITS.rawRefChars, `rawRef is at most ${LEDGER_LIMITS.rawRefChars} characters: store the output elsewhere and pass a short reference to it`);

/** One observation as the caller reports it. Failed observations are recorded like successes, never dropped. */
export const EvidenceInputSchema = z
  .object({
    kind: EvidenceKindSchema,
    toolName: ToolNameSchema.optional().describe('The tool that made the observation, e.g. the shell or test runner.'),
    success: z.boolean().optional().describe('Whether the observation succeeded. Record failures too: a failure with no later success contradicts the claims it touches.'),
    summary: SummarySchema.describe('What was observed, compactly: name the files, identifiers, numbers and URLs involved so claims can be linked to it.'),
    rawRef: RawRefSchema.optional().describe('Where the full raw output is stored; never shown in public renders.'),
    observedAt: IsoTimeSchema.optional().describe('When the observation was made; defaults to when it is recorded.'),
  })
  .strict();
export type EvidenceInput = z.infer<typeof EvidenceInputSchema>;

/** One recorded observation. `seq` orders evidence within the ledger: evidence after a critique has a higher seq than the critique saw. */
export const CompletionEvidenceSchema = z.object({
  id: text(),
  seq: z.number().int().positive(),
  kind: EvidenceKindSchema,
  toolName: text().optional(),
  success: z.boolean().optional(),
  summary: text(),
  rawRef: text().optional(),
  observedAt: IsoTimeSchema,
  recordedAt: IsoTimeSchema,
});
export type CompletionEvidence = z.infer<typeof CompletionEvidenceSchema>;

export const CLAIM_SOURCES = ['task_complete_summary', 'assistant_visible_text', 'derived'] as const;
export const ClaimSourceSchema = z.enum(CLAIM_SOURCES);
export type ClaimSource = z.infer<typeof ClaimSourceSchema>;

/**
 * What a claim asserts, from generic linguistic cues: something was done
 * (`action`), checked or found (`verification`), a plain statement, a hedged
 * outcome, a plan, an admitted limitation, or an aside.
 */
export const CLAIM_KINDS = ['action', 'verification', 'statement', 'hedged', 'plan', 'limitation', 'aside'] as const;
export const ClaimKindSchema = z.enum(CLAIM_KINDS);
export type ClaimKind = z.infer<typeof ClaimKindSchema>;

export const ClaimMaterialitySchema = z.enum(['low', 'medium', 'high']);
export type ClaimMateriality = z.infer<typeof ClaimMaterialitySchema>;

export const CLAIM_STATUSES = ['supported', 'unsupported', 'contradicted', 'unverified', 'blocked'] as const;
export const ClaimStatusSchema = z.enum(CLAIM_STATUSES);
export type ClaimStatus = z.infer<typeof ClaimStatusSchema>;

/** The words of one observation a claim's verdict rests on, so a person can check it at a glance. */
export const EvidenceSpanSchema = z.object({
  evidenceId: text(),
  /** Character offsets in the observation's summary. */
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  text: text(),
});
export type EvidenceSpan = z.infer<typeof EvidenceSpanSchema>;

/** One atomic claim derived from the proposed completion, reconciled with the evidence recorded before its review. */
export const CompletionClaimSchema = z.object({
  id: text(),
  text: text(),
  source: ClaimSourceSchema,
  kind: ClaimKindSchema,
  materiality: ClaimMaterialitySchema,
  /** What evidence would support it, in words. */
  evidenceRequirement: text(),
  /** Whether the review policy requires evidence for it. */
  requiresEvidence: z.boolean(),
  /** Salient features as `kind:value` (file, url, id, quote, num, name, word). */
  features: z.array(text()),
  /** Linked evidence, oldest first (at most the 20 most recent). */
  evidenceIds: z.array(text()),
  /** Salient details of the claim that no supporting evidence mentions. */
  missingFeatures: z.array(text()),
  status: ClaimStatusSchema,
  statusReason: text(),
  /**
   * What the verdict rests on: the words of the observation that show the
   * claim (supported), or that report the failed or negative result
   * (contradicted, blocked). Empty when no observation bears on it.
   */
  evidenceSpans: z.array(EvidenceSpanSchema).default([]),
  /**
   * Which critic decided its status: the rule judge, or the LLM critic's
   * quote, which the judge checked is in the evidence item verbatim and
   * carries the claim's identifiers and numbers. Absent: the rule judge.
   */
  decidedBy: z.enum(['rule', 'llm_quote']).optional(),
});
export type CompletionClaim = z.infer<typeof CompletionClaimSchema>;

/** An open todo or board card the agent reports with its completion. */
export const OpenItemInputSchema = z
  .object({
    text: text()
      .trim()
      .min(1, 'an open item needs its text')
      .max(LEDGER_LIMITS.openItemChars, `an open item is at most ${LEDGER_LIMITS.openItemChars} characters: shorten it to its title`),
    kind: z.enum(['todo', 'board_card'], { error: 'an open item is a todo or a board_card' }).default('todo'),
    ref: text().min(1).max(200).optional().describe('The todo or card id on its own board, if any.'),
  })
  .strict();
export type OpenItem = z.infer<typeof OpenItemInputSchema>;

export const CRITIQUE_DECISIONS = ['approve', 'request_changes', 'blocked'] as const;
export const CritiqueDecisionSchema = z.enum(CRITIQUE_DECISIONS);
export type CritiqueDecision = z.infer<typeof CritiqueDecisionSchema>;

/** One specific piece of missing evidence a critique asks for. */
export const MissingEvidenceSchema = z.object({
  claimId: text().optional(),
  claimText: text().optional(),
  need: text(),
  /** Salient details the evidence must mention, as display strings. */
  features: z.array(text()),
});
export type MissingEvidence = z.infer<typeof MissingEvidenceSchema>;

/** The LLM critic's judgement of one claim against its candidate evidence. */
export const LlmClaimJudgementSchema = z.object({
  claimId: text(),
  verdict: z.enum(['entails', 'contradicts', 'unrelated']),
  evidenceId: text().optional(),
  quote: text().optional(),
  quoteFound: z.boolean(),
});
export type LlmClaimJudgement = z.infer<typeof LlmClaimJudgementSchema>;

/** What each critic did in one review. */
export const CriticRunsSchema = z.object({
  rule: z.object({ decision: CritiqueDecisionSchema, reasons: z.array(text()) }),
  /** The rule floor taken again after claims the LLM critic supported with checked quotes (absent when it supported none). */
  afterQuotes: z.object({ decision: CritiqueDecisionSchema, reasons: z.array(text()) }).optional(),
  llm: z.object({
    ran: z.boolean(),
    model: text().optional(),
    decision: CritiqueDecisionSchema.optional(),
    reasons: z.array(text()).optional(),
    /** Why it did not run, or why its answer was not used. */
    note: text().optional(),
    /**
     * Its judgement of each material claim against the evidence, with the
     * words it quoted; `quoteFound` says whether those words are in the cited
     * observation (an entailment whose quote is not there does not count).
     */
    claims: z.array(LlmClaimJudgementSchema).optional(),
  }),
});
export type CriticRuns = z.infer<typeof CriticRunsSchema>;

/** One review of a proposed completion. */
export const CritiqueRecordSchema = z.object({
  cycle: z.number().int().positive(),
  proposalId: text(),
  decision: CritiqueDecisionSchema,
  /** The ledger status the review left. */
  status: LedgerStatusSchema,
  reasons: z.array(text()),
  missingEvidence: z.array(MissingEvidenceSchema),
  critics: CriticRunsSchema,
  /**
   * The ledger version the review read and decided on. Its events are appended
   * at the head it finds when it concludes, after any evidence recorded while
   * the critics ran.
   */
  baseVersion: z.number().int().positive(),
  /** The highest evidence seq the review saw; evidence with a higher seq came after it, and is evidence since it for the next cycle. */
  evidenceSeqAtCritique: z.number().int().nonnegative(),
  at: IsoTimeSchema,
});
export type CritiqueRecord = z.infer<typeof CritiqueRecordSchema>;

/** A loop still open after a review: missing evidence asked for, a failed observation, an open todo. */
export const UnresolvedItemSchema = z.object({
  id: text(),
  kind: z.enum(['missing_evidence', 'failed_observation', 'open_item']),
  text: text(),
  claimText: text().optional(),
  evidenceIds: z.array(text()),
  firstRaisedCycle: z.number().int().positive(),
  timesRaised: z.number().int().positive(),
});
export type UnresolvedItem = z.infer<typeof UnresolvedItemSchema>;

/** The texts of one completion attempt. */
export const CompletionProposalSchema = z.object({
  proposalId: text(),
  cycle: z.number().int().positive(),
  summary: text(),
  visibleAnswer: text().optional(),
  openItems: z.array(OpenItemInputSchema),
  proposedAt: IsoTimeSchema,
});
export type CompletionProposal = z.infer<typeof CompletionProposalSchema>;

/** The ledger as reads see it: the snapshot rebuilt exactly by replaying its events. */
export const LedgerSnapshotSchema = z.object({
  runId: text(),
  /** The board bound at ledger.open, or null: its open cards are open items of every review. (Ledgers opened before boards had none.) */
  boardId: text().nullable().default(null),
  goal: text(),
  policy: ReviewPolicySchema,
  cycleBudget: z.number().int().positive(),
  status: LedgerStatusSchema,
  /** True only when a review approved. */
  completed: z.boolean(),
  /** The seq of the last event: the expected version for the next append. */
  version: z.number().int().positive(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  /** The latest completion attempt, if any. */
  proposal: CompletionProposalSchema.nullable(),
  /** Claims of the latest attempt as its review saw them. */
  proposedClaims: z.array(CompletionClaimSchema),
  evidence: z.array(CompletionEvidenceSchema),
  critiques: z.array(CritiqueRecordSchema),
  unresolved: z.array(UnresolvedItemSchema),
});
export type LedgerSnapshot = z.infer<typeof LedgerSnapshotSchema>;

/**
 * Evidence comes back a page at a time: a ledger holds up to 10,000 items and
 * a read that returned them all (8 MB) sat in Redis on its way to the caller.
 * A page is bounded by bytes as well (RESULT_PAGE_BYTES): 500 items at the
 * contract's limits are 2.6 MB, past the cap on one job result.
 */
export const EVIDENCE_PAGE = { default: 100, max: 500 } as const;

/** Where a page of evidence sits in the ledger, and how to ask for the next one. */
export const EvidencePageSchema = z.object({
  /** Evidence items in the ledger. */
  total: z.number().int().nonnegative(),
  /** The page starts after this seq (0: from the first). */
  after: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
  /** Pass as evidenceAfter for the next page; null on the last page. */
  nextAfter: z.number().int().positive().nullable(),
  /**
   * True when the page holds fewer than `limit` items although more follow:
   * the next would have taken the answer past RESULT_PAGE_BYTES. Read on from nextAfter.
   */
  truncated: z.boolean(),
});

/** A ledger as reads return it: the snapshot with one page of its evidence. */
export const LedgerViewSchema = LedgerSnapshotSchema.extend({ evidencePage: EvidencePageSchema });
export type LedgerView = z.infer<typeof LedgerViewSchema>;

/** Evidence as the critic sees it: no raw reference, summary clipped. */
export const PacketEvidenceSchema = CompletionEvidenceSchema.omit({ rawRef: true, recordedAt: true });
export type PacketEvidence = z.infer<typeof PacketEvidenceSchema>;

export const PacketClaimSchema = CompletionClaimSchema.pick({
  id: true,
  text: true,
  kind: true,
  materiality: true,
  requiresEvidence: true,
  evidenceRequirement: true,
  status: true,
  statusReason: true,
  evidenceIds: true,
  missingFeatures: true,
  evidenceSpans: true,
});
export type PacketClaim = z.infer<typeof PacketClaimSchema>;

/** An objection of the prior critique, and whether evidence since then resolves it. */
export const PriorObjectionSchema = z.object({
  need: text(),
  claimText: text().optional(),
  resolution: z.enum(['resolved_by_new_evidence', 'claim_withdrawn', 'still_open']),
  evidenceIds: z.array(text()),
});
export type PriorObjection = z.infer<typeof PriorObjectionSchema>;

/** The prior review with the evidence recorded since it, grouped under it. */
export const PriorCritiqueSchema = z.object({
  cycle: z.number().int().positive(),
  decision: CritiqueDecisionSchema,
  reasons: z.array(text()),
  objections: z.array(PriorObjectionSchema),
  evidenceSince: z.array(PacketEvidenceSchema),
  noEvidenceSince: z.boolean(),
  /** Evidence since the critique left out of evidenceSince to bound the packet (the oldest go first). */
  evidenceSinceOmitted: z.number().int().nonnegative(),
});
export type PriorCritique = z.infer<typeof PriorCritiqueSchema>;

/** Exactly what the critics reviewed in one cycle. */
export const CriticPacketSchema = z.object({
  runId: text(),
  goal: text(),
  policy: ReviewPolicySchema,
  cycle: z.number().int().positive(),
  cycleBudget: z.number().int().positive(),
  /** Every material claim, with its mapped evidence ids. */
  claims: z.array(PacketClaimSchema),
  /** The evidence those claims map to. */
  evidence: z.array(PacketEvidenceSchema),
  failedObservations: z.array(PacketEvidenceSchema),
  priorCritique: PriorCritiqueSchema.nullable(),
  /** Loops earlier reviews left open that nothing has settled since. */
  unresolved: z.array(UnresolvedItemSchema),
  openItems: z.array(OpenItemInputSchema),
  /** The rule critic's decision: the floor no other critic may loosen. */
  floor: z.object({ decision: CritiqueDecisionSchema, reasons: z.array(text()) }),
  instructions: z.array(text()),
  omitted: z.object({ claims: z.number().int().nonnegative(), evidence: z.number().int().nonnegative() }),
});
export type CriticPacket = z.infer<typeof CriticPacketSchema>;

/** The result of a critique job: the status is separate from every human-facing text. */
export const CritiqueOutcomeSchema = z.object({
  runId: text(),
  cycle: z.number().int().positive(),
  cycleBudget: z.number().int().positive(),
  decision: CritiqueDecisionSchema,
  status: LedgerStatusSchema,
  completed: z.boolean(),
  reasons: z.array(text()),
  missingEvidence: z.array(MissingEvidenceSchema),
  critics: CriticRunsSchema,
  claims: z.object({
    total: z.number().int().nonnegative(),
    material: z.number().int().nonnegative(),
    supported: z.number().int().nonnegative(),
    unsupported: z.number().int().nonnegative(),
    contradicted: z.number().int().nonnegative(),
    unverified: z.number().int().nonnegative(),
    blocked: z.number().int().nonnegative(),
  }),
  /** True when this proposal had already been reviewed (a retried job): nothing was appended. */
  alreadyReviewed: z.boolean(),
});
export type CritiqueOutcome = z.infer<typeof CritiqueOutcomeSchema>;

export const RENDER_FORMS = ['admin', 'public'] as const;
export const RenderFormSchema = z.enum(RENDER_FORMS, { error: 'form is admin (sections and evidence ids) or public (compact, no internals)' });
export type RenderForm = z.infer<typeof RenderFormSchema>;
