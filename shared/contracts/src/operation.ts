import type { z } from 'zod';
import type { Actor } from './actor.js';
import type { ProblemStatus } from './errors.js';
import type { QueueName } from './queues.js';

/** `rpc`: the gateway waits for the result. `job`: it answers 202 with a job handle. */
export type OperationMode = 'rpc' | 'job';

/** Who runs an operation: the gateway itself, or the service that consumes a queue. */
export type OperationOwner =
  | { process: 'gateway' }
  | { queue: QueueName }
  /** The queue is chosen by the input's `service` field (system.ping). */
  | { queueFromInput: 'service' };

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** API key scopes. A key holds a list of them; an operation names the one it needs. */
export const SCOPES = ['jobs:read', 'media:write', 'media:read', 'ledger:write', 'ledger:read', 'artifacts:write', 'artifacts:read', 'board:write', 'board:read', 'system:read', 'vision:write', 'vision:read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** One entry of the operation table: everything every view derives from. */
export interface OperationDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** Dotted name, e.g. `media.register`; also the BullMQ job name. */
  name: string;
  summary: string;
  /** What it does and when an agent should call it; the tool manifest's description. */
  description: string;
  owner: OperationOwner;
  mode: OperationMode;
  /** HTTP route. `:name` segments are path parameters, taken into the input by name. */
  http: { method: HttpMethod; path: string };
  scope: Scope;
  input: I;
  output: O;
  /** Listed in the agent tool manifest. */
  agentFacing: boolean;
  /**
   * A valid input, as a client would send it (path parameters included). The
   * OpenAPI document shows it; the fuzz and tenant-isolation suites start from
   * it, so every new operation joins them without more work.
   */
  example: z.input<I>;
  /**
   * Problem answers this operation gives beyond those its shape implies, each
   * with when it happens. The shape already implies 400, 401, 403 and 503 for
   * every operation, 409 (Idempotency-Key reuse), 413 and 415 for a JSON body,
   * 404 for a path parameter, and 504 for an rpc served by a queue
   * (problemResponses in problem-responses.ts); name here what the handler adds,
   * e.g. a 404 for an input that names nothing, or a 409 for a state conflict.
   */
  errors?: Partial<Record<ProblemStatus, string>>;
  /** How long the gateway waits on an rpc operation before answering 504 with the job id. */
  timeoutMs?: number;
  /**
   * The job is worthless once its caller stops waiting (a ping): the gateway
   * refuses it at once when no worker is connected, removes it when the wait
   * times out, and keeps no result.
   */
  ephemeral?: boolean;
  /** BullMQ retry policy for queue-owned operations: attempts and base of the exponential backoff. */
  retry?: { attempts: number; backoffMs: number };
  /**
   * A write that changes nothing more when repeated with the same input
   * (ledger.open returns the ledger it opened). Reads (a `:read` scope) are
   * idempotent without saying so. MCP tools carry it as `idempotentHint`.
   */
  idempotent?: boolean;
  /**
   * The operation removes or overwrites what the caller recorded; an MCP host
   * asks before running it (`destructiveHint`). DELETE routes are destructive
   * without saying so; other writes only add.
   */
  destructive?: boolean;
  /** Also readable as an MCP resource (see McpResourceDef in mcp-catalog.ts). */
  resource?: McpResourceDef;
}

/**
 * How an operation is read as an MCP resource: the URI template's variables
 * (`{runId}`) are input fields, every other field takes its default. The
 * resource is read through the operation, so it has its scope and tenant.
 */
export interface McpResourceDef {
  /** RFC 6570 level-1 template under vouch://, e.g. `vouch://ledgers/{runId}/render`. */
  uriTemplate: string;
  /** A short name for resource lists, e.g. `ledger-render`. */
  name: string;
  mimeType: 'application/json' | 'text/plain' | 'text/markdown';
  /** An output field holding the text to serve; without it the whole output is served as JSON. */
  textField?: string;
}

export type OperationInput<Op extends OperationDef> = z.input<Op['input']>;
export type OperationOutput<Op extends OperationDef> = z.output<Op['output']>;

/** Keeps the literal types of an entry while checking it against OperationDef. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType>(op: OperationDef<I, O>): OperationDef<I, O> {
  return op;
}

/** The envelope every queued operation job carries. Tenant and actor come from the API key, never from the body. */
export interface JobEnvelope<I = unknown> {
  tenant: string;
  input: I;
  /**
   * Who acts: the agent the caller's key carries, and the key's id. The
   * gateway sets it on every job; a job without one (a service's own call, a
   * job added by hand) may read but not act as an agent.
   */
  actor?: Actor;
  /** The gateway request id, for correlating logs across processes. */
  requestId?: string;
}
