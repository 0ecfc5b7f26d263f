import type { Actor } from '@vouch/contracts';

/**
 * The actor a job carries when a test adds it without a gateway (calling a
 * service's commands or its queue directly): the agent a key would act as,
 * and a key id that names it as a test's. Actors are keys, so every write
 * that acts as an agent needs one.
 */
export function testActor(agent: string): Actor {
  return { agent, keyId: `test-${agent}` };
}
