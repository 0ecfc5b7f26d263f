/**
 * @vouch/ledger-critic — the completion ledger service: a durable,
 * event-sourced claim/evidence ledger per run, a rule critic that sets the
 * floor, and an optional LLM critic (Ollama) that may only tighten it.
 */
export { ledgerCriticEnvSchema, type LedgerCriticEnv } from './config.js';
export { LEDGER_CRITIC_SERVICE, LEDGER_CRITIC_VERSION, MIGRATIONS_DIR, startLedgerCritic, type LedgerCriticOverrides, type RunningLedgerCritic } from './ledger-critic-service.js';
export { createLedgerCommands, ledgerHandlers, type LedgerCaller, type LedgerCommandDeps, type LedgerCommands } from './ledger-handlers.js';
export {
  SNAPSHOT_EVERY,
  appendEvents,
  ledgerStream,
  loadCommitted,
  loadLedger,
  loadSnapshot,
  readEvents,
  readHead,
  saveSnapshot,
  type LedgerHead,
  type LedgerKey,
} from './ledger-store.js';
export { LedgerCache, type LedgerCacheLimits } from './ledger-cache.js';
export { createLlmCritic, type LlmCritic, type LlmCriticOptions } from './llm-critic.js';
export { createLedgerMetrics, type LedgerMetrics, type LlmCriticOutcome } from './metrics.js';
export * from './domain/ledger-commands.js';
export { parseLedgerEvent, type LedgerEvent, type LedgerEventType } from './domain/ledger-events.js';
export { LedgerStreamError, applyEvent, applyEvents, replayLedger, toLedgerSnapshot, type LedgerState } from './domain/replay-ledger.js';
export { renderLedger, type RenderedLedger } from './domain/render-ledger.js';
export { buildCriticPrompt, type CriticPrompt } from './domain/critic-packet.js';
export { llmVerdictJsonSchema, parseLlmVerdict, type LlmVerdict } from './domain/llm-verdict.js';
