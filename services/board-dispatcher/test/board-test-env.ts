import { createLogger, parseConfig } from '@vouch/platform';
import { startServiceUnderTest, type ServiceUnderTest } from '@vouch/testing';
import { startBoardDispatcher, type BoardDispatcherOverrides, type RunningBoardDispatcher } from '../src/board-dispatcher-service.js';
import { boardDispatcherEnvSchema, type BoardDispatcherEnv } from '../src/config.js';

/** Short timings, so leases, sweeps and diagnostics happen within a test. */
export const FAST_TIMINGS: Record<string, string> = {
  BOARD_LEASE_TTL_MS: '1500',
  BOARD_DISPATCH_SWEEP_MS: '200',
  BOARD_SWEEP_MS: '200',
  BOARD_CLAIM_POLL_MS: '100',
  BOARD_STRANDED_AFTER_MS: '600000',
};

/** The board-dispatcher running in this process on its own prefix (or a shared one) and schema. */
export type BoardServiceUnderTest = ServiceUnderTest<BoardDispatcherEnv, RunningBoardDispatcher>;

export async function startBoardServiceUnderTest(
  label: string,
  vars: Record<string, string> = {},
  shared: { prefix?: string; schema?: string } = {},
  overrides: BoardDispatcherOverrides = {},
): Promise<BoardServiceUnderTest> {
  return startServiceUnderTest({
    label,
    shared,
    vars: { WORKER_CONCURRENCY: '16', ...FAST_TIMINGS, ...vars },
    parse: (v) => parseConfig(boardDispatcherEnvSchema, v),
    start: (env) => startBoardDispatcher(env, { logger: createLogger({ service: 'board-dispatcher', level: env.LOG_LEVEL }), ...overrides }),
  });
}
