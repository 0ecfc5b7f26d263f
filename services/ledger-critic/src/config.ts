import { z } from 'zod';
import { DEFAULT_CYCLE_BUDGET, LEDGER_LIMITS } from '@vouch/contracts';
import { commonEnvSchema, portVar } from '@vouch/platform';

/** The ledger-critic's environment. */
export const ledgerCriticEnvSchema = commonEnvSchema.extend({
  HTTP_PORT: portVar(9104),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1, 'must be at least 1').max(64, 'must be at most 64').default(4),
  /**
   * The Ollama that runs the LLM critic. Unset: the rule critic decides alone
   * and every outcome says the LLM critic did not run. ollama-js reads no
   * environment itself and takes `http://host` without a port as port 80, so
   * the scheme and port are spelled out.
   */
  OLLAMA_HOST: z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/, error: 'must be the Ollama base URL with scheme and port, e.g. http://ollama:11434 (leave it unset to run the rule critic alone)' }))
    .optional(),
  LEDGER_CRITIC_MODEL: z.string().trim().min(1, 'must name an Ollama model, e.g. qwen2.5:7b-instruct').default('qwen2.5:7b-instruct'),
  /** ollama-js has no timeout of its own; past this the rule verdict stands and the outcome says why. */
  LEDGER_CRITIC_TIMEOUT_MS: z.coerce.number().int().min(100, 'must be at least 100').max(600_000, 'must be at most 600000 (10 minutes)').default(60_000),
  /** Reviews a ledger gets when ledger.open names no cycleBudget. */
  LEDGER_CYCLE_BUDGET: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(LEDGER_LIMITS.maxCycleBudget, `must be at most ${LEDGER_LIMITS.maxCycleBudget}`)
    .default(DEFAULT_CYCLE_BUDGET),
});
export type LedgerCriticEnv = z.infer<typeof ledgerCriticEnvSchema>;
