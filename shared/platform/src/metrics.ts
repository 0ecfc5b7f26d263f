import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { tenantLabeller } from './tenant-label.js';

/** Job states read for the depth gauge, as BullMQ names them. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'waiting-children'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** Anything that can report job counts by state (a BullMQ Queue). */
export interface CountableQueue {
  name: string;
  getJobCounts(...states: QueueState[]): Promise<Record<string, number>>;
}

/** The metrics every process exposes (docs/architecture.md, "Metrics"). */
export interface PlatformMetrics {
  registry: Registry;
  jobsProcessed: Counter<'queue' | 'outcome'>;
  jobDuration: Histogram<'queue'>;
  /** Jobs moved aside because their tenant held its limit of slots on the queue (tenant-slots.ts). */
  jobsDeferred: Counter<'queue'>;
  /** Time from a job's add to the start of its first attempt, deferrals included. */
  jobWait: Histogram<'queue'>;
  /** jobWait by tenant, under a bounded tenant label (tenantLabel). */
  tenantQueueWait: Histogram<'queue' | 'tenant'>;
  /** The label value for a tenant: its name for the first METRICS_TENANT_LABELS tenants this process meets, `_other` after (tenant-label.ts). */
  tenantLabel(tenant: string): string;
  /** Reports these queues' depth by state, read from Redis at scrape time. */
  watchQueues(queues: CountableQueue[]): void;
}

/**
 * A registry with default process metrics and the per-queue job metrics, all
 * prefixed `vouch_` and labelled with the service. Each process makes one;
 * tests make their own so registries never collide.
 */
export function createMetrics(opts: {
  service: string;
  collectDefaults?: boolean;
  /** Tenants named in tenant-labelled metrics before the rest count as `_other` (METRICS_TENANT_LABELS; 100 by default). */
  tenantLabels?: number;
}): PlatformMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.collectDefaults ?? true) collectDefaultMetrics({ register: registry, prefix: 'vouch_' });

  const jobsProcessed = new Counter({
    name: 'vouch_jobs_processed_total',
    help: 'Job attempts finished, by queue and outcome (completed or failed).',
    labelNames: ['queue', 'outcome'] as const,
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: 'vouch_job_duration_seconds',
    help: 'Time a job attempt spent in its processor.',
    labelNames: ['queue'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  // No tenant label: tenants are unbounded, and a series per tenant would be too.
  const jobsDeferred = new Counter({
    name: 'vouch_jobs_deferred_total',
    help: 'Jobs moved aside (delayed) because their tenant held its limit of slots on the queue.',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  const waitBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
  const jobWait = new Histogram({
    name: 'vouch_job_wait_seconds',
    help: "Time from a job's add to the start of its first attempt, deferrals included.",
    labelNames: ['queue'] as const,
    buckets: waitBuckets,
    registers: [registry],
  });
  // The tenant label is bounded per process (tenant-label.ts): the first METRICS_TENANT_LABELS tenants, then `_other`.
  const tenantQueueWait = new Histogram({
    name: 'vouch_tenant_queue_wait_seconds',
    help: "Time from a job's add to the start of its first attempt, by queue and tenant (tenants past METRICS_TENANT_LABELS count as _other).",
    labelNames: ['queue', 'tenant'] as const,
    buckets: waitBuckets,
    registers: [registry],
  });

  const watched: CountableQueue[] = [];
  new Gauge({
    name: 'vouch_queue_jobs',
    help: 'Jobs in each queue by state, read from Redis at scrape time.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        watched.map(async (queue) => {
          try {
            const counts = await queue.getJobCounts(...QUEUE_STATES);
            for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          } catch {
            // Redis down: leave this queue out of the scrape rather than fail it;
            // the readiness probe and the `up` of other metrics tell the story.
          }
        }),
      );
    },
  });

  return {
    registry,
    jobsProcessed,
    jobDuration,
    jobsDeferred,
    jobWait,
    tenantQueueWait,
    tenantLabel: tenantLabeller(opts.tenantLabels),
    watchQueues(queues) {
      for (const q of queues) if (!watched.includes(q)) watched.push(q);
    },
  };
}
