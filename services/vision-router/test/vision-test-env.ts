import { createLogger, parseConfig } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestSchema } from '@vouch/testing';
import { visionRouterEnvSchema, type VisionRouterEnv } from '../src/config.js';
import { startVisionRouter, type RunningVisionRouter, type VisionRouterOverrides } from '../src/vision-router-service.js';

/** The vision-router running in this process on a gateway-under-test's prefix, reading that gateway's media schema. */
export interface VisionServiceUnderTest {
  service: RunningVisionRouter;
  env: VisionRouterEnv;
  schema: string;
  stop(): Promise<void>;
}

export async function startVisionServiceUnderTest(
  label: string,
  gateway: { prefix: string; schema: string },
  vars: Record<string, string> = {},
  overrides: VisionRouterOverrides = {},
): Promise<VisionServiceUnderTest> {
  const schema = await useTestSchema(label);
  const env = parseConfig(visionRouterEnvSchema, {
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: gateway.prefix,
    DB_SCHEMA: schema.schema,
    GATEWAY_DB_SCHEMA: gateway.schema,
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
    SHUTDOWN_GRACE_MS: '5000',
    // One OCR worker and one job at a time: the machine is shared.
    OCR_WORKERS: '1',
    WORKER_CONCURRENCY: '1',
    ...vars,
  });
  const service = await startVisionRouter(env, { logger: createLogger({ service: 'vision-router', level: 'silent' }), ...overrides });
  return {
    service,
    env,
    schema: schema.schema,
    async stop() {
      await service.stop();
      await schema.cleanup();
    },
  };
}
