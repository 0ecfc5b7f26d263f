/**
 * Queue names: one BullMQ queue per service. A service's workers consume only
 * their own queue; the gateway adds jobs to any of them.
 */
export const QUEUES = {
  visionRouter: 'vision-router',
  extractor: 'extractor',
  /** LLM extraction, consumed only by extractor workers whose GPU gate passed. */
  extractorGpu: 'extractor-gpu',
  boardDispatcher: 'board-dispatcher',
  ledgerCritic: 'ledger-critic',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** Every service queue, in the order status pages list them. */
export const SERVICE_QUEUES: readonly QueueName[] = Object.values(QUEUES);

export function isQueueName(value: string): value is QueueName {
  return (SERVICE_QUEUES as readonly string[]).includes(value);
}

/** Job names that every service answers on its own queue, besides its operations. */
export const SYSTEM_JOBS = {
  ping: 'system.ping',
} as const;

/** The tenant of jobs vouch adds for itself (pings); no API key may belong to it. */
export const SYSTEM_TENANT = 'system';

/**
 * The tenant of operator keys (`npm run keys -- create --operator`). Its "@"
 * is outside the tenant name pattern, so no tenant key has ever carried it and
 * none can be made with it: operators are not tenants (DESIGN.md).
 */
export const OPERATOR_TENANT = '@operators';
