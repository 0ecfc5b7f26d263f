import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * The ledger's own metrics (docs/architecture.md, "Metrics"). The names are fixed: the
 * Prometheus rules and the Grafana dashboard in deploy/ query them.
 */
export interface LedgerMetrics {
  critiques: Counter<'decision'>;
  /** Reviews that closed their ledger, by the status they left (approved, incomplete_verification). */
  terminalStatus: Counter<'status'>;
  critiqueDuration: Histogram;
  /** Claims of each review, by their status after reconciliation. */
  claims: Counter<'status'>;
  /** One per review: ok, invalid (the answer did not fit the schema), timeout, error, or skipped (the LLM critic was not asked). */
  llmCriticCalls: Counter<'outcome'>;
}

export type LlmCriticOutcome = 'ok' | 'invalid' | 'timeout' | 'error' | 'skipped';

/** Registers the ledger metrics on a service's registry (the one its /metrics serves). */
export function createLedgerMetrics(registry: Registry): LedgerMetrics {
  return {
    critiques: new Counter({
      name: 'vouch_ledger_critiques_total',
      help: 'Completion reviews recorded, by combined decision.',
      labelNames: ['decision'] as const,
      registers: [registry],
    }),
    terminalStatus: new Counter({
      name: 'vouch_ledger_terminal_status_total',
      help: 'Ledgers closed by a review, by the terminal status it left; only approved means completed.',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    critiqueDuration: new Histogram({
      name: 'vouch_ledger_critique_duration_seconds',
      help: 'Time from loading a ledger to committing its review, the LLM critic included.',
      // Rule-only reviews take milliseconds; an LLM critic takes seconds, up to LEDGER_CRITIC_TIMEOUT_MS (60 s by default).
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    claims: new Counter({
      name: 'vouch_ledger_claims_total',
      help: 'Claims derived from completion attempts, by status after reconciliation with the evidence.',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    llmCriticCalls: new Counter({
      name: 'vouch_ledger_llm_critic_calls_total',
      help: 'LLM critic calls by outcome (ok, invalid, timeout, error), and reviews that did not ask it (skipped).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}
