/** One readiness check: a name and a probe that resolves true when healthy. */
export interface ReadinessCheck {
  name: string;
  probe(): Promise<boolean>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, boolean>;
}

/** Runs every check concurrently; a check that throws counts as failed. */
export async function checkReadiness(checks: readonly ReadinessCheck[]): Promise<ReadinessReport> {
  const results = await Promise.all(checks.map(async (c) => [c.name, await c.probe().catch(() => false)] as const));
  return { ready: results.every(([, ok]) => ok), checks: Object.fromEntries(results) };
}
