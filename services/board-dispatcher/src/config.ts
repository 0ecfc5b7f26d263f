import { z } from 'zod';
import { commonEnvSchema, portVar } from '@vouch/platform';

const ms = (what: string, min: number, max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(min, `must be at least ${min} (${what})`)
    .max(max, `must be at most ${max} (${what})`)
    .default(fallback);

/** The board-dispatcher's environment. */
export const boardDispatcherEnvSchema = commonEnvSchema.extend({
  HTTP_PORT: portVar(9103),
  /**
   * Jobs at once per replica. Board jobs are short Postgres work: a
   * board.claimCard looks once and answers, and its long-poll waits in the
   * gateway, never in a slot (claim-waits.ts there).
   */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1, 'must be at least 1').max(256, 'must be at most 256').default(64),
  /** This replica's name in the dispatcher lease; defaults to host, pid and a random suffix. */
  BOARD_INSTANCE_ID: z.string().trim().regex(/^[A-Za-z0-9._:-]{1,100}$/, 'must be 1-100 letters, digits, ".", "_", ":" or "-"').optional(),
  /** How long the dispatcher lease lasts unrenewed; the leader renews it every third of this. Failover takes at most about this long. */
  BOARD_LEASE_TTL_MS: ms('milliseconds', 500, 300_000, 10_000),
  /** How often the leader looks at every board with dispatchable cards, beside the boards it is notified about. */
  BOARD_DISPATCH_SWEEP_MS: ms('milliseconds', 50, 60_000, 1_000),
  /** How often the leader ends expired claims, relays the outbox, checks queued jobs still exist, and evaluates diagnostics. */
  BOARD_SWEEP_MS: ms('milliseconds', 50, 60_000, 2_000),
  /** An in-process board.claimCard wait (tests, the bench) looks for work at least this often; a queued claim never waits here. */
  BOARD_CLAIM_POLL_MS: ms('milliseconds', 20, 10_000, 1_000),
  /** An assignee that has not called board.claimCard for this long has no live consumer. */
  BOARD_CONSUMER_TTL_MS: ms('milliseconds', 1_000, 86_400_000, 60_000),
  /** A card waiting this long for an assignee with no live consumer is diagnosed as stranded. */
  BOARD_STRANDED_AFTER_MS: ms('milliseconds', 0, 86_400_000, 120_000),
  /** An unknown-card diagnostic that has not recurred for this long resolves. */
  BOARD_DIAGNOSTIC_QUIET_MS: ms('milliseconds', 1_000, 604_800_000, 3_600_000),
  /** An assignee's work queue unused this long is released: its Queue object closed and, once it holds no job, its Redis keys obliterated. */
  BOARD_WORK_QUEUE_IDLE_MS: ms('milliseconds', 100, 86_400_000, 600_000),
  /** The Ollama for the built-in verifier's second opinion; unset: the rule check decides alone. */
  OLLAMA_HOST: z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/, error: 'must be the Ollama base URL with scheme and port, e.g. http://ollama:11434 (leave it unset for the rule check alone)' }))
    .optional(),
  BOARD_VERIFIER_MODEL: z.string().trim().min(1, 'must name an Ollama model, e.g. qwen2.5:7b-instruct').default('qwen2.5:7b-instruct'),
  BOARD_VERIFIER_TIMEOUT_MS: ms('milliseconds', 100, 50_000, 20_000),
});
export type BoardDispatcherEnv = z.infer<typeof boardDispatcherEnvSchema>;
