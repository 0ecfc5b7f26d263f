import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Long synchronous work, written as a generator that yields between slices
 * (a few milliseconds each), so one job cannot hold a service's event loop:
 * every process runs all tenants' jobs on one loop, and a job that scans
 * 64 MB in one call makes every other job's next step wait for all of it.
 *
 * `runInSlices` gives the loop a turn (I/O, timers, other jobs' callbacks)
 * between slices; `runAtOnce` drains the same generator synchronously, for
 * pure tests and callers with nothing to share the loop with.
 */
export type Slices<T> = Generator<void, T, void>;

export async function runInSlices<T>(work: Slices<T>): Promise<T> {
  for (let step = work.next(); ; step = work.next()) {
    if (step.done) return step.value;
    await nextTurn();
  }
}

export function runAtOnce<T>(work: Slices<T>): T {
  for (let step = work.next(); ; step = work.next()) if (step.done) return step.value;
}
