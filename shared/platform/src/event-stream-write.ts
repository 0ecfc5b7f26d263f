import type { StreamStateCache } from './event-stream-cache.js';
import { StreamWriteConflict, type EventStreamStore, type ProcessedJobRecord, type StreamEvent, type StreamKey, type StreamState } from './event-stream-store.js';
import type { Logger } from './logger.js';
import { withTransaction, type Pool, type Queryable } from './postgres.js';

/** What a write decided: the events to append, the state they fold to, and the job's answer. */
export interface StreamDecision<Event, State, R> {
  events: readonly Event[];
  state: State;
  result: R;
}

/** A short random pause before deciding again, so writers that collided do not collide again in step. */
function backOff(tries: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * tries));
}

/**
 * Runs `attempt` until it does not lose a race: each StreamWriteConflict
 * (nothing was written) is retried after a short random pause, each try
 * reloading, up to `tries` tries; then `gaveUp` says what the caller should
 * do (usually a ConflictError: send the request again).
 */
export async function retryStreamConflicts<R>(tries: number, attempt: () => Promise<R>, gaveUp: (err: StreamWriteConflict, tries: number) => Error): Promise<R> {
  for (let t = 1; ; t++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof StreamWriteConflict)) throw err;
      if (t >= tries) throw gaveUp(err, t);
      await backOff(t);
    }
  }
}

export interface StreamJobWrite<Key extends StreamKey, Event extends StreamEvent, State extends StreamState, Head extends object, D extends StreamDecision<Event, State, unknown>> {
  pool: Pool;
  store: EventStreamStore<Key, Event, State, Head>;
  cache: StreamStateCache<Key, State>;
  logger?: Logger | undefined;
  key: Key;
  /** The job whose result the write records: a re-run of it (BullMQ runs jobs at least once) gets that result back. */
  job: { jobId: string; operation: string };
  /** Decides on the committed state (undefined: no such aggregate yet), in the write's transaction. */
  decide(tx: Queryable, current: State | undefined): Promise<D> | D;
  /**
   * Appends the decision with the job's record; store.append when absent. A
   * stream that writes more in the same transaction (a projection, a fence
   * check) does it here.
   */
  append?(tx: Queryable, decision: D, expectedVersion: number, processedJob: ProcessedJobRecord): Promise<{ snapshotDue: boolean }>;
  tries: number;
  gaveUp(err: StreamWriteConflict, tries: number): Error;
}

/**
 * One write job on one aggregate, exactly once: in one transaction it finds
 * the job's recorded result (a re-run returns it) or locks the head, brings
 * the state up to it (cache, or snapshot plus events), decides, and appends
 * at the version it read with the job's result. After COMMIT, and only then,
 * the new state is cached and a due snapshot written, outside the head lock:
 * written inside, a large snapshot held every other writer of the aggregate
 * behind it. A decision without events commits nothing and records nothing.
 */
export async function writeStreamJob<Key extends StreamKey, Event extends StreamEvent, State extends StreamState, Head extends object, D extends StreamDecision<Event, State, unknown>>(
  w: StreamJobWrite<Key, Event, State, Head, D>,
): Promise<D['result']> {
  const { pool, store, cache, key, job } = w;
  const freeze = store.spec.freeze ?? ((state: State) => state);
  return retryStreamConflicts(
    w.tries,
    async () => {
      const { result, state, applied, snapshotDue } = await withTransaction(pool, async (tx): Promise<{ result: D['result']; state?: State | undefined; applied?: readonly Event[]; snapshotDue?: boolean }> => {
        const { prior, head } = await store.lockHeadForJob(tx, key, job.jobId);
        if (prior !== undefined) return { result: prior as D['result'] };
        const current = await store.loadCommitted(tx, key, head, cache.get(key));
        const expectedVersion = current?.version ?? 0;
        const decision = await w.decide(tx, current);
        if (decision.events.length === 0) return { result: decision.result, state: current };
        const processedJob = { jobId: job.jobId, operation: job.operation, result: decision.result };
        const { snapshotDue } = w.append
          ? await w.append(tx, decision, expectedVersion, processedJob)
          : await store.append(tx, key, expectedVersion, decision.events, decision.state, { processedJob });
        return { result: decision.result, state: decision.state, applied: decision.events, snapshotDue };
      });
      if (!state) return result;
      // Only now, after COMMIT, is the state these events produce the aggregate's.
      const committed = applied ? freeze(state, applied, true) : state;
      cache.remember(key, committed);
      if (snapshotDue) await store.saveSnapshotAfterCommit(pool, key, committed, w.logger);
      return result;
    },
    w.gaveUp,
  );
}
