/**
 * Tenant names as metric label values, bounded. Tenants are made by
 * operators (the keys CLI), so a deployment has few of them, but nothing in a
 * process limits how many it may see, and every label value is a set of
 * series Prometheus keeps. Each process names the first `limit` tenants it
 * meets and counts every later one under OTHER_TENANTS_LABEL, so one process
 * never holds more than `limit + 1` tenant values per metric.
 */

/** The label of tenants past a process's limit. No tenant can be called this: a tenant name starts with a letter or digit. */
export const OTHER_TENANTS_LABEL = '_other';

/** Tenants a process names in its metrics unless METRICS_TENANT_LABELS says otherwise. */
export const DEFAULT_TENANT_LABELS = 100;

/** A function from a tenant to its label value: its own name for the first `limit` tenants seen, OTHER_TENANTS_LABEL after. */
export function tenantLabeller(limit: number = DEFAULT_TENANT_LABELS): (tenant: string) => string {
  const named = new Set<string>();
  return (tenant) => {
    if (named.has(tenant)) return tenant;
    if (named.size >= limit) return OTHER_TENANTS_LABEL;
    named.add(tenant);
    return tenant;
  };
}
