import type { LedgerEvent } from './ledger-events.js';

/**
 * Actors are keys: the agent whose API key recorded evidence or proposed a
 * completion is written on those events (`by`), from the job's actor, never
 * from the body. It is the audit trail's and nothing else's: replay, the
 * critic and its verdicts never read it, so a ledger reads the same with or
 * without it (events from before it was recorded have none).
 */
export function attributeEvents(events: LedgerEvent[], by: string | undefined): LedgerEvent[] {
  if (by === undefined) return events;
  return events.map((event) => (event.type === 'evidence_recorded' || event.type === 'completion_proposed' ? { ...event, by } : event));
}
