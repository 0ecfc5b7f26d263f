import { z } from 'zod';
import { text } from './text.js';

/**
 * The Redis pub/sub channel on which the board-dispatcher says that work was
 * put in an assignee's queue (`board-work.<tenant>.<assignee>`), so a
 * board.claimCard waiting in the gateway tries again now, not at its next
 * safety poll. Under the BullMQ prefix, so deployments sharing a Redis do not
 * hear each other. Pub/sub delivers at most once: a lost message costs a
 * waiting claim latency, never a card.
 */
export function boardClaimableChannel(prefix: string): string {
  return `${prefix}:board:claimable`;
}

/** One message on the channel: there is work for this assignee of this tenant. */
export const BoardClaimableSchema = z.object({ tenant: text(), assignee: text() }).strict();
export type BoardClaimable = z.infer<typeof BoardClaimableSchema>;
