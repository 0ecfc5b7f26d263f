import { z } from 'zod';
import { MEDIA_MAX_BYTES } from '@vouch/contracts';
import { commonEnvSchema, portVar } from '@vouch/platform';

/** The gateway's environment. */
export const gatewayEnvSchema = commonEnvSchema.extend({
  PORT: portVar(8080),
  HOST: z.string().default('0.0.0.0'),
  /** Largest image accepted by media.register, in bytes. */
  MEDIA_MAX_BYTES: z.coerce.number().int().min(1_024).max(MEDIA_MAX_BYTES).default(MEDIA_MAX_BYTES),
  /** Lets operators pause, retry, clean and add jobs from /admin/queues; read-only by default. */
  DASHBOARD_WRITABLE: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((v) => v === 'true'),
});
export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;

/** A JSON body holds the image as base64 (4/3 of its size) plus a few fields. */
export function bodyLimitFor(env: GatewayEnv): number {
  return Math.ceil(env.MEDIA_MAX_BYTES / 3) * 4 + 64 * 1024;
}
