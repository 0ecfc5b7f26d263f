import { createLogger, parseConfig } from '@vouch/platform';
import { startServiceUnderTest, type ServiceUnderTest } from '@vouch/testing';
import { visionRouterEnvSchema, type VisionRouterEnv } from '../src/config.js';
import { startVisionRouter, type RunningVisionRouter, type VisionRouterOverrides } from '../src/vision-router-service.js';

/** The vision-router running in this process on a gateway-under-test's prefix, reading that gateway's media schema. */
export type VisionServiceUnderTest = ServiceUnderTest<VisionRouterEnv, RunningVisionRouter>;

export async function startVisionServiceUnderTest(
  label: string,
  gateway: { prefix: string; schema: string },
  vars: Record<string, string> = {},
  overrides: VisionRouterOverrides = {},
): Promise<VisionServiceUnderTest> {
  return startServiceUnderTest({
    label,
    shared: { prefix: gateway.prefix },
    vars: {
      GATEWAY_DB_SCHEMA: gateway.schema,
      SHUTDOWN_GRACE_MS: '5000',
      // One OCR worker and one job at a time: the machine is shared.
      OCR_WORKERS: '1',
      WORKER_CONCURRENCY: '1',
      ...vars,
    },
    parse: (v) => parseConfig(visionRouterEnvSchema, v),
    start: (env) => startVisionRouter(env, { logger: createLogger({ service: 'vision-router', level: 'silent' }), ...overrides }),
  });
}
