import type { Logger } from '@vouch/platform';

/**
 * The dispatch outbox relay (WorkQueues.relay moves board_dispatches rows to
 * the assignees' work queues). It runs in its own loop, beside the dispatch
 * loop: a burst of a thousand jobs to Redis must not hold up the next
 * dispatch. One relay runs at a time; a kick while it runs makes it go round
 * once more. The work queues idle past their TTL are released from the same
 * loop, never beside a relay pass.
 */

export interface OutboxRelayDeps {
  /** Relays one batch of the outbox; how many rows it moved (0: settled). */
  relayBatch(): Promise<number>;
  /** Releases idle work queues (WorkQueues.release); with `obliterate`, empty ones are removed from Redis too; how many were. */
  releaseQueues(opts: { obliterate: boolean }): Promise<number>;
  /** True once the dispatcher is stopping: the loop ends after its current pass. */
  stopped(): boolean;
  logger: Pick<Logger, 'warn' | 'debug'>;
}

export class OutboxRelay {
  private relaying: Promise<void> | undefined;
  private again = false;
  /** Set by each sweep: the loop then releases idle work queues, never beside a relay pass. */
  private releaseDue = false;

  constructor(private readonly deps: OutboxRelayDeps) {}

  /** True while a relay loop runs. */
  get running(): boolean {
    return this.relaying !== undefined;
  }

  /** Resolves when no relay loop runs. */
  async idle(): Promise<void> {
    await this.relaying;
  }

  /** Relays now, or once more after the pass that runs. */
  kick(): void {
    if (this.relaying) {
      this.again = true;
      return;
    }
    this.relaying = this.loop();
  }

  /** Relays, then releases the idle work queues (obliterating empty ones) in the same loop. */
  kickAndRelease(): void {
    this.releaseDue = true;
    this.kick();
  }

  private async loop(): Promise<void> {
    try {
      do {
        do {
          this.again = false;
          while ((await this.deps.relayBatch()) > 0) {
            // keep going until the outbox is settled
          }
        } while (this.again && !this.deps.stopped());
        if (this.releaseDue && !this.deps.stopped()) {
          this.releaseDue = false;
          await this.releaseQueues(true);
        }
        // A kick that came during the release relays now, not at the next sweep.
      } while (this.again && !this.deps.stopped());
    } catch (err) {
      // Redis down: the rows stay pending and the next sweep relays them.
      this.deps.logger.warn({ err }, 'relaying dispatches to the work queues failed; will retry');
    } finally {
      this.relaying = undefined;
    }
  }

  /**
   * Releases the work queues idle past their TTL: the leader, in the relay's
   * loop, obliterates the empty ones too; a follower (which relays nothing)
   * only drops its Queue objects.
   */
  async releaseQueues(obliterate: boolean): Promise<void> {
    try {
      const obliterated = await this.deps.releaseQueues({ obliterate });
      if (obliterated > 0) this.deps.logger.debug({ obliterated }, 'obliterated idle, empty work queues');
    } catch (err) {
      this.deps.logger.warn({ err }, 'releasing idle work queues failed; the next sweep retries');
    }
  }
}
