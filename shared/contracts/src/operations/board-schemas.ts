import { z } from 'zod';
import { text } from '../text.js';
import { IsoTimeSchema } from './common.js';

/**
 * Schemas of the durable board (board-dispatcher): boards of cards in worker,
 * verifier and synthesizer lanes, evidence, decisions and diagnostics. The
 * operation entries are in board.ts.
 */

/** Bounds of a board. A board stays small enough to replay and show: big outputs live behind evidence refs. */
export const BOARD_LIMITS = {
  boardIdChars: 100,
  titleChars: 200,
  goalChars: 4000,
  descriptionChars: 4000,
  cardsPerBoard: 1000,
  cardsPerCall: 200,
  dependenciesPerCard: 50,
  requirementsPerCard: 20,
  requirementChars: 300,
  evidencePerCall: 50,
  evidencePerCard: 200,
  evidenceSummaryChars: 2000,
  evidenceRefChars: 1000,
  reasonChars: 1000,
  /** board.show's text: a 200-card board fits in this many characters. */
  showChars: 4000,
  /** A claim long-polls at most this long; the operation's timeout is above it. */
  maxClaimWaitSeconds: 25,
} as const;

export const BoardIdSchema = text()
  .min(1, 'boardId must not be empty: pass the id you chose in board.create (e.g. the run id)')
  .max(BOARD_LIMITS.boardIdChars, `boardId is at most ${BOARD_LIMITS.boardIdChars} characters`)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'boardId is letters, digits, ".", "_" or "-", starting with a letter or digit (the id you chose in board.create)');

/**
 * A card id as callers send it. Cards are numbered by their board (c-1, c-2,
 * ...), but any printable token is accepted here so that an id a model made
 * up reaches the board, is diagnosed, and is answered with the closest real ids.
 */
export const CardIdSchema = text()
  .min(1, 'cardId must not be empty: list the cards with board.show')
  .max(100, 'cardId is at most 100 characters: card ids look like c-12 (list them with board.show)')
  .regex(/^[\x21-\x7e]+$/, 'cardId is printable ASCII with no spaces: card ids look like c-12 (list them with board.show)');

/**
 * An agent: an assignee, a worker, a reviewer, the agent an API key acts as.
 * Lowercase, so it can name the agent's work queue. Operation inputs use
 * CallerAgentIdSchema (actor.ts), which also refuses the board's own actors.
 */
export const AgentIdSchema = text()
  .min(1, 'an agent id must not be empty')
  .max(63, 'an agent id is at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9._-]*$/, 'an agent id is lowercase letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. worker-1)');

/** A client-given key of a card in one board.addCards call, used to name dependencies before ids exist. */
export const CardKeySchema = text()
  .min(1, 'a card key must not be empty')
  .max(64, 'a card key is at most 64 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a card key is letters, digits, ".", "_" or "-" (e.g. fetch-data)');

export const CARD_LANES = ['worker', 'verifier', 'synthesizer'] as const;
export const CardLaneSchema = z.enum(CARD_LANES, { error: `lane is one of ${CARD_LANES.join(', ')}` });
export type CardLane = z.infer<typeof CardLaneSchema>;

export const CARD_STATUSES = ['todo', 'ready', 'dispatched', 'running', 'submitted', 'changes_requested', 'verified', 'blocked', 'cancelled'] as const;
export const CardStatusSchema = z.enum(CARD_STATUSES, { error: `status is one of ${CARD_STATUSES.join(', ')}` });
export type CardStatus = z.infer<typeof CardStatusSchema>;

/** Why a card is blocked. Typed, so diagnostics can count repeats and suggest the way out. */
export const BLOCK_REASONS = ['awaiting_input', 'external_dependency', 'dependency_cancelled', 'repeated_failures', 'needs_split', 'no_assignee', 'other'] as const;
export const BlockReasonSchema = z.enum(BLOCK_REASONS, { error: `blockReason is one of ${BLOCK_REASONS.join(', ')}` });
export type BlockReason = z.infer<typeof BlockReasonSchema>;

export const CARD_PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
export const CardPrioritySchema = z.enum(CARD_PRIORITIES, { error: `priority is one of ${CARD_PRIORITIES.join(', ')}` });
export type CardPriority = z.infer<typeof CardPrioritySchema>;

export const BOARD_EVIDENCE_KINDS = ['tool_result', 'file', 'url', 'message', 'verification_note'] as const;
export const BoardEvidenceKindSchema = z.enum(BOARD_EVIDENCE_KINDS, { error: `kind is one of ${BOARD_EVIDENCE_KINDS.join(', ')}` });
export type BoardEvidenceKind = z.infer<typeof BoardEvidenceKindSchema>;

export const BoardScopeSchema = z
  .object({
    kind: z.enum(['run', 'project'], { error: 'scope.kind is run (one agent run) or project (work that outlives runs)' }),
    ref: text()
      .trim()
      .min(1, 'scope.ref must name the run or project, e.g. the run id')
      .max(200, 'scope.ref is at most 200 characters'),
  })
  .strict();
export type BoardScope = z.infer<typeof BoardScopeSchema>;

export const BoardPolicySchema = z
  .object({
    allowSelfVerify: z.boolean().default(false).describe('Whether the agent that submitted a card may also verify it. Off by default: a second agent or the built-in verifier verifies.'),
    maxInFlightPerAssignee: z.number().int().min(1).max(100).default(1).describe('Cards dispatched or running at once per assignee on this board.'),
    maxFailures: z.number().int().min(1).max(20).default(3).describe('Failed or abandoned attempts after which a card is blocked (repeated_failures) instead of going back to ready.'),
    claimTtlSeconds: z.number().int().min(5).max(3600).default(120).describe('A claim without a heartbeat for this long ends, and the card goes back to ready.'),
  })
  .strict();
export type BoardPolicy = z.infer<typeof BoardPolicySchema>;

/**
 * Who a board's answer is for. admin: the operator, who may see card ids,
 * evidence ids and refs. public: a public chat, whose answer (board.synthesize's
 * public form) holds no file system paths, refs or internal ids.
 */
export const BOARD_VISIBILITIES = ['admin', 'public'] as const;
export const BoardVisibilitySchema = z.enum(BOARD_VISIBILITIES, { error: 'visibility is admin (answers may show card ids, evidence ids and refs) or public (answers hold no paths, refs or internal ids)' });
export type BoardVisibility = z.infer<typeof BoardVisibilitySchema>;
/** The form of board.synthesize's answer: the same two audiences as visibility. */
export const SynthesisFormSchema = z.enum(BOARD_VISIBILITIES, { error: 'form is admin (card ids, evidence ids and refs) or public (no paths, refs or internal ids)' });

export const EvidenceRequirementSchema = z.object({ id: text(), text: text() });
export type EvidenceRequirement = z.infer<typeof EvidenceRequirementSchema>;

/** One piece of evidence as a caller attaches it. */
export const BoardEvidenceInputSchema = z
  .object({
    kind: BoardEvidenceKindSchema,
    summary: text()
      .trim()
      .min(1, 'summary must hold the evidence itself (what the tool returned, what the file or page shows): evidence without content is not evidence')
      .max(BOARD_LIMITS.evidenceSummaryChars, `summary is at most ${BOARD_LIMITS.evidenceSummaryChars} characters: keep the gist and put the full output behind ref`),
    ref: text()
      .trim()
      .min(1, 'ref must not be empty: leave it out when there is nothing to point at')
      .max(BOARD_LIMITS.evidenceRefChars, `ref is at most ${BOARD_LIMITS.evidenceRefChars} characters`)
      .optional()
      .describe('Where the evidence lives: a tool result id, a file path, a URL, a message id.'),
    covers: z
      .array(text().min(1).max(20))
      .max(BOARD_LIMITS.requirementsPerCard)
      .optional()
      .describe('Ids of the card\'s evidence requirements (r1, r2, ...) this evidence covers.'),
  })
  .strict()
  .superRefine((item, ctx) => {
    if (item.kind === 'url' && !(item.ref && /^https?:\/\/\S+$/.test(item.ref))) {
      ctx.addIssue({ code: 'custom', path: ['ref'], message: 'url evidence needs ref: the http(s) URL it was read from' });
    }
  });
export type BoardEvidenceInput = z.infer<typeof BoardEvidenceInputSchema>;

export const BoardEvidenceSchema = z.object({
  id: text(),
  kind: BoardEvidenceKindSchema,
  summary: text(),
  ref: text().optional(),
  covers: z.array(text()),
  attachedBy: text(),
  at: IsoTimeSchema,
});
export type BoardEvidence = z.infer<typeof BoardEvidenceSchema>;

export const DECISION_KINDS = ['split', 'blocked', 'unblocked', 'reassigned', 'completed', 'cancelled', 'changes_requested', 'failed'] as const;
export const DecisionKindSchema = z.enum(DECISION_KINDS);
export type DecisionKind = z.infer<typeof DecisionKindSchema>;

/** Why a card was split, blocked, reassigned or completed: the board's memory of its choices. */
export const BoardDecisionSchema = z.object({
  kind: DecisionKindSchema,
  cardId: text(),
  reason: text(),
  by: text(),
  at: IsoTimeSchema,
});
export type BoardDecision = z.infer<typeof BoardDecisionSchema>;

export const CardReviewSchema = z.object({
  /** The agent whose key reviewed, or the built-in verifier (decision auto). */
  reviewer: text(),
  /** With decision auto: the agent whose key asked the built-in verifier. Absent on reviews recorded before actors came from keys. */
  requestedBy: text().optional(),
  decision: z.enum(['approve', 'request_changes']),
  missing: z.array(text()),
  notes: text(),
  /** What the built-in verifier did, when it was asked. */
  verifier: z
    .object({
      rule: z.object({ decision: z.enum(['approve', 'request_changes']), reasons: z.array(text()) }),
      /** The rule verdict again after requirements the LLM showed with quotes the judge checked (absent when it showed none). */
      afterQuotes: z.object({ decision: z.enum(['approve', 'request_changes']), reasons: z.array(text()) }).optional(),
      llm: z.object({ ran: z.boolean(), model: text().optional(), decision: z.enum(['approve', 'request_changes']).optional(), note: text().optional() }),
    })
    .optional(),
  at: IsoTimeSchema,
});
export type CardReview = z.infer<typeof CardReviewSchema>;

/** A card as board.show's JSON returns it. */
export const CardSchema = z.object({
  id: text(),
  key: text().nullable(),
  title: text(),
  description: text(),
  lane: CardLaneSchema,
  assignee: text().nullable(),
  status: CardStatusSchema,
  blockReason: BlockReasonSchema.nullable(),
  priority: CardPrioritySchema,
  dependsOn: z.array(text()),
  evidenceRequirements: z.array(EvidenceRequirementSchema),
  deadline: IsoTimeSchema.nullable(),
  evidence: z.array(BoardEvidenceSchema),
  /** Dispatches so far; the current one is this number. */
  attempt: z.number().int().nonnegative(),
  failures: z.number().int().nonnegative(),
  submittedBy: text().nullable(),
  submission: text().nullable(),
  lastReview: CardReviewSchema.nullable(),
  createdAt: IsoTimeSchema,
  statusSince: IsoTimeSchema,
});
export type Card = z.infer<typeof CardSchema>;

/**
 * A card as board.show and the card writes return it: its evidence may come
 * in parts when the card is too large for one answer. `evidence` is the part
 * from item `evidenceOffset` on; the card holds `evidenceTotal` in all. A
 * write answers with the card's latest items (those it just attached come
 * last); board.show pages the earlier ones.
 */
export const ShownCardSchema = CardSchema.extend({
  /** The index, in the card's evidence, of the first item shown (0 unless the page continues the card). */
  evidenceOffset: z.number().int().nonnegative(),
  /** Evidence items the card holds; more than shown when the card comes in parts. */
  evidenceTotal: z.number().int().nonnegative(),
});
export type ShownCard = z.infer<typeof ShownCardSchema>;

export const BOARD_STATUSES = ['open', 'done'] as const;
export const BoardStatusSchema = z.enum(BOARD_STATUSES);

export const BoardSummarySchema = z.object({
  boardId: text(),
  title: text(),
  goal: text(),
  scope: BoardScopeSchema,
  owner: text(),
  visibility: BoardVisibilitySchema,
  status: BoardStatusSchema,
  policy: BoardPolicySchema,
  version: z.number().int().positive(),
  counts: z.record(text(), z.number().int().nonnegative()),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type BoardSummary = z.infer<typeof BoardSummarySchema>;

export const DIAGNOSTIC_KINDS = [
  'unknown_card',
  'completion_without_evidence',
  'repeated_failures',
  'repeated_block_reason',
  'stranded_ready',
  'ghost_running',
  'dependency_deadlock',
  'no_leader',
] as const;
export const DiagnosticKindSchema = z.enum(DIAGNOSTIC_KINDS);
export type DiagnosticKind = z.infer<typeof DiagnosticKindSchema>;

export const DiagnosticSeveritySchema = z.enum(['info', 'warning', 'error']);
export type DiagnosticSeverity = z.infer<typeof DiagnosticSeveritySchema>;

/** One stored, deduplicated diagnostic: the same kind about the same subject is one entry with a count. */
export const DiagnosticSchema = z.object({
  kind: DiagnosticKindSchema,
  /** What it is about: a card id, an unknown id, an assignee, a block reason. */
  subject: text(),
  severity: DiagnosticSeveritySchema,
  message: text(),
  suggestedAction: text(),
  details: z.record(text(), z.unknown()),
  firstSeen: IsoTimeSchema,
  lastSeen: IsoTimeSchema,
  count: z.number().int().positive(),
  /** Set once its condition resolved; a resolved diagnostic that recurs opens again. */
  resolvedAt: IsoTimeSchema.nullable(),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;
