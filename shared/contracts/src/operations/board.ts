import { z } from 'zod';
import { CallerAgentIdSchema } from '../actor.js';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { RESULT_PAGE_BYTES } from '../result-budget.js';
import { QUEUES } from '../queues.js';
import { IsoTimeSchema } from './common.js';
import {
  BOARD_LIMITS,
  BlockReasonSchema,
  BoardDecisionSchema,
  BoardEvidenceInputSchema,
  BoardIdSchema,
  BoardPolicySchema,
  BoardScopeSchema,
  BoardSummarySchema,
  BoardVisibilitySchema,
  CardIdSchema,
  CardKeySchema,
  CardLaneSchema,
  CardPrioritySchema,
  CardStatusSchema,
  DiagnosticSchema,
  ShownCardSchema,
  SynthesisFormSchema,
} from './board-schemas.js';

export * from './board-schemas.js';

const owner = { queue: QUEUES.boardDispatcher } as const;
const BoardInput = { boardId: BoardIdSchema };
const CardInput = { boardId: BoardIdSchema, cardId: CardIdSchema };

const ReasonSchema = text()
  .trim()
  .min(1, 'reason must say why, in a sentence')
  .max(BOARD_LIMITS.reasonChars, `reason is at most ${BOARD_LIMITS.reasonChars} characters`);

/**
 * The agent a write acts as is the caller's API key's agent (actors are keys).
 * Bodies may still name it (`by`, `assignee` of a claim, `reviewer`): left
 * out, the key's agent is used; sent, it must be that agent.
 */
const actingAs = (what: string) =>
  CallerAgentIdSchema.optional().describe(`${what}: leave it out, it is the agent of your API key. If sent it must be that agent (403 otherwise): to act as another agent, use that agent's key.`);

/** What every board write that acts as an agent adds to its documented answers. */
const ACTOR_ERRORS = {
  403: "The body names another agent than the API key's (`by`, `assignee` of a claim, `reviewer`): actors come from keys; omit the field or send the key's agent, or use that agent's own key.",
} as const;

const ClaimTokenSchema = text()
  .min(1, 'claimToken must be the token board.claimCard returned')
  .max(100, 'claimToken is at most 100 characters: pass the token board.claimCard returned')
  .regex(/^[A-Za-z0-9_-]+$/, 'claimToken is the token board.claimCard returned (letters, digits, _ and -)');

export const boardCreate = defineOperation({
  name: 'board.create',
  summary: 'Create a durable work board for long or disputed work',
  description:
    'Creates a board under an id you choose (the run or project id) to split long or disputed work into cards with worker, verifier and synthesizer lanes. ' +
    'Add cards with board.addCards next. Creating the same board again with the same title, scope, owner and visibility returns it. ' +
    'visibility says who the answer is for: admin (the default) lets board.synthesize show card ids, evidence ids and refs; ' +
    'public (a board for disputed facts in a public chat) makes its synthesis the public form, which holds no file system paths, refs or internal ids.',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards' },
  scope: 'board:write',
  input: z
    .object({
      ...BoardInput,
      title: text().trim().min(1, 'title must name the work in a few words').max(BOARD_LIMITS.titleChars, `title is at most ${BOARD_LIMITS.titleChars} characters`),
      goal: text()
        .trim()
        .max(BOARD_LIMITS.goalChars, `goal is at most ${BOARD_LIMITS.goalChars} characters: summarise the request`)
        .default('')
        .describe('The request the board serves, in the user\'s words.'),
      scope: BoardScopeSchema,
      owner: CallerAgentIdSchema.optional().describe('The agent or person that owns the board (not necessarily the caller); without it, the agent of your key.'),
      policy: BoardPolicySchema.default({ allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 120 }),
      visibility: BoardVisibilitySchema.default('admin').describe(
        'admin (default): answers may show card ids, evidence ids and refs. public: board.synthesize answers in the public form, with no paths, refs or internal ids.',
      ),
    })
    .strict(),
  output: BoardSummarySchema.extend({ alreadyCreated: z.boolean() }),
  agentFacing: true,
  example: { boardId: 'run-2026-12-01-a', title: 'Check the router fleet firmware', scope: { kind: 'run', ref: 'run-2026-12-01-a' }, owner: 'planner' },
});

export const NewCardSchema = z
  .object({
    key: CardKeySchema.optional().describe('Your name for this card within the call, so other cards can depend on it before it has an id.'),
    title: text().trim().min(1, 'a card needs a title: what is to be done').max(BOARD_LIMITS.titleChars, `a card title is at most ${BOARD_LIMITS.titleChars} characters`),
    description: text().max(BOARD_LIMITS.descriptionChars, `a card description is at most ${BOARD_LIMITS.descriptionChars} characters`).default(''),
    lane: CardLaneSchema.default('worker'),
    assignee: CallerAgentIdSchema.optional().describe('The agent that will claim the card (any agent: assigning is planning); only a key carrying that agent can claim it. Without one it is never dispatched.'),
    priority: CardPrioritySchema.default('normal'),
    dependsOn: z
      .array(text().min(1).max(100))
      .max(BOARD_LIMITS.dependenciesPerCard, `a card depends on at most ${BOARD_LIMITS.dependenciesPerCard} others`)
      .default([])
      .describe('Keys of cards in this call, or ids (c-3) or keys of cards already on the board. The card is ready only once all of them are verified.'),
    evidenceRequirements: z
      .array(text().trim().min(1, 'an evidence requirement must say what evidence is needed').max(BOARD_LIMITS.requirementChars, `an evidence requirement is at most ${BOARD_LIMITS.requirementChars} characters`))
      .max(BOARD_LIMITS.requirementsPerCard, `at most ${BOARD_LIMITS.requirementsPerCard} evidence requirements per card`)
      .default([])
      .describe('What evidence verifies the card, one item each; they get ids r1, r2, ...'),
    deadline: IsoTimeSchema.optional(),
  })
  .strict();
export type NewCard = z.infer<typeof NewCardSchema>;

export const boardAddCards = defineOperation({
  name: 'board.addCards',
  summary: 'Add cards to a board, with dependencies',
  description:
    'Adds a batch of cards. Give each card a key and name dependencies by key (or by the id of a card already on the board): a card is ready only once every dependency is verified, and a dependency cycle is refused. ' +
    'With splitFrom, the new cards replace that card: it is cancelled and cards that depended on it depend on the new ones. ' +
    'The board records the agent of your API key as who added them.',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/cards' },
  scope: 'board:write',
  input: z
    .object({
      ...BoardInput,
      by: actingAs('Who adds the cards (the decomposer)'),
      cards: z
        .array(NewCardSchema)
        .min(1, 'cards must hold at least one card')
        .max(BOARD_LIMITS.cardsPerCall, `at most ${BOARD_LIMITS.cardsPerCall} cards per call: send the rest in another board.addCards call`),
      splitFrom: CardIdSchema.optional().describe('A card these cards replace.'),
      reason: ReasonSchema.optional().describe('Why the cards were added or the card split; recorded as a decision.'),
    })
    .strict(),
  output: z.object({
    boardId: text(),
    version: z.number().int().positive(),
    cards: z.array(z.object({ key: text().nullable(), id: text(), status: CardStatusSchema })),
  }),
  agentFacing: true,
  errors: ACTOR_ERRORS,
  example: {
    boardId: 'run-2026-12-01-a',
    cards: [
      { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the inventory output'] },
      { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
    ],
  },
});

export const boardUpdateCard = defineOperation({
  name: 'board.updateCard',
  summary: 'Change a card: reassign, reprioritise, block, unblock or cancel it',
  description:
    'Changes a card\'s title, description, assignee, priority or deadline, or moves it to blocked (with a blockReason), cancelled, or out of blocked (status ready or todo). ' +
    'A status the card cannot reach from where it is answers 409 naming the statuses it can reach. Give a reason: it is recorded as a decision, by the agent of your API key. ' +
    'Reassigning to another agent is allowed: that agent claims it with its own key.',
  owner,
  mode: 'rpc',
  // Not POST …/cards/:cardId: with an empty cardId that path would be board.addCards' route.
  http: { method: 'POST', path: '/v1/boards/:boardId/cards/:cardId/changes' },
  scope: 'board:write',
  input: z
    .object({
      ...CardInput,
      by: actingAs('Who changes the card'),
      title: text().trim().min(1).max(BOARD_LIMITS.titleChars).optional(),
      description: text().max(BOARD_LIMITS.descriptionChars).optional(),
      assignee: CallerAgentIdSchema.nullable().optional().describe('A new assignee (reassign, to any agent), or null to unassign.'),
      priority: CardPrioritySchema.optional(),
      deadline: IsoTimeSchema.nullable().optional(),
      status: CardStatusSchema.optional().describe('blocked, cancelled, or ready/todo to unblock. Other statuses are reached through claim, submit and review.'),
      blockReason: BlockReasonSchema.optional().describe('Required with status blocked.'),
      reason: ReasonSchema.optional(),
    })
    .strict()
    .superRefine((input, ctx) => {
      if (input.status === 'blocked' && !input.blockReason) ctx.addIssue({ code: 'custom', path: ['blockReason'], message: 'status blocked needs a blockReason: say why the card cannot proceed' });
      if (input.blockReason && input.status !== 'blocked') ctx.addIssue({ code: 'custom', path: ['blockReason'], message: 'blockReason goes with status blocked only' });
      const changes = ['title', 'description', 'assignee', 'priority', 'deadline', 'status'].filter((k) => (input as Record<string, unknown>)[k] !== undefined);
      if (changes.length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'nothing to change: pass title, description, assignee, priority, deadline or status' });
    }),
  output: z.object({ boardId: text(), version: z.number().int().positive(), card: ShownCardSchema }),
  agentFacing: true,
  errors: ACTOR_ERRORS,
  example: { boardId: 'run-2026-12-01-a', cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input', reason: 'needs the fleet owner to confirm the target version' },
});

export const boardAttachEvidence = defineOperation({
  name: 'board.attachEvidence',
  summary: 'Attach evidence to a card',
  description:
    'Attaches evidence (tool results, files, URLs, messages, verification notes) to a card, each with its content in summary and where it lives in ref. ' +
    'Name the evidence requirements it covers (r1, r2, ...): a card is verified only when every requirement is covered. The evidence is recorded as attached by the agent of your API key.',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/cards/:cardId/evidence' },
  scope: 'board:write',
  input: z
    .object({
      ...CardInput,
      by: actingAs('Who attaches the evidence'),
      items: z
        .array(BoardEvidenceInputSchema)
        .min(1, 'items must hold at least one piece of evidence')
        .max(BOARD_LIMITS.evidencePerCall, `at most ${BOARD_LIMITS.evidencePerCall} evidence items per call`),
    })
    .strict(),
  output: z.object({ boardId: text(), cardId: text(), version: z.number().int().positive(), attached: z.array(z.object({ id: text() })), evidenceCount: z.number().int() }),
  agentFacing: true,
  errors: ACTOR_ERRORS,
  example: { boardId: 'run-2026-12-01-a', cardId: 'c-1', items: [{ kind: 'tool_result', ref: 'call-17', summary: 'inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }] },
});

export const boardClaimCard = defineOperation({
  name: 'board.claimCard',
  summary: 'Wait for the next card dispatched to an agent, and claim it',
  description:
    `Long-polls (up to waitSeconds, at most ${BOARD_LIMITS.maxClaimWaitSeconds}) for the next card dispatched to the agent of your API key and claims it: a worker claims only its own work, with its own key. ` +
    'The answer holds a claimToken: send board.heartbeat with it well within leaseSeconds, and board.submitCard with it when done. ' +
    'claimed: false means nothing was dispatched to you in time: call again. ' +
    'The wait happens in the gateway, which holds a bounded number of waiting claims per tenant: past it a claim with waitSeconds above 0 is refused 429 (send waitSeconds: 0, or retry after Retry-After).',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/board-claims' },
  scope: 'board:write',
  input: z
    .object({
      assignee: actingAs('Whose dispatched cards to claim'),
      boardId: BoardIdSchema.optional().describe('Only claim cards of this board.'),
      waitSeconds: z.number().int().min(0).max(BOARD_LIMITS.maxClaimWaitSeconds, `waitSeconds is at most ${BOARD_LIMITS.maxClaimWaitSeconds}: call again to keep waiting`).default(20),
    })
    .strict(),
  output: z.object({
    claimed: z.boolean(),
    boardId: text().optional(),
    card: ShownCardSchema.optional(),
    claimToken: text().optional(),
    attempt: z.number().int().positive().optional(),
    leaseSeconds: z.number().int().positive().optional(),
    leaseExpiresAt: IsoTimeSchema.optional(),
  }),
  agentFacing: true,
  errors: { ...ACTOR_ERRORS, 429: 'Too many of the tenant\'s claims are waiting on this gateway already (BOARD_CLAIM_WAITS_PER_TENANT): send waitSeconds: 0 to look without waiting, or retry after `Retry-After` seconds.' },
  example: { waitSeconds: 2 },
  // Above the longest long-poll, so the gateway never answers 504 to a wait that is still within its bound.
  timeoutMs: (BOARD_LIMITS.maxClaimWaitSeconds + 10) * 1000,
});

export const boardHeartbeat = defineOperation({
  name: 'board.heartbeat',
  summary: 'Keep a claim alive',
  description:
    'Extends the claim on a card by the board\'s claim lease. A claim that stops heartbeating returns the card to ready. A stale token answers 409: claim new work with board.claimCard. ' +
    'Send it with the key that claimed the card (403 otherwise).',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/cards/:cardId/heartbeat' },
  scope: 'board:write',
  input: z.object({ ...CardInput, claimToken: ClaimTokenSchema }).strict(),
  output: z.object({ boardId: text(), cardId: text(), status: CardStatusSchema, leaseExpiresAt: IsoTimeSchema }),
  agentFacing: true,
  errors: { 403: 'Another agent\'s key holds the claim: heartbeat with the key that claimed the card.' },
  example: { boardId: 'run-2026-12-01-a', cardId: 'c-1', claimToken: 'ct_4f1c2b' },
});

export const boardSubmitCard = defineOperation({
  name: 'board.submitCard',
  summary: 'Submit a claimed card as done (with evidence) or failed',
  description:
    'Ends your claim. outcome completed: the card goes to review with your summary and evidence; it needs evidence, attached now or before. ' +
    'outcome failed: the card goes back to ready for another attempt (or to blocked after repeated failures). Submit with the key that claimed the card (403 otherwise). ' +
    'A worker never verifies its own card: another agent\'s key reviews it. ' +
    'Sending the same completed submission again (same claimToken and summary, e.g. after a timeout or an outage lost its answer) changes nothing and answers alreadySubmitted: true: the first one was recorded.',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/cards/:cardId/submission' },
  scope: 'board:write',
  input: z
    .object({
      ...CardInput,
      claimToken: ClaimTokenSchema,
      outcome: z.enum(['completed', 'failed'], { error: 'outcome is completed or failed' }).default('completed'),
      summary: text().trim().min(1, 'summary must say what was done (or why it failed)').max(BOARD_LIMITS.evidenceSummaryChars),
      evidence: z.array(BoardEvidenceInputSchema).max(BOARD_LIMITS.evidencePerCall).default([]),
    })
    .strict(),
  output: z.object({
    boardId: text(),
    version: z.number().int().positive(),
    card: ShownCardSchema,
    /** True when this was a retry of the card's latest accepted submission (same claimToken and summary): it changed nothing, and the submission stands. */
    alreadySubmitted: z.boolean(),
  }),
  agentFacing: true,
  errors: { 403: 'Another agent\'s key holds the claim: submit with the key that claimed the card.' },
  example: {
    boardId: 'run-2026-12-01-a',
    cardId: 'c-1',
    claimToken: 'ct_4f1c2b',
    summary: 'Listed 12 routers; 3 run firmware 1.2',
    evidence: [{ kind: 'tool_result', ref: 'call-17', summary: 'inventory: 12 routers, 3 on firmware 1.2', covers: ['r1'] }],
  },
});

export const boardReviewCard = defineOperation({
  name: 'board.reviewCard',
  summary: 'Review a submitted card: approve, or request changes naming the missing evidence',
  description:
    'A verifier approves a submitted card (verified) or requests changes naming the evidence still missing (the card goes back for another attempt). ' +
    'decision auto asks the built-in verifier, which checks every evidence requirement against the attached evidence. Approval needs evidence for every requirement. ' +
    'The reviewer is the agent of your API key; unless the board\'s policy allows self-verification, the key of the agent that submitted the card may not review it, auto included: another agent\'s key must ask.',
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/cards/:cardId/review' },
  scope: 'board:write',
  input: z
    .object({
      ...CardInput,
      reviewer: actingAs('Who reviews'),
      decision: z.enum(['approve', 'request_changes', 'auto'], { error: 'decision is approve, request_changes or auto (the built-in verifier)' }),
      missing: z.array(text().trim().min(1).max(BOARD_LIMITS.requirementChars)).max(BOARD_LIMITS.requirementsPerCard).default([]).describe('With request_changes: the evidence still missing, one item each.'),
      notes: text().max(BOARD_LIMITS.reasonChars).default(''),
    })
    .strict()
    .superRefine((input, ctx) => {
      if (input.decision === 'request_changes' && input.missing.length === 0) ctx.addIssue({ code: 'custom', path: ['missing'], message: 'request_changes must name the missing evidence, one item each' });
    }),
  output: z.object({ boardId: text(), version: z.number().int().positive(), card: ShownCardSchema, decision: z.enum(['approve', 'request_changes']), reasons: z.array(text()) }),
  agentFacing: true,
  errors: {
    403: 'The body names another agent than the API key\'s (`reviewer`), or the key\'s agent submitted the card and the board\'s policy does not allow self-verification: another agent\'s key must review it.',
  },
  example: { boardId: 'run-2026-12-01-a', cardId: 'c-1', decision: 'auto' },
  timeoutMs: 60_000,
});


/** Where board.show's next page starts: pass both as offset and evidenceOffset. */
export const ShowCursorSchema = z.object({
  offset: z.number().int().nonnegative(),
  evidenceOffset: z.number().int().nonnegative(),
});

export const boardShow = defineOperation({
  name: 'board.show',
  summary: 'Show a board: compact text for a model, plus its cards as JSON',
  description:
    `Returns a compact text of the board (at most ${BOARD_LIMITS.showChars} characters, most urgent cards first) fit for a model's context, and the cards as JSON, most urgent first, a page at a time (offset, limit). ` +
    `A page also stops before ${RESULT_PAGE_BYTES} bytes of JSON (truncated: true): a card that does not fit starts the next page, and a card too large for any page comes in parts, its evidence from evidenceOffset on. ` +
    'Pass next.offset and next.evidenceOffset as offset and evidenceOffset for the next page, until next is null.',
  owner,
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/boards/:boardId' },
  scope: 'board:read',
  input: z
    .object({
      ...BoardInput,
      offset: z.coerce.number().int().min(0).max(BOARD_LIMITS.cardsPerBoard).default(0),
      limit: z.coerce.number().int().min(0).max(200).default(50),
      evidenceOffset: z.coerce
        .number()
        .int('evidenceOffset is an evidence index: pass next.evidenceOffset from the previous page')
        .min(0)
        .max(BOARD_LIMITS.evidencePerCard)
        .default(0)
        .describe('Evidence items of the first card of the page (the card at offset) to skip: pass next.evidenceOffset to continue a card that came in parts.'),
    })
    .strict(),
  output: z.object({
    board: BoardSummarySchema,
    text: text(),
    cards: z.array(ShownCardSchema),
    totalCards: z.number().int(),
    decisions: z.array(BoardDecisionSchema),
    /** Where the next page starts; null when no card follows this page. */
    next: ShowCursorSchema.nullable(),
    /** True when the page stopped before `limit` cards, or inside a card's evidence, to keep the answer under RESULT_PAGE_BYTES. */
    truncated: z.boolean(),
  }),
  agentFacing: true,
  example: { boardId: 'run-2026-12-01-a' },
});

/** Who holds the dispatcher lease. Stable while the same leader holds it (renewals do not show), so reads of it compare equal. */
export const LeaderStateSchema = z.object({
  holder: text().nullable(),
  epoch: z.number().int().nonnegative(),
  healthy: z.boolean(),
  /** When the lease expired with nobody renewing it; null while a leader holds it. */
  leaderlessSince: IsoTimeSchema.nullable(),
});

export const boardDiagnostics = defineOperation({
  name: 'board.diagnostics',
  summary: 'Diagnostics of a board: hallucinated ids, completion without evidence, failure loops, stranded work',
  description:
    'Lists the board\'s stored diagnostics, each with a severity, first and last seen, a count and a suggested action, plus the dispatcher leader\'s state. ' +
    'Diagnostics never complete or unblock work: act on the suggestion.',
  owner,
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/boards/:boardId/diagnostics' },
  scope: 'board:read',
  input: z.object({ ...BoardInput, includeResolved: z
        .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], { error: 'includeResolved is true or false' })
        .default(false)
        .describe('Also list diagnostics whose condition has resolved.') }).strict(),
  output: z.object({ boardId: text(), diagnostics: z.array(DiagnosticSchema), leader: LeaderStateSchema }),
  agentFacing: true,
  example: { boardId: 'run-2026-12-01-a' },
});

export const UnresolvedCardSchema = z.object({ cardId: text(), title: text(), status: CardStatusSchema, reason: text() });

export const boardSynthesize = defineOperation({
  name: 'board.synthesize',
  summary: 'Compose the final answer from verified cards only',
  description:
    'Composes the board\'s answer only from verified cards and their evidence, and names every card that is not verified (blocked, in review, still open) with why. ' +
    'complete is true only when every card that was not cancelled is verified. Never present an unverified card as done. ' +
    'text comes in the form the board\'s visibility chooses, or the form you ask for: admin names cards, evidence ids and refs; ' +
    'public states each verified item\'s outcome and names what is not done in words, with no file system paths, refs or internal ids (card, evidence and job ids, claim tokens, the board id). ' +
    'A public board answers only in the public form. verified and unresolved name cards by id for you to act on; only text is meant to be shown. ' +
    `The answer stays under ${RESULT_PAGE_BYTES} bytes of JSON: the admin text names each card's latest evidence, verified lists each card's latest evidence ids with evidenceTotal, and a text too long for one answer stops at a card (truncated: true) and says how many it left out; board.show pages every card.`,
  owner,
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/boards/:boardId/synthesis' },
  scope: 'board:read',
  input: z
    .object({
      ...BoardInput,
      form: SynthesisFormSchema.optional().describe('admin or public; left out, the board\'s visibility decides. admin is refused on a public board.'),
    })
    .strict(),
  output: z.object({
    boardId: text(),
    form: SynthesisFormSchema,
    complete: z.boolean(),
    text: text(),
    verified: z.array(z.object({ cardId: text(), title: text(), evidenceIds: z.array(text()).describe('The card\'s latest evidence ids (at most 50).'), evidenceTotal: z.number().int().nonnegative() })),
    unresolved: z.array(UnresolvedCardSchema),
    /** True when the text stops before its last card to keep the answer under RESULT_PAGE_BYTES. */
    truncated: z.boolean(),
  }),
  errors: { 413: `The synthesis would pass the ${RESULT_PAGE_BYTES}-byte limit on one answer even bounded (a full board with long titles): read the board with board.show.` },
  agentFacing: true,
  example: { boardId: 'run-2026-12-01-a' },
});

/** Every board operation, in the order the table lists them. */
export const BOARD_OPERATIONS = [
  boardCreate,
  boardAddCards,
  boardUpdateCard,
  boardAttachEvidence,
  boardClaimCard,
  boardHeartbeat,
  boardSubmitCard,
  boardReviewCard,
  boardShow,
  boardDiagnostics,
  boardSynthesize,
] as const;
