import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { RESULT_PAGE_BYTES } from '../result-budget.js';
import { QUEUES } from '../queues.js';
import { IsoTimeSchema } from './common.js';
import { BoardIdSchema } from './board-schemas.js';

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

const RunIdInput = { runId: LedgerRunIdSchema };

export const ledgerOpen = defineOperation({
  name: 'ledger.open',
  summary: 'Open the completion ledger of an agent run',
  description:
    'Opens the claim/evidence ledger for a run, with its goal and review policy. Record evidence into it as tools finish, then propose completion: ' +
    'the run counts as completed only when a review approves every material claim against recorded evidence. ' +
    'Use policy fast for simple public tasks (only claims that something was done, changed, delivered, verified or found need evidence). ' +
    'Opening the same run again with the same goal and policy returns the existing ledger.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/ledgers' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      goal: text()
        .trim()
        .min(1, 'goal must state what the run is asked to do (the user request)')
        .max(LEDGER_LIMITS.goalChars, `goal is at most ${LEDGER_LIMITS.goalChars} characters: summarise the request`),
      policy: ReviewPolicySchema.default('full'),
      cycleBudget: z
        .number()
        .int('cycleBudget is a whole number of reviews')
        .min(1, 'cycleBudget is at least 1')
        .max(LEDGER_LIMITS.maxCycleBudget, `cycleBudget is at most ${LEDGER_LIMITS.maxCycleBudget}`)
        .optional()
        .describe(`Reviews allowed before unresolved changes end the run as incomplete_verification; the service default is ${DEFAULT_CYCLE_BUDGET}.`),
      boardId: BoardIdSchema.optional().describe('A board (board.create) whose unverified and blocked cards every review of this run counts as open items.'),
    })
    .strict(),
  output: LedgerViewSchema.extend({ alreadyOpened: z.boolean() }),
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', goal: 'Set the router baud rate to 115200 and confirm it', policy: 'full' },
  idempotent: true,
  errors: {
    409: 'The run already has a ledger with a different goal, policy or cycle budget: open the new task under a new run id.',
    413: `The run's ledger is open already and its claims, critiques and open items alone pass the ${RESULT_PAGE_BYTES}-byte limit on one answer: read it with ledger.render.`,
  },
});

export const ledgerRecordEvidence = defineOperation({
  name: 'ledger.recordEvidence',
  summary: 'Record observations into a run ledger',
  description:
    'Records one or more observations (tool results, file changes, delivery results, runtime observations, human input, critic feedback) with their success flags. ' +
    'Record failures as well as successes. Each item gets an id and a sequence number. Name the files, identifiers, numbers and URLs involved in the summary: ' +
    'claims are linked to evidence by what they share. The ledger records the agent of your API key as who recorded them (actors come from keys).',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/ledgers/:runId/evidence' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      items: z
        .array(EvidenceInputSchema)
        .min(1, 'items must hold at least one observation')
        .max(LEDGER_LIMITS.evidencePerCall, `at most ${LEDGER_LIMITS.evidencePerCall} evidence items per call: send the rest in another ledger.recordEvidence call`),
    })
    .strict(),
  output: z.object({
    runId: text(),
    status: LedgerStatusSchema,
    version: z.number().int().positive(),
    recorded: z.array(z.object({ id: text(), seq: z.number().int().positive() })),
    evidenceCount: z.number().int().nonnegative(),
  }),
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: 'cat config/router.yaml shows baudRate: 115200' }] },
  errors: {
    404: 'No ledger is open for this run: open one with ledger.open first.',
    409: 'The ledger is closed (approved or ended), would pass its evidence limit, or kept changing under concurrent writes (send it again).',
  },
});

export const ledgerProposeCompletion = defineOperation({
  name: 'ledger.proposeCompletion',
  summary: 'Propose that a run is complete, and have it reviewed',
  description:
    'Submits the task-complete summary, the answer the user will see and any open todos or board cards. The claims in them are reconciled with the recorded evidence ' +
    'and reviewed. It answers with a job handle; read the result with jobs.get. The result is the decision: approve (completed), request_changes (with the specific evidence missing; record it and propose again) ' +
    'or incomplete_verification (blocked, or the review budget is spent). Never report the task as completed unless the result says completed: true. ' +
    'The ledger records the agent of your API key as who proposed it.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'job',
  http: { method: 'POST', path: '/v1/ledgers/:runId/completion' },
  scope: 'ledger:write',
  input: z
    .object({
      ...RunIdInput,
      summary: text()
        .trim()
        .min(1, 'summary must say what was done: the task-complete summary')
        .max(LEDGER_LIMITS.summaryChars, `summary is at most ${LEDGER_LIMITS.summaryChars} characters: state the claims compactly`),
      visibleAnswer: text()
        .max(LEDGER_LIMITS.visibleAnswerChars, `visibleAnswer is at most ${LEDGER_LIMITS.visibleAnswerChars} characters`)
        .optional()
        .describe('The answer the user will see; its claims are reviewed too.'),
      openItems: z
        .array(OpenItemInputSchema)
        .max(LEDGER_LIMITS.openItems, `at most ${LEDGER_LIMITS.openItems} open items: list the ones that block completion`)
        .default([])
        .describe('Todos or board cards still open; each one keeps the run from being approved until it is finished or removed.'),
    })
    .strict(),
  output: CritiqueOutcomeSchema,
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', summary: 'Set baudRate to 115200 in config/router.yaml and confirmed it with cat.' },
  retry: { attempts: 3, backoffMs: 2_000 },
});

export const ledgerGet = defineOperation({
  name: 'ledger.get',
  summary: 'Read a run ledger',
  description:
    'Returns the ledger of a run: goal, status, the claims of the latest completion attempt with their evidence, critiques, unresolved items, ' +
    `and one page of the recorded evidence (${EVIDENCE_PAGE.default} items by default, in recording order, and never more than fit in ${RESULT_PAGE_BYTES} bytes of JSON: ` +
    'evidencePage.truncated says a page stopped short for its size): pass evidencePage.nextAfter as evidenceAfter for the next page until it is null.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId' },
  scope: 'ledger:read',
  input: z
    .object({
      ...RunIdInput,
      evidenceAfter: z.coerce.number().int('evidenceAfter is an evidence seq: pass evidencePage.nextAfter from the previous page').min(0).max(LEDGER_LIMITS.evidencePerLedger).default(0),
      evidenceLimit: z.coerce
        .number()
        .int('evidenceLimit is a whole number of items')
        .min(1, 'evidenceLimit is at least 1')
        .max(EVIDENCE_PAGE.max, `evidenceLimit is at most ${EVIDENCE_PAGE.max}: page through the rest with evidenceAfter`)
        .default(EVIDENCE_PAGE.default),
    })
    .strict(),
  output: LedgerViewSchema,
  agentFacing: true,
  example: { runId: 'run-2026-12-01-a', evidenceLimit: 50 },
  errors: { 413: `The ledger's claims, critiques and open items alone pass the ${RESULT_PAGE_BYTES}-byte limit on one answer, so no page of its evidence fits: read it with ledger.render.` },
  resource: { uriTemplate: 'vouch://ledgers/{runId}', name: 'ledger', mimeType: 'application/json' },
});

export const ledgerPacket = defineOperation({
  name: 'ledger.packet',
  summary: 'The critic packet of a review, exactly as the critic saw it',
  description: 'Returns the packet a review cycle was decided on (the latest by default) and the critic prompt built from it, for audit.',
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId/packet' },
  scope: 'ledger:read',
  input: z
    .object({
      ...RunIdInput,
      cycle: z.coerce.number().int('cycle is a review number: 1, 2, ...').min(1, 'cycle starts at 1').max(LEDGER_LIMITS.maxCycleBudget).optional(),
    })
    .strict(),
  output: z.object({ runId: text(), cycle: z.number().int().positive(), packet: CriticPacketSchema, prompt: text() }),
  agentFacing: false,
  example: { runId: 'run-2026-12-01-a', cycle: 1 },
  errors: { 404: 'The run has no review yet, or none for that cycle.' },
});

export const ledgerRender = defineOperation({
  name: 'ledger.render',
  summary: 'Render a run ledger for a person',
  description:
    'Renders the ledger as text. admin: sections Done, Verified, Not verified / blocked and Evidence, with evidence ids. public: a compact answer citing evidence without ids or paths. ' +
    'The status comes back as its own field; an incomplete_verification run is never called completed. ' +
    `The text stays under ${RESULT_PAGE_BYTES} bytes of JSON: past that it stops at a line that says so (truncated: true), and ledger.get lists everything.`,
  owner: { queue: QUEUES.ledgerCritic },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/ledgers/:runId/render' },
  scope: 'ledger:read',
  input: z.object({ ...RunIdInput, form: RenderFormSchema.default('admin') }).strict(),
  output: z.object({ runId: text(), form: RenderFormSchema, status: LedgerStatusSchema, completed: z.boolean(), text: text(), truncated: z.boolean() }),
  agentFacing: false,
  example: { runId: 'run-2026-12-01-a', form: 'admin' },
  resource: { uriTemplate: 'vouch://ledgers/{runId}/render', name: 'ledger-render', mimeType: 'text/plain', textField: 'text' },
});
