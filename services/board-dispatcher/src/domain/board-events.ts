import {
  AgentIdSchema,
  BlockReasonSchema,
  BoardEvidenceSchema,
  BoardPolicySchema,
  BoardScopeSchema,
  BoardVisibilitySchema,
  CardLaneSchema,
  CardPrioritySchema,
  CardReviewSchema,
  CardStatusSchema,
  EvidenceRequirementSchema,
  IsoTimeSchema,
  describeFieldIssues,
  fieldIssuesFromZod,
} from '@vouch/contracts';
import { z } from 'zod';
import { TRANSITION_TRIGGERS } from './card-transitions.js';

/**
 * The board's event stream. Each event is one change; a command that makes
 * several changes (a batch of cards, a verification that readies the cards
 * waiting on it) appends several events in one transaction. Events carry
 * decisions already made, so replay folds plain data. `seq` starts at 1 and
 * is unique per board; `at` is the only clock replay knows.
 */
const base = { seq: z.number().int().positive(), at: IsoTimeSchema };
const cardRef = { cardId: z.string() };

export const BoardCreatedEventSchema = z.object({
  ...base,
  type: z.literal('board_created'),
  boardId: z.string(),
  title: z.string(),
  goal: z.string(),
  scope: BoardScopeSchema,
  owner: z.string(),
  policy: BoardPolicySchema,
  /** Boards created before visibility existed were all read by their operator: their events read as admin. */
  visibility: BoardVisibilitySchema.default('admin'),
});

export const AddedCardSchema = z.object({
  id: z.string(),
  key: z.string().nullable(),
  title: z.string(),
  description: z.string(),
  lane: CardLaneSchema,
  assignee: z.string().nullable(),
  priority: CardPrioritySchema,
  dependsOn: z.array(z.string()),
  evidenceRequirements: z.array(EvidenceRequirementSchema),
  deadline: IsoTimeSchema.nullable(),
  /** todo, or ready when every dependency is already verified. */
  status: z.enum(['todo', 'ready']),
});
export type AddedCard = z.infer<typeof AddedCardSchema>;

export const CardAddedEventSchema = z.object({ ...base, type: z.literal('card_added'), card: AddedCardSchema, by: z.string(), reason: z.string().nullable() });

export const CardChangesSchema = z
  .object({
    title: z.string(),
    description: z.string(),
    assignee: AgentIdSchema.nullable(),
    priority: CardPrioritySchema,
    deadline: IsoTimeSchema.nullable(),
    /** Rewritten by a split: cards that waited on the split card wait on its replacements. */
    dependsOn: z.array(z.string()),
  })
  .partial();
export type CardChanges = z.infer<typeof CardChangesSchema>;

export const CardUpdatedEventSchema = z.object({ ...base, ...cardRef, type: z.literal('card_updated'), changes: CardChangesSchema, by: z.string(), reason: z.string().nullable() });

export const EvidenceAttachedEventSchema = z.object({ ...base, ...cardRef, type: z.literal('evidence_attached'), items: z.array(BoardEvidenceSchema).min(1), by: z.string() });

/** A status change that is not dispatch, claim, submission, failure or review (those have their own events). */
export const CardTransitionedEventSchema = z.object({
  ...base,
  ...cardRef,
  type: z.literal('card_transitioned'),
  from: CardStatusSchema,
  to: CardStatusSchema,
  trigger: z.enum(TRANSITION_TRIGGERS),
  blockReason: BlockReasonSchema.nullable(),
  by: z.string(),
  reason: z.string().nullable(),
});

/** The dispatcher gave the card to its assignee: attempt n, under the dispatcher lease's epoch. */
export const CardDispatchedEventSchema = z.object({
  ...base,
  ...cardRef,
  type: z.literal('card_dispatched'),
  from: z.enum(['ready', 'changes_requested']),
  attempt: z.number().int().positive(),
  assignee: z.string(),
  epoch: z.number().int().positive(),
});

export const CardClaimedEventSchema = z.object({ ...base, ...cardRef, type: z.literal('card_claimed'), attempt: z.number().int().positive(), claimToken: z.string(), by: z.string() });

export const CardSubmittedEventSchema = z.object({ ...base, ...cardRef, type: z.literal('card_submitted'), attempt: z.number().int().positive(), by: z.string(), summary: z.string() });

/** An attempt ended without a submission: the worker reported failure, or its claim stopped heartbeating. */
export const CardFailedEventSchema = z.object({
  ...base,
  ...cardRef,
  type: z.literal('card_failed'),
  attempt: z.number().int().positive(),
  trigger: z.enum(['worker_failed', 'claim_expired']),
  /** ready for another attempt, or blocked once the failures reach the board's maxFailures. */
  to: z.enum(['ready', 'blocked']),
  by: z.string(),
  summary: z.string(),
});

export const CardReviewedEventSchema = z.object({ ...base, ...cardRef, type: z.literal('card_reviewed'), review: CardReviewSchema, to: z.enum(['verified', 'changes_requested']) });

export const BoardEventSchema = z.discriminatedUnion('type', [
  BoardCreatedEventSchema,
  CardAddedEventSchema,
  CardUpdatedEventSchema,
  EvidenceAttachedEventSchema,
  CardTransitionedEventSchema,
  CardDispatchedEventSchema,
  CardClaimedEventSchema,
  CardSubmittedEventSchema,
  CardFailedEventSchema,
  CardReviewedEventSchema,
]);

export type BoardCreatedEvent = z.infer<typeof BoardCreatedEventSchema>;
export type CardAddedEvent = z.infer<typeof CardAddedEventSchema>;
export type CardUpdatedEvent = z.infer<typeof CardUpdatedEventSchema>;
export type EvidenceAttachedEvent = z.infer<typeof EvidenceAttachedEventSchema>;
export type CardTransitionedEvent = z.infer<typeof CardTransitionedEventSchema>;
export type CardDispatchedEvent = z.infer<typeof CardDispatchedEventSchema>;
export type CardClaimedEvent = z.infer<typeof CardClaimedEventSchema>;
export type CardSubmittedEvent = z.infer<typeof CardSubmittedEventSchema>;
export type CardFailedEvent = z.infer<typeof CardFailedEventSchema>;
export type CardReviewedEvent = z.infer<typeof CardReviewedEventSchema>;
export type BoardEvent = z.infer<typeof BoardEventSchema>;
export type BoardEventType = BoardEvent['type'];

/** An event without its seq: what commands build before the stream numbers them. */
export type NewBoardEvent = BoardEvent extends infer E ? (E extends BoardEvent ? Omit<E, 'seq'> : never) : never;

/** Reads one stored event (a jsonb row), refusing anything that is not a well-formed event. */
export function parseBoardEvent(json: unknown): BoardEvent {
  const parsed = BoardEventSchema.safeParse(json);
  if (!parsed.success) throw new Error(`not a board event: ${describeFieldIssues(fieldIssuesFromZod(parsed.error.issues))}`);
  return parsed.data;
}

/** The card an event is about, if any: the store keeps one projection row per card up to date from it. */
export function cardOf(event: BoardEvent | NewBoardEvent): string | undefined {
  if (event.type === 'board_created') return undefined;
  if (event.type === 'card_added') return event.card.id;
  return event.cardId;
}
