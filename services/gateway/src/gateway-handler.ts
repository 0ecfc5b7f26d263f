import type { OperationDef, OperationOutput } from '@vouch/contracts';
import type { z } from 'zod';
import type { Caller } from './api-keys.js';

/** What a gateway-owned operation's handler gets besides its validated input. */
export interface GatewayContext {
  caller: Caller;
  requestId: string;
}

/** The handler of an operation the gateway answers itself. */
export interface GatewayHandler<Op extends OperationDef = OperationDef> {
  operation: Op;
  handle(input: z.output<Op['input']>, ctx: GatewayContext): Promise<OperationOutput<Op>>;
}

export function gatewayHandler<Op extends OperationDef>(operation: Op, fn: GatewayHandler<Op>['handle']): GatewayHandler {
  return { operation, handle: fn } as unknown as GatewayHandler;
}
