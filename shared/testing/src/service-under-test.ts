import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestPrefix, useTestSchema } from './test-env.js';

/** A queue service running in the test's own process, on its own BullMQ prefix (or a shared one) and Postgres schema. */
export interface ServiceUnderTest<Env, Service> {
  service: Service;
  env: Env;
  prefix: string;
  schema: string;
  /** Stops the service, then drops the prefix and schema it was given (not shared ones). */
  stop(): Promise<void>;
}

export interface ServiceUnderTestOptions<Env, Service> {
  /** Names the prefix and schema, so a leftover one says which test made it. */
  label: string;
  /** The service's config parser (parseConfig with its schema). */
  parse(vars: Record<string, string>): Env;
  start(env: Env): Promise<Service>;
  /** Variables over the defaults: the test Redis and Postgres, port 0, silent logs, a 2 s shutdown grace. */
  vars?: Record<string, string>;
  /** A prefix or schema another service under test uses, e.g. the gateway's prefix its jobs go through. */
  shared?: { prefix?: string | undefined; schema?: string | undefined } | undefined;
}

/** Starts a queue service as its tests run it; every service's start-under-test helper goes through here. */
export async function startServiceUnderTest<Env extends { BULLMQ_PREFIX: string }, Service extends { stop(): Promise<void> }>(
  opts: ServiceUnderTestOptions<Env, Service>,
): Promise<ServiceUnderTest<Env, Service>> {
  const ownPrefix = opts.shared?.prefix ? undefined : await useTestPrefix(opts.label);
  const ownSchema = opts.shared?.schema ? undefined : await useTestSchema(opts.label);
  const prefix = opts.shared?.prefix ?? ownPrefix!.prefix;
  const schema = opts.shared?.schema ?? ownSchema!.schema;
  const env = opts.parse({
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: prefix,
    DB_SCHEMA: schema,
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
    SHUTDOWN_GRACE_MS: '2000',
    ...opts.vars,
  });
  const service = await opts.start(env);
  return {
    service,
    env,
    prefix,
    schema,
    async stop() {
      await service.stop();
      await ownPrefix?.cleanup();
      await ownSchema?.cleanup();
    },
  };
}
