import { createLogger, parseConfig } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestPrefix, useTestSchema } from '@vouch/testing';
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
export interface BoardServiceUnderTest {
  service: RunningBoardDispatcher;
  env: BoardDispatcherEnv;
  prefix: string;
  schema: string;
  stop(): Promise<void>;
}

export async function startBoardServiceUnderTest(
  label: string,
  vars: Record<string, string> = {},
  shared: { prefix?: string; schema?: string } = {},
  overrides: BoardDispatcherOverrides = {},
): Promise<BoardServiceUnderTest> {
  const prefix = shared.prefix ? undefined : await useTestPrefix(label);
  const schema = shared.schema ? undefined : await useTestSchema(label);
  const env = parseConfig(boardDispatcherEnvSchema, {
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: shared.prefix ?? prefix!.prefix,
    DB_SCHEMA: shared.schema ?? schema!.schema,
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
    SHUTDOWN_GRACE_MS: '2000',
    WORKER_CONCURRENCY: '16',
    ...FAST_TIMINGS,
    ...vars,
  });
  const service = await startBoardDispatcher(env, { logger: createLogger({ service: 'board-dispatcher', level: env.LOG_LEVEL }), ...overrides });
  return {
    service,
    env,
    prefix: env.BULLMQ_PREFIX,
    schema: env.DB_SCHEMA!,
    async stop() {
      await service.stop();
      await prefix?.cleanup();
      await schema?.cleanup();
    },
  };
}
