import { z } from 'zod';
import { BadInputError, ForbiddenError } from './errors.js';
import { AgentIdSchema } from './operations/board-schemas.js';
import { text } from './text.js';

/**
 * Actors are keys (DESIGN.md): who claimed, submitted, reviewed or recorded
 * something is the agent the caller's API key carries, never a name in the
 * body. The gateway puts it on every job it queues (JobEnvelope.actor); a
 * service reads it from there and checks any name the body still sends
 * against it.
 */

/** The board's own actors. No key may carry these names and no body may send them: they are what the audit trail says the board itself did. */
export const BUILTIN_VERIFIER_AGENT = 'builtin-verifier';
/** The dispatcher, which ends a claim that stopped heartbeating. */
export const DISPATCHER_AGENT = 'dispatcher';
export const RESERVED_AGENT_IDS: readonly string[] = [BUILTIN_VERIFIER_AGENT, DISPATCHER_AGENT];

/**
 * The agent a key created without `--agent` acts as: `key-` and its id (12
 * lowercase letters and digits), stable for the key's life and a valid
 * agent id. Names of this shape are reserved for such keys, so no other key
 * can be made to act as one.
 */
export function agentOfKey(keyId: string): string {
  return `key-${keyId.toLowerCase()}`;
}

const KEY_AGENT_PATTERN = /^key-[a-z0-9]{12}$/;

/**
 * Why a name cannot be given to a key with `--agent`, or undefined when it can:
 * it must be a valid agent id, not a built-in actor, and not the shape of a
 * key-derived name.
 */
export function keyAgentProblem(agent: string): string | undefined {
  const parsed = AgentIdSchema.safeParse(agent);
  if (!parsed.success) return parsed.error.issues.map((i) => i.message).join('; ');
  if (RESERVED_AGENT_IDS.includes(agent)) return `"${agent}" is reserved for the board's own ${agent === BUILTIN_VERIFIER_AGENT ? 'verifier' : 'dispatcher'}: no key may act as it; choose another name (e.g. verifier-1)`;
  if (KEY_AGENT_PATTERN.test(agent)) return `"${agent}" has the shape of the name a key without --agent acts as (key- and a key id): choose another name`;
  return undefined;
}

/**
 * An agent a caller may name in a body (an owner, an assignee, the agent it
 * acts as): any agent id but the board's own actors, whose names only the
 * board writes.
 */
export const CallerAgentIdSchema = AgentIdSchema.check((ctx) => {
  if (RESERVED_AGENT_IDS.includes(ctx.value)) {
    const how = ctx.value === BUILTIN_VERIFIER_AGENT ? 'ask for it with board.reviewCard decision auto' : 'it acts on its own';
    ctx.issues.push({ code: 'custom', input: ctx.value, message: `"${ctx.value}" is the board's own ${ctx.value === BUILTIN_VERIFIER_AGENT ? 'verifier' : 'dispatcher'} and cannot be named by a caller: ${how}`, continue: false });
  }
});

/** Who a queued job acts for: the agent the caller's API key carries, and the key's id (for the audit trail, never a secret). */
export const ActorSchema = z
  .object({
    agent: AgentIdSchema,
    keyId: text().min(1).max(100),
  })
  .strict();
export type Actor = z.infer<typeof ActorSchema>;

/** The actor of a job that acts as an agent; a job without one did not come through the gateway, and is refused (never retried). */
export function requireActor(actor: Actor | undefined, operation: string): Actor {
  if (!actor) throw new BadInputError(`${operation} acts as the agent of the caller's API key, and this job carries no actor: send it through the gateway (a job added by hand needs an actor in its envelope)`);
  return actor;
}

/**
 * The agent a request acts as: the key's. A body that still names the agent
 * (`field`) must name the key's own; naming another is a 403 that says how to
 * act as that agent (its own key); `verb` words it ("review", "claim").
 */
export function actingAgent(actor: Actor, field: string, sent: string | undefined, verb = 'act'): string {
  if (sent !== undefined && sent !== actor.agent) {
    throw new ForbiddenError(`this key acts as agent ${actor.agent}: omit \`${field}\` or send ${actor.agent}; to ${verb} as ${sent}, use ${sent}'s own key`, {
      fields: [{ path: field, message: `${sent} is not this key's agent (${actor.agent}): omit it or send ${actor.agent}` }],
      details: { field, keyAgent: actor.agent, sent },
    });
  }
  return actor.agent;
}
