import { BoardClaimableSchema, ERROR_CODES, VouchError, boardClaimCard, boardClaimableChannel, type OperationDef } from '@vouch/contracts';
import type { Redis } from 'ioredis';
import type { JobOutcome } from '@vouch/platform';
import { Gauge, type Registry } from 'prom-client';
import { RETRY_AFTER_SECONDS } from './problem.js';
import { INFLIGHT_LEASE_MS, TenantInflight } from './tenant-inflight.js';

/**
 * Waiting board.claimCard requests, held in the gateway instead of in
 * board-dispatcher jobs. A claim's job looks once and answers at once; a
 * claim that found nothing waits here, on an open request, for the
 * board-dispatcher to announce work for its agent (boardClaimableChannel,
 * published when the outbox relay queues a card for that assignee) or for its
 * safety poll, then sends its job again. Waiting costs no worker slot, so one
 * tenant's idle workers cannot starve another tenant's board operations; a
 * tenant may hold at most `perTenant` waiting claims across the gateways, and
 * a claim whose client has gone stops waiting and is never sent again.
 */

/** How one claim reaches the board-dispatcher: the first job, and each try after it under the same job id. */
export interface ClaimTries {
  first(timeoutMs: number): Promise<JobOutcome>;
  again(timeoutMs: number): Promise<JobOutcome>;
}

export interface ClaimRequest {
  tenant: string;
  /** The agent of the caller's key: the only assignee its claim may take work for. */
  agent: string;
  waitSeconds: number;
  /** The whole budget of the request, tries included (the operation's timeoutMs). */
  timeoutMs: number;
  /** Aborts when the caller has gone: the wait ends and no further try is sent. */
  signal?: AbortSignal | undefined;
}

/** One waiting claim's ear on the channel: a message that came in during a try is kept for the next wait. */
class Listener {
  private heard = false;
  private wake: (() => void) | undefined;

  hear(): void {
    this.heard = true;
    this.wake?.();
  }

  /** Resolves at the next announcement (at once if one came since the last call), after `ms`, or on abort. */
  async next(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (!this.heard && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        this.wake = done;
        signal?.addEventListener('abort', done);
      });
    }
    this.heard = false;
  }
}

/** A try that found nothing to claim: the only outcome after which a claim waits. */
function emptyHanded(outcome: JobOutcome): boolean {
  return outcome.kind === 'completed' && (outcome.value as { claimed?: unknown } | null)?.claimed === false;
}

export class ClaimWaits {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly places: TenantInflight;
  private readonly gauge: Gauge;
  private closed = false;

  constructor(
    private readonly opts: {
      /** A connection in subscriber mode (it may carry other subscriptions). */
      subscriber: Redis;
      /** A connection for commands: the tenant's places among waiting claims are counted in Redis. */
      redis: Redis;
      prefix: string;
      perTenant: number;
      safetyPollMs: number;
      registry: Registry;
    },
  ) {
    this.places = new TenantInflight(opts.redis, opts.prefix, INFLIGHT_LEASE_MS, 'vouch-claim-waits');
    this.gauge = new Gauge({ name: 'vouch_gateway_board_claims_waiting', help: 'board.claimCard requests waiting in this gateway for work, all tenants.', registers: [opts.registry] });
  }

  /** Subscribes to announcements; until it is up, waiting claims find work by their safety poll alone. */
  async start(): Promise<void> {
    const channel = boardClaimableChannel(this.opts.prefix);
    this.opts.subscriber.on('message', (ch: string, message: string) => {
      if (ch === channel) this.deliver(message);
    });
    // Resubscribed on every reconnect; announcements made while it was down are found by the safety poll.
    this.opts.subscriber.on('ready', () => void this.opts.subscriber.subscribe(channel).catch(() => {}));
    if (this.opts.subscriber.status === 'ready') await this.opts.subscriber.subscribe(channel);
  }

  /** Whether an operation's calls go through claim(). */
  handles(op: OperationDef): boolean {
    return op.name === boardClaimCard.name;
  }

  /**
   * Runs a claim: one try when it may not wait; otherwise a place among the
   * tenant's waiting claims (or a 429), then tries until one claims a card,
   * fails, or the wait is over. The listener is in place before the first
   * try, so work announced while a try runs is not missed.
   */
  async claim(req: ClaimRequest, tries: ClaimTries): Promise<JobOutcome> {
    if (req.waitSeconds === 0) return tries.first(req.timeoutMs);
    const leave = await this.enter(req.tenant);
    const listener = new Listener();
    const unlisten = this.listen(req.tenant, req.agent, listener);
    try {
      return await this.tryUntilClaimed(req, tries, listener);
    } finally {
      unlisten();
      await leave();
    }
  }

  private async tryUntilClaimed(req: ClaimRequest, tries: ClaimTries, listener: Listener): Promise<JobOutcome> {
    const started = Date.now();
    const waitUntil = started + req.waitSeconds * 1000;
    const budgetLeft = () => Math.max(1, started + req.timeoutMs - Date.now());
    let outcome = await tries.first(budgetLeft());
    while (emptyHanded(outcome) && Date.now() < waitUntil && !req.signal?.aborted && !this.closed) {
      await listener.next(Math.min(this.opts.safetyPollMs, waitUntil - Date.now()), req.signal);
      // The client is gone: a try now would claim a card for nobody, left running under a token nobody holds.
      if (req.signal?.aborted || this.closed) break;
      outcome = await tries.again(budgetLeft());
    }
    return outcome;
  }

  /** Ends every wait (the gateway is stopping): each claim answers with its last try, claimed: false. */
  close(): void {
    this.closed = true;
    this.places.close();
    for (const set of this.listeners.values()) for (const listener of set) listener.hear();
  }

  /**
   * Takes a place among the tenant's waiting claims, counted across every
   * gateway replica (a lease each, as the tenant's operations in flight are:
   * tenant-inflight.ts), or the 429 when they are all taken. Counted per
   * gateway, N replicas let one tenant hold N times the limit.
   */
  private async enter(tenant: string): Promise<() => Promise<void>> {
    const place = await this.places.take(tenant, this.opts.perTenant);
    if (!place.taken) {
      throw new VouchError(
        ERROR_CODES.tooManyRequests,
        `${place.held} board.claimCard requests of tenant ${tenant} are already waiting, its limit across the gateways (BOARD_CLAIM_WAITS_PER_TENANT): ` +
          `send waitSeconds: 0 to look for work without waiting, or retry after ${RETRY_AFTER_SECONDS} s, when one of the waits may have ended; ` +
          'if that many of your workers must wait at once, ask the operator to raise BOARD_CLAIM_WAITS_PER_TENANT',
        { details: { limit: this.opts.perTenant, retryAfterSeconds: RETRY_AFTER_SECONDS } },
      );
    }
    this.gauge.inc();
    return async () => {
      this.gauge.dec();
      await place.slot.release();
    };
  }

  private listen(tenant: string, agent: string, listener: Listener): () => void {
    const id = JSON.stringify([tenant, agent]);
    const set = this.listeners.get(id) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(id, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id);
    };
  }

  /** Wakes the claims an announcement is for; a message that is not one is ignored (the channel is ours, but Redis is shared). */
  private deliver(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    const to = BoardClaimableSchema.safeParse(parsed);
    if (!to.success) return;
    for (const listener of this.listeners.get(JSON.stringify([to.data.tenant, to.data.assignee])) ?? []) listener.hear();
  }
}
