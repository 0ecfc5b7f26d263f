import { z } from 'zod';
import { MEDIA_MAX_BYTES, mediaBase64MaxLength } from '@vouch/contracts';
import { commonEnvSchema, portVar } from '@vouch/platform';
import { MAX_CONCURRENCY_BUDGET, MAX_RATE_BUDGET } from './key-budgets.js';

/** The gateway's environment. */
export const gatewayEnvSchema = commonEnvSchema.extend({
  PORT: portVar(8080),
  HOST: z.string().default('0.0.0.0'),
  /** Largest image accepted by media.register, in bytes. */
  MEDIA_MAX_BYTES: z.coerce.number().int().min(1_024).max(MEDIA_MAX_BYTES).default(MEDIA_MAX_BYTES),
  /** Lets operators pause, retry, clean and add jobs from /admin/queues; read-only by default. */
  DASHBOARD_WRITABLE: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((v) => v === 'true'),
  /**
   * Most pixels an image may decode to, all frames together: 50 M holds a
   * 48-megapixel phone photo and refuses a 10000×10000 decompression bomb.
   */
  MEDIA_MAX_PIXELS: z.coerce.number().int().min(1).max(268_402_689).default(50_000_000),
  /** Most frames (pages) an animated image may have. */
  MEDIA_MAX_FRAMES: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /**
   * Images decoded at once to check them. sharp decodes on libuv's thread
   * pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which DNS
   * lookups and file reads share: keep this below the pool's size.
   */
  MEDIA_DECODE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Bytes of request bodies the gateway holds at once; a large body past it
   * is refused 503 with Retry-After before it is read. At its peak a
   * registration holds about three times its body (the parsed string, the
   * decoded bytes, the Postgres message), so this bounds memory for uploads.
   * At least the largest body, or the largest image could never be sent.
   */
  BODY_BUDGET_BYTES: z.coerce
    .number()
    .int()
    .min(bodyLimitFor({ MEDIA_MAX_BYTES }), `must be at least the largest body, ${bodyLimitFor({ MEDIA_MAX_BYTES })} bytes, or the largest image could never be sent`)
    .default(64 * 1024 * 1024),
  /**
   * Bytes of request bodies one tenant may hold at once, out of
   * BODY_BUDGET_BYTES; past it its large body is refused 429 with
   * Retry-After, before it is read, while other tenants' bodies are still
   * admitted. Every admitted body is parsed, validated and serialized on the
   * gateway's one event loop, so this also bounds how much of that loop one
   * tenant's large bodies take at once. Unset: a quarter of the budget, and
   * at least the largest body.
   */
  BODY_BUDGET_TENANT_BYTES: z.coerce
    .number()
    .int()
    .min(bodyLimitFor({ MEDIA_MAX_BYTES }), `must be at least the largest body, ${bodyLimitFor({ MEDIA_MAX_BYTES })} bytes, or the largest image could never be sent`)
    .optional(),
  /**
   * board.claimCard requests of one tenant that may wait for work at once,
   * across every gateway replica (each holds an open request and a little
   * memory, no worker); past it a claim that would wait is refused 429.
   */
  BOARD_CLAIM_WAITS_PER_TENANT: z.coerce.number().int().min(1, 'must be at least 1').max(100_000, 'must be at most 100000').default(32),
  /**
   * A waiting claim tries again at least this often, announced work or not:
   * it finds work whose announcement was lost (pub/sub delivers at most once).
   */
  BOARD_CLAIM_SAFETY_POLL_MS: z.coerce.number().int().min(100, 'must be at least 100 (milliseconds)').max(60_000, 'must be at most 60000 (milliseconds)').default(5_000),
  /**
   * Cost units (operation-costs.ts) one tenant may spend per rate window,
   * counted across every gateway in Redis; a key's `--rate` overrides it. The
   * default is about ten seconds of service work a second, far above what one
   * agent's calls cost, so only a flood reaches it.
   */
  TENANT_RATE_BUDGET: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1 (cost units per window)')
    .max(MAX_RATE_BUDGET, `must be at most ${MAX_RATE_BUDGET} (cost units per window)`)
    .default(600_000),
  /** The rate window, in seconds: a tenant's spent budget comes back whole this long after its first charge in the window. */
  TENANT_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1, 'must be at least 1 (seconds)').max(86_400, 'must be at most 86400 (seconds, a day)').default(60),
  /**
   * Operations of one tenant in flight at once, across every gateway: from
   * admission until the answer (a job operation: until it is queued). A
   * key's `--concurrency` overrides it.
   */
  TENANT_CONCURRENCY_BUDGET: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1 (operations in flight)')
    .max(MAX_CONCURRENCY_BUDGET, `must be at most ${MAX_CONCURRENCY_BUDGET} (operations in flight)`)
    .default(128),
}).superRefine((env, ctx) => {
  if (env.BODY_BUDGET_TENANT_BYTES !== undefined && env.BODY_BUDGET_TENANT_BYTES > env.BODY_BUDGET_BYTES) {
    ctx.addIssue({ code: 'custom', path: ['BODY_BUDGET_TENANT_BYTES'], message: `must be at most BODY_BUDGET_BYTES (${env.BODY_BUDGET_BYTES}): one tenant's share of the body budget cannot be larger than the budget` });
  }
});
export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;

/** One tenant's share of the body budget: BODY_BUDGET_TENANT_BYTES, or a quarter of the budget and at least the largest body. */
export function tenantBodyShare(env: Pick<GatewayEnv, 'BODY_BUDGET_BYTES' | 'BODY_BUDGET_TENANT_BYTES' | 'MEDIA_MAX_BYTES'>): number {
  return env.BODY_BUDGET_TENANT_BYTES ?? Math.min(env.BODY_BUDGET_BYTES, Math.max(bodyLimitFor(env), Math.floor(env.BODY_BUDGET_BYTES / 4)));
}

/** A JSON body holds the image as base64, perhaps line-wrapped, plus a few fields. */
export function bodyLimitFor(env: { MEDIA_MAX_BYTES: number }): number {
  return mediaBase64MaxLength(env.MEDIA_MAX_BYTES) + 64 * 1024;
}
