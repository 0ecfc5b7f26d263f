import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics.js';
import { DEFAULT_TENANT_LABELS, OTHER_TENANTS_LABEL, tenantLabeller } from '../src/tenant-label.js';

describe('tenant labels', () => {
  it('name the first tenants a process meets and count every later one as _other', () => {
    const label = tenantLabeller(2);
    expect([label('acme'), label('globex'), label('initech'), label('acme'), label('globex'), label('umbrella')]).toEqual(['acme', 'globex', OTHER_TENANTS_LABEL, 'acme', 'globex', OTHER_TENANTS_LABEL]);
    expect(tenantLabeller(0)('acme')).toBe(OTHER_TENANTS_LABEL);
  });

  it('bound the tenant values of a metric to the limit plus _other', async () => {
    const metrics = createMetrics({ service: 'test', collectDefaults: false, tenantLabels: 3 });
    for (let i = 0; i < 50; i++) metrics.tenantQueueWait.observe({ queue: 'q', tenant: metrics.tenantLabel(`tenant-${i}`) }, 0.01);
    const text = await metrics.registry.metrics();
    const tenants = new Set([...text.matchAll(/vouch_tenant_queue_wait_seconds_count\{[^}]*tenant="([^"]+)"/g)].map((m) => m[1]));
    expect([...tenants].sort()).toEqual(['_other', 'tenant-0', 'tenant-1', 'tenant-2']);
    expect(text).toContain('vouch_tenant_queue_wait_seconds_count{service="test",queue="q",tenant="_other"} 47');
  });

  it('name a hundred tenants by default', () => {
    const label = tenantLabeller();
    for (let i = 0; i < DEFAULT_TENANT_LABELS; i++) expect(label(`t-${i}`)).toBe(`t-${i}`);
    expect(DEFAULT_TENANT_LABELS).toBe(100);
    expect(label('one-more')).toBe(OTHER_TENANTS_LABEL);
  });
});
