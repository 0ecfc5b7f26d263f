import { describeOllamaFailure, ollamaCall, redactHost, type Logger, type OllamaStage } from '@vouch/platform';
import type { CriticPrompt } from './domain/critic-packet.js';
import type { LlmCriticResult } from './domain/ledger-commands.js';
import { llmVerdictJsonSchema, parseLlmVerdict } from './domain/llm-verdict.js';
import type { LedgerMetrics, LlmCriticOutcome } from './metrics.js';

/**
 * The LLM critic: one structured-output chat call to Ollama per review. It
 * never throws. A timeout, an Ollama error or an answer that does not fit the
 * verdict schema comes back as `{ ran: true, error }`, the rule verdict
 * stands, and the outcome says why the model's answer was not used. That
 * `error` reaches the caller's answer, so it names what happened in public
 * words only; the host and the driver's message go to the log.
 */
export interface LlmCritic {
  /** Whether an Ollama is configured; without one the rule critic decides alone. */
  readonly configured: boolean;
  readonly model: string;
  review(prompt: CriticPrompt): Promise<LlmCriticResult>;
}

export interface LlmCriticOptions {
  /** The Ollama base URL (OLLAMA_HOST); undefined turns the LLM critic off. */
  host: string | undefined;
  model: string;
  timeoutMs: number;
  metrics: Pick<LedgerMetrics, 'llmCriticCalls'>;
  logger?: Logger;
}

const NOT_CONFIGURED = 'OLLAMA_HOST is not set: the LLM critic did not run and the rule critic decided alone';

export function createLlmCritic(opts: LlmCriticOptions): LlmCritic {
  const { host, model, timeoutMs, metrics } = opts;
  const count = (outcome: LlmCriticOutcome) => metrics.llmCriticCalls.inc({ outcome });
  if (host === undefined) {
    return {
      configured: false,
      model,
      async review() {
        return { ran: false, note: NOT_CONFIGURED };
      },
    };
  }
  const safeHost = redactHost(host);
  const stage: OllamaStage = { role: 'critic model', model, timeoutMs, timeoutVariable: 'LEDGER_CRITIC_TIMEOUT_MS', modelVariable: 'LEDGER_CRITIC_MODEL' };
  return {
    configured: true,
    model,
    async review(prompt) {
      const call = ollamaCall(host, timeoutMs);
      try {
        const response = await call.client.chat({
          model,
          messages: [
            { role: 'system', content: prompt.system },
            { role: 'user', content: prompt.user },
          ],
          format: llmVerdictJsonSchema(),
          stream: false,
          options: { temperature: 0 },
        });
        const content = (response as { message?: { content?: unknown } } | undefined)?.message?.content;
        if (typeof content !== 'string') {
          count('error');
          opts.logger?.warn({ model, ollama: safeHost }, 'LLM critic answer has no message content; the rule verdict stands');
          return { ran: true, model, error: describeOllamaFailure({ kind: 'malformed' }, stage) };
        }
        const parsed = parseLlmVerdict(content);
        if (!parsed.ok) {
          count('invalid');
          opts.logger?.warn({ model, error: parsed.error }, 'LLM critic answer not used');
          return { ran: true, model, error: parsed.error };
        }
        count('ok');
        return { ran: true, model, verdict: parsed.verdict };
      } catch (err) {
        const failure = call.failure(err);
        count(failure.kind === 'timeout' ? 'timeout' : 'error');
        opts.logger?.warn({ model, ollama: safeHost, err, failure: failure.kind }, 'LLM critic call failed; the rule verdict stands');
        return { ran: true, model, error: describeOllamaFailure(failure, stage) };
      }
    },
  };
}
