import { createHash, randomUUID } from 'node:crypto';
import { isQueueName, type QueueName } from '@vouch/contracts';

/**
 * The BullMQ job id for a request. With an Idempotency-Key it is derived from
 * (tenant, operation, key, attempt): a request retried after a gateway crash
 * finds the job the first one added (BullMQ ignores an add with an existing
 * id), while a retry after a 5xx gets a new attempt id and runs again.
 */
export function bullJobId(tenant: string, operation: string, idempotency: { key: string; attempt: string } | undefined): string {
  if (!idempotency) return `j${randomUUID().replace(/-/g, '')}`;
  return `k${createHash('sha256').update(`${tenant}\0${operation}\0${idempotency.key}\0${idempotency.attempt}`).digest('hex').slice(0, 40)}`;
}

/** `<queue>.<bull id>`: the job id callers see. */
export function publicJobId(queue: QueueName, id: string): string {
  return `${queue}.${id}`;
}

export function parsePublicJobId(publicId: string): { queue: QueueName; id: string } | undefined {
  const dot = publicId.indexOf('.');
  const queue = publicId.slice(0, dot);
  return dot > 0 && isQueueName(queue) ? { queue, id: publicId.slice(dot + 1) } : undefined;
}
