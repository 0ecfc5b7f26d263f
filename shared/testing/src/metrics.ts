/** What metricValue reads: a prom-client Registry, or anything that lists its metrics the same way. */
export interface MetricsSource {
  getMetricsAsJSON(): Promise<ReadonlyArray<{ name: string; values?: readonly unknown[] }>>;
}

/**
 * The value of one series in a registry, 0 when absent. For a histogram or
 * summary, `name` itself or `name_count` is the series to read.
 */
export async function metricValue(registry: MetricsSource, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
  const match = values.find((v) => (v.metricName === undefined || v.metricName === name || v.metricName === `${name}_count`) && Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return match?.value ?? 0;
}
