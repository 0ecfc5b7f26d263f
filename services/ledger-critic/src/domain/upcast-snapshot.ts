import { CriticPacketSchema, LedgerSnapshotSchema, describeFieldIssues, fieldIssuesFromZod } from '@vouch/contracts';
import { z } from 'zod';
import type { LedgerState } from './replay-ledger.js';

/**
 * Snapshots as earlier versions of the service stored them, brought to the
 * state that replaying their (upcast) events gives today.
 *
 * A snapshot row says which format wrote it (ledger_snapshots.format):
 * - 1: any snapshot written before formats were numbered. Critiques from
 *   before reviews recorded their base version have none; claims from before
 *   issue 8 have no evidenceSpans; issue 8's first version kept every item's
 *   observation features in the state (`observations`, now in their own table).
 * - 2: the state exactly as LedgerState is today; read as it is.
 */
export const SNAPSHOT_FORMAT = 2;

const LedgerStateSchema = LedgerSnapshotSchema.extend({ packets: z.array(CriticPacketSchema) });

interface StoredCritique {
  cycle?: unknown;
  baseVersion?: unknown;
}

/** Whether a format-1 snapshot holds critiques without a base version: upcasting it needs the seqs of its critique events. */
export function lacksBaseVersions(stored: unknown): boolean {
  const critiques = (stored as { critiques?: unknown } | null)?.critiques;
  return Array.isArray(critiques) && critiques.some((c: StoredCritique) => typeof c === 'object' && c !== null && !('baseVersion' in c));
}

/**
 * A format-1 snapshot as today's state. `critiqueSeqs[cycle - 1]` is the seq
 * of that cycle's critique_recorded event: a critique without a base version
 * was appended at the version it read, right after it its proposal and then
 * itself, so it read seq - 2 (as ledger-events.ts reads such an event).
 * Parsing it with the contract's schemas fills the defaults its events get
 * when they are read (evidenceSpans) and drops what the state no longer holds.
 */
export function upcastSnapshot(stored: unknown, critiqueSeqs: readonly number[]): LedgerState {
  const state = stored as { critiques?: unknown };
  const critiques = Array.isArray(state?.critiques)
    ? state.critiques.map((c: StoredCritique) => {
        if (typeof c !== 'object' || c === null || 'baseVersion' in c) return c;
        const seq = typeof c.cycle === 'number' ? critiqueSeqs[c.cycle - 1] : undefined;
        if (seq === undefined) throw new Error(`a stored snapshot holds the critique of cycle ${String(c.cycle)}, but its stream has no critique event for that cycle`);
        return { ...c, baseVersion: seq - 2 };
      })
    : state?.critiques;
  const parsed = LedgerStateSchema.safeParse({ ...state, critiques });
  if (!parsed.success) throw new Error(`not a ledger snapshot: ${describeFieldIssues(fieldIssuesFromZod(parsed.error.issues))}`);
  return parsed.data;
}
