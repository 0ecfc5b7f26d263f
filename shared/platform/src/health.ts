/** What a probe may answer: healthy or not, optionally with why (shown by /readyz). */
export type ProbeAnswer = boolean | { ok: boolean; detail?: string };

/** One readiness check: a name and a probe that resolves true (or { ok: true }) when healthy. */
export interface ReadinessCheck {
  name: string;
  probe(): Promise<ProbeAnswer>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, boolean>;
  /** Why a check answered as it did, for the checks that say. */
  details?: Record<string, string>;
}

/** Runs every check concurrently; a check that throws counts as failed. */
export async function checkReadiness(checks: readonly ReadinessCheck[]): Promise<ReadinessReport> {
  const results = await Promise.all(checks.map(async (c) => [c.name, await c.probe().catch(() => false as ProbeAnswer)] as const));
  const details: Record<string, string> = {};
  const flags = results.map(([name, answer]) => {
    if (typeof answer === 'boolean') return [name, answer] as const;
    if (answer.detail !== undefined) details[name] = answer.detail;
    return [name, answer.ok] as const;
  });
  return { ready: flags.every(([, ok]) => ok), checks: Object.fromEntries(flags), ...(Object.keys(details).length ? { details } : {}) };
}
