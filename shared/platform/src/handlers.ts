import type { Actor, OperationDef, OperationInput, OperationOutput } from '@vouch/contracts';
import type { z } from 'zod';
import type { Logger } from './logger.js';

/** What a handler gets besides its validated input. */
export interface HandlerContext {
  tenant: string;
  /** The agent the caller's API key carries (set by the gateway), or undefined for a job that came another way. */
  actor: Actor | undefined;
  requestId: string | undefined;
  /** The BullMQ id of the job: the same on every attempt and every re-run after a crash, so a handler keys its idempotent writes on it. */
  jobId: string;
  /** The name of the operation the job runs (for messages that name it). */
  operation: string;
  logger: Logger;
}

/** The handler of one operation: validated input in, output that must match the operation's output schema. */
export interface OperationHandler<Op extends OperationDef = OperationDef> {
  operation: Op;
  handle(input: z.output<Op['input']>, ctx: HandlerContext): Promise<OperationOutput<Op> | z.input<Op['output']>>;
}

/** Pairs an operation with its handler, keeping the input and output types. */
export function handle<Op extends OperationDef>(operation: Op, fn: OperationHandler<Op>['handle']): OperationHandler<Op> {
  return { operation, handle: fn };
}

/**
 * Refuses a handler set that does not cover `operations` exactly once each
 * (Immich's job registry check): a missing handler would leave jobs waiting
 * forever, two would make behaviour depend on registration order.
 */
export function assertHandlersComplete(service: string, operations: readonly Pick<OperationDef, 'name'>[], handlers: readonly { operation: Pick<OperationDef, 'name'> }[]): void {
  const problems: string[] = [];
  const served = new Set(operations.map((op) => op.name));
  const counts = new Map<string, number>();
  for (const h of handlers) counts.set(h.operation.name, (counts.get(h.operation.name) ?? 0) + 1);
  for (const name of served) {
    const n = counts.get(name) ?? 0;
    if (n === 0) problems.push(`operation ${name} has no handler`);
    if (n > 1) problems.push(`operation ${name} has ${n} handlers`);
  }
  for (const name of counts.keys()) if (!served.has(name)) problems.push(`handler for ${name}, which this service does not serve`);
  if (problems.length) throw new Error(`${service} refuses to start: ${problems.join('; ')}`);
}

export type { OperationInput };
