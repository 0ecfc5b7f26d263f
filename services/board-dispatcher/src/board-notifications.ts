import pg from 'pg';
import type { Logger } from '@vouch/platform';
import { CHANGED_PREFIX, DISPATCHED_PREFIX, channelName } from './board-store.js';

/**
 * Postgres notifications, delivered on COMMIT of the transaction that wrote
 * the events: a board whose cards changed (the dispatcher looks at it now,
 * not at its next sweep) and an assignee with new work (its waiting claims
 * look now). One connection per process. They only make things fast: the
 * dispatcher sweeps and waiting claims poll on their own, so a lost
 * notification (or a connection pooler that cannot LISTEN) costs latency,
 * never correctness. LISTEN holds a session, which a pooler in transaction
 * mode does not keep: `url` is the server itself (DATABASE_DIRECT_URL when
 * DATABASE_URL is such a pooler).
 */
export class BoardNotifications {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly changedListeners = new Set<(tenant: string, boardId: string) => void>();
  private readonly dispatchWaiters = new Map<string, Set<() => void>>();

  private readonly changedChannel: string;
  private readonly dispatchedChannel: string;

  constructor(private readonly opts: { url: string; schema: string; logger: Logger; retryMs?: number }) {
    this.changedChannel = channelName(CHANGED_PREFIX, opts.schema);
    this.dispatchedChannel = channelName(DISPATCHED_PREFIX, opts.schema);
  }

  async start(): Promise<void> {
    await this.connect().catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'board notifications unavailable: falling back to polling until they reconnect');
      this.scheduleReconnect();
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.url, connectionTimeoutMillis: 5_000 });
    client.on('error', () => {});
    client.on('end', () => {
      if (this.client === client) this.client = undefined;
      if (!this.stopped) this.scheduleReconnect();
    });
    client.on('notification', (msg) => this.deliver(msg.channel, msg.payload));
    await client.connect();
    await client.query(`LISTEN "${this.changedChannel}"`);
    await client.query(`LISTEN "${this.dispatchedChannel}"`);
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch(() => this.scheduleReconnect());
    }, this.opts.retryMs ?? 1_000);
    this.retryTimer.unref();
  }

  private deliver(channel: string, payload: string | undefined): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    if (!Array.isArray(parsed) || parsed.length !== 2) return;
    const [tenant, second] = parsed as [string, string];
    if (channel === this.changedChannel) for (const listener of this.changedListeners) listener(tenant, second);
    if (channel === this.dispatchedChannel) {
      const waiters = this.dispatchWaiters.get(JSON.stringify([tenant, second]));
      if (waiters) for (const wake of [...waiters]) wake();
    }
  }

  onBoardChanged(listener: (tenant: string, boardId: string) => void): () => void {
    this.changedListeners.add(listener);
    return () => this.changedListeners.delete(listener);
  }

  /** Resolves when work is dispatched to the assignee, or after `ms`, whichever comes first. */
  waitForDispatch(tenant: string, assignee: string, ms: number, signal?: AbortSignal): Promise<void> {
    const id = JSON.stringify([tenant, assignee]);
    return new Promise((resolve) => {
      const waiters = this.dispatchWaiters.get(id) ?? new Set();
      this.dispatchWaiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.dispatchWaiters.delete(id);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      signal?.addEventListener('abort', done);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const waiters of this.dispatchWaiters.values()) for (const wake of [...waiters]) wake();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
