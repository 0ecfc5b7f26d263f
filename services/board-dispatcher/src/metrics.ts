import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The board's own metrics (DESIGN.md, "Metrics"). deploy/ queries these names. */
export interface BoardMetrics {
  /** 1 while this replica holds the dispatcher lease. */
  leader: Gauge;
  takeovers: Counter;
  fenceRejections: Counter;
  dispatchLatency: Histogram;
  dispatched: Counter;
  cards: Gauge<'status'>;
  diagnostics: Gauge<'kind'>;
  leaseTtl: Gauge;
  /** How long the lease has been expired with nobody holding it (0 while held). */
  leaderless: Gauge;
}

/**
 * Registers the board metrics. The gauges read from Postgres at scrape time
 * (`collect`), so every replica reports the same board-wide figures.
 */
export function createBoardMetrics(registry: Registry, collect: { cards(): Promise<Record<string, number>>; diagnostics(): Promise<Record<string, number>>; leaderlessSeconds(): Promise<number> }): BoardMetrics {
  return {
    leader: new Gauge({ name: 'vouch_board_leader', help: '1 while this replica holds the dispatcher lease, else 0.', registers: [registry] }),
    takeovers: new Counter({ name: 'vouch_board_lease_takeovers_total', help: 'Times this replica took the dispatcher lease.', registers: [registry] }),
    fenceRejections: new Counter({ name: 'vouch_board_fence_rejections_total', help: 'Dispatcher writes refused because the lease had moved on (a paused or partitioned ex-leader).', registers: [registry] }),
    dispatchLatency: new Histogram({
      name: 'vouch_board_dispatch_latency_seconds',
      help: 'Time from a card becoming ready to its dispatch.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    dispatched: new Counter({ name: 'vouch_board_dispatched_total', help: 'Card attempts dispatched by this replica.', registers: [registry] }),
    cards: new Gauge({
      name: 'vouch_board_cards',
      help: 'Cards by status over every board, read from Postgres at scrape time.',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const [status, n] of Object.entries(await collect.cards())) this.set({ status }, n);
        } catch {
          // Postgres down: the readiness probe says so; leave the series out of this scrape.
        }
      },
    }),
    diagnostics: new Gauge({
      name: 'vouch_board_diagnostics',
      help: 'Open diagnostics by kind over every board, read at scrape time.',
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const [kind, n] of Object.entries(await collect.diagnostics())) this.set({ kind }, n);
        } catch {
          // as above
        }
      },
    }),
    leaseTtl: new Gauge({ name: 'vouch_board_lease_ttl_seconds', help: 'The dispatcher lease TTL this replica runs with.', registers: [registry] }),
    leaderless: new Gauge({
      name: 'vouch_board_leaderless_seconds',
      help: 'Seconds since the dispatcher lease expired with no holder renewing it; 0 while a leader holds it.',
      registers: [registry],
      async collect() {
        try {
          this.set(await collect.leaderlessSeconds());
        } catch {
          // as above
        }
      },
    }),
  };
}
