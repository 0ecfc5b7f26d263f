import { QueueEvents, type ConnectionOptions, type QueueEventsListener, type QueueOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * Entries every queue's events stream is trimmed to (approximately: BullMQ
 * trims with XTRIM MAXLEN ~ as it adds and finishes jobs, and Redis drops
 * only whole stream nodes of at most 100 entries, so a few more may stay).
 *
 * BullMQ writes a job's whole result into its `completed` entry, so whatever
 * the stream keeps is a copy of recent results, kept until later entries push
 * it out, in a Redis that runs `noeviction`: BullMQ's default of 10,000
 * entries could hold gigabytes of 1 MB pages. A job leaves four entries
 * (added, waiting, active, completed), at least two of them after it starts,
 * so 32 entries hold about 8 results and never more than 16 (16 MiB at
 * RESULT_MAX_BYTES). Every listener here (the gateway's QueueHub, service to
 * service calls) reads everything new in one blocking XREAD per wake-up,
 * milliseconds apart, so it falls 32 entries behind only when its process
 * stalls; then the waiter reads the job itself
 * (`EventStreamCursor.missedSince`), which keeps its result until it is
 * delivered.
 */
export const EVENT_STREAM_MAX_LEN = 32;

/**
 * The stream options of every Queue this code creates. BullMQ writes them
 * into the queue's meta hash each time a Queue starts, and the workers trim
 * by that hash: one Queue created without them puts back BullMQ's default of
 * 10,000 entries for every process.
 */
export const QUEUE_STREAMS = { events: { maxLen: EVENT_STREAM_MAX_LEN } } as const satisfies QueueOptions['streams'];

/** How often a waiter asks whether its listener missed entries of a trimmed stream (one tiny script per queue with waiters). */
export const MISSED_EVENTS_CHECK_MS = 250;

/** Every QueueEvents event read from the stream (all but errors and the connection's close): each carries its entry id. */
const STREAM_EVENTS: Record<Exclude<keyof QueueEventsListener, 'error' | 'ioredis:close'>, true> = {
  active: true,
  added: true,
  cleaned: true,
  completed: true,
  deduplicated: true,
  delayed: true,
  drained: true,
  duplicated: true,
  failed: true,
  paused: true,
  progress: true,
  removed: true,
  resumed: true,
  'retries-exhausted': true,
  stalled: true,
  waiting: true,
  'waiting-children': true,
};

/** The last entry id of a stream, without the entry (a completed entry may be a megabyte); '' when it has none. */
const LAST_ID = `local r = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
return r[1] and r[1][1] or ''`;

/** The first (oldest) entry id of a stream, without the entry; '' when it has none. Trimming only ever moves it forward. */
const FIRST_ID = `local r = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
return r[1] and r[1][1] or ''`;

/** The id of a stream's newest entry, '0-0' when it has none: where a QueueEvents that must miss nothing from now on starts reading. */
export async function lastEventId(redis: Redis, streamKey: string): Promise<string> {
  return ((await redis.eval(LAST_ID, 1, streamKey)) as string) || '0-0';
}

/** Orders two stream entry ids (`<ms>-<seq>`). */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** One look at the stream: how far the listener had read, then the stream's oldest entry ('' when it has none). */
interface StreamLook {
  readUpTo: string;
  firstId: string;
}

/**
 * How far a QueueEvents has read its stream, so that a waiter can tell
 * whether an entry it waits for may have been trimmed before the listener
 * read it. Such an entry is newer than what the listener had read when the
 * waiter last looked (`mark`), and trimming drops the oldest entries first,
 * so the stream's oldest entry is now newer than the mark. The check is
 * conservative: when more entries than the stream keeps arrive between two
 * looks, it says "maybe" though the listener kept up, and the waiter reads
 * its job for nothing.
 */
export class EventStreamCursor {
  private last: string;
  private look: { at: number; result: Promise<StreamLook> } | undefined;

  /** `startId`: the lastEventId the QueueEvents was created with. */
  constructor(
    readonly events: QueueEvents,
    private readonly redis: Redis,
    readonly streamKey: string,
    startId: string,
  ) {
    this.last = startId;
    const advance = (...args: unknown[]) => {
      const id = args[args.length - 1];
      if (typeof id === 'string' && compareStreamIds(id, this.last) > 0) this.last = id;
    };
    for (const name of Object.keys(STREAM_EVENTS) as Array<keyof typeof STREAM_EVENTS>) events.on(name, advance);
  }

  /** The id of the last entry the listener delivered: a waiter's first mark. */
  get lastId(): string {
    return this.last;
  }

  /**
   * Whether an entry after `mark` may have been trimmed before the listener
   * read it, and the mark for the next check. One look at Redis serves every
   * waiter of the queue for MISSED_EVENTS_CHECK_MS.
   */
  async missedSince(mark: string): Promise<{ missed: boolean; next: string }> {
    if (!this.look || Date.now() - this.look.at >= MISSED_EVENTS_CHECK_MS) {
      // How far the listener had read is taken before Redis is asked: an entry it skipped up to there was trimmed before the question.
      const readUpTo = this.last;
      const result = (this.redis.eval(FIRST_ID, 1, this.streamKey) as Promise<string>).then((firstId) => ({ readUpTo, firstId }));
      this.look = { at: Date.now(), result };
      result.catch(() => {
        if (this.look?.result === result) this.look = undefined; // asked again at the next check
      });
    }
    const { readUpTo, firstId } = await this.look.result;
    return { missed: firstId === '' || compareStreamIds(firstId, mark) > 0, next: compareStreamIds(readUpTo, mark) > 0 ? readUpTo : mark };
  }
}

/**
 * A QueueEvents on `name` with its cursor: every entry added from the time
 * this resolves on is delivered, or known to be missed. It reads from the
 * stream's current end, as `redis` sees it; while `redis` is still connecting
 * it starts where BullMQ does ('$'), and its cursor from nothing, so until the
 * first entry arrives every check counts as a possible miss (the job is read).
 * Errors are left to the connection's reconnects.
 */
export async function listenToQueue(name: string, opts: { redis: Redis; connection: ConnectionOptions; prefix: string }): Promise<EventStreamCursor> {
  const streamKey = `${opts.prefix}:${name}:events`;
  const startId = opts.redis.status === 'ready' ? await lastEventId(opts.redis, streamKey) : undefined;
  const events = new QueueEvents(name, { connection: opts.connection, prefix: opts.prefix, ...(startId ? { lastEventId: startId } : {}) });
  events.on('error', () => {});
  const cursor = new EventStreamCursor(events, opts.redis, streamKey, startId ?? '0-0');
  try {
    await events.waitUntilReady();
  } catch (err) {
    await closeQueueEvents(events).catch(() => {});
    throw err;
  }
  return cursor;
}

/**
 * Closes a QueueEvents, also while Redis is away. BullMQ's close() disconnects
 * and waits for the client's 'end' event, but ioredis never emits it for a
 * client disconnected while it waits between reconnect attempts (ioredis
 * issue #1247): the pending attempt is cancelled and no socket is left to
 * close. A process stopping during a Redis outage then hung for good. Such a
 * client is ended here the way ioredis ends one whose socket closed while it
 * was closing by hand: status 'end', queued commands rejected.
 */
export async function closeQueueEvents(events: QueueEvents): Promise<void> {
  const client = (await events.backend.client) as unknown as Redis;
  if (client.status === 'reconnecting') {
    client.disconnect();
    const internals = client as unknown as { setStatus(status: 'end'): void; flushQueue(error: Error): void };
    internals.setStatus('end');
    internals.flushQueue(new Error('Connection is closed.'));
  }
  await events.close();
}
