import {
  CompletionClaimSchema,
  CompletionEvidenceSchema,
  CompletionProposalSchema,
  CriticPacketSchema,
  CritiqueRecordSchema,
  IsoTimeSchema,
  LedgerStatusSchema,
  ReviewPolicySchema,
  UnresolvedItemSchema,
  describeFieldIssues,
  fieldIssuesFromZod,
} from '@vouch/contracts';
import { z } from 'zod';

/**
 * The ledger's event stream. Events record decisions already made (derived
 * claims, verdicts, unresolved items), so replaying them folds plain data and
 * rebuilds the snapshot exactly, whatever later versions of the derivation
 * code would decide. `seq` is unique per ledger and starts at 1; `at` is the
 * only clock replay knows.
 */
const eventBase = {
  seq: z.number().int().positive(),
  at: IsoTimeSchema,
};

export const LedgerOpenedEventSchema = z.object({
  ...eventBase,
  type: z.literal('ledger_opened'),
  runId: z.string(),
  goal: z.string(),
  policy: ReviewPolicySchema,
  cycleBudget: z.number().int().positive(),
  boardId: z.string().optional(),
});

/**
 * One batch of observations; each item carries its own id and evidence seq.
 * What the critic reads from each item is kept apart (ledger_observations).
 * Batches recorded by issue 8's first version carried it here as `features`:
 * reading the event leaves it out (zod drops keys a schema does not name).
 */
export const EvidenceRecordedEventSchema = z.object({
  ...eventBase,
  type: z.literal('evidence_recorded'),
  items: z.array(CompletionEvidenceSchema).min(1),
  /** The agent whose API key recorded the batch (attribute-events.ts); absent on events recorded before actors came from keys, or by a job without one. */
  by: z.string().optional(),
});

/** A completion attempt with the claims derived from it, reconciled with the evidence of that moment. */
export const CompletionProposedEventSchema = z.object({
  ...eventBase,
  type: z.literal('completion_proposed'),
  proposal: CompletionProposalSchema,
  claims: z.array(CompletionClaimSchema),
  /** The agent whose API key proposed the completion; absent as on evidence_recorded. */
  by: z.string().optional(),
});

/** A review: its record, the loops left open after it, and the packet the critics saw. */
export const CritiqueRecordedEventSchema = z.object({
  ...eventBase,
  type: z.literal('critique_recorded'),
  critique: CritiqueRecordSchema,
  unresolved: z.array(UnresolvedItemSchema),
  packet: CriticPacketSchema,
});

export const StatusChangedEventSchema = z.object({
  ...eventBase,
  type: z.literal('status_changed'),
  from: LedgerStatusSchema,
  to: LedgerStatusSchema,
  reason: z.string(),
});

export const LedgerEventSchema = z.discriminatedUnion('type', [
  LedgerOpenedEventSchema,
  EvidenceRecordedEventSchema,
  CompletionProposedEventSchema,
  CritiqueRecordedEventSchema,
  StatusChangedEventSchema,
]);

export type LedgerOpenedEvent = z.infer<typeof LedgerOpenedEventSchema>;
export type EvidenceRecordedEvent = z.infer<typeof EvidenceRecordedEventSchema>;
export type CompletionProposedEvent = z.infer<typeof CompletionProposedEventSchema>;
export type CritiqueRecordedEvent = z.infer<typeof CritiqueRecordedEventSchema>;
export type StatusChangedEvent = z.infer<typeof StatusChangedEventSchema>;
export type LedgerEvent = z.infer<typeof LedgerEventSchema>;
export type LedgerEventType = LedgerEvent['type'];

/**
 * Critiques recorded before reviews said which version they read were always
 * appended at it: right after it come their proposal (seq - 1) and their own
 * event (seq), so they read seq - 2.
 */
function withBaseVersion(json: unknown): unknown {
  if (typeof json !== 'object' || json === null) return json;
  const event = json as { type?: unknown; seq?: unknown; critique?: unknown };
  if (event.type !== 'critique_recorded' || typeof event.seq !== 'number' || typeof event.critique !== 'object' || event.critique === null) return json;
  if ('baseVersion' in event.critique) return json;
  return { ...event, critique: { ...event.critique, baseVersion: event.seq - 2 } };
}

/** Reads one stored event (a jsonb row), refusing anything that is not a well-formed event. */
export function parseLedgerEvent(json: unknown): LedgerEvent {
  const parsed = LedgerEventSchema.safeParse(withBaseVersion(json));
  if (!parsed.success) throw new Error(`not a ledger event: ${describeFieldIssues(fieldIssuesFromZod(parsed.error.issues))}`);
  return parsed.data;
}
