import { Ollama } from 'ollama';
import { z } from 'zod';
import { redactUrl, type Logger } from '@vouch/platform';
import type { CardState } from './domain/replay-board.js';

/**
 * The built-in verifier's optional second opinion: one structured-output
 * chat call to Ollama, asked only after the rule check approved. It may turn
 * an approval into a request for changes, never the reverse. It never
 * throws: a timeout, an error or an answer off the schema leaves the rule
 * result standing, with a note saying why.
 */
export interface LlmOpinion {
  ran: boolean;
  model?: string;
  decision?: 'approve' | 'request_changes';
  reasons?: string[];
  missing?: string[];
  note?: string;
}

export interface LlmVerifier {
  readonly configured: boolean;
  readonly model: string;
  review(card: CardState): Promise<LlmOpinion>;
}

const VerdictSchema = z.object({
  decision: z.enum(['approve', 'request_changes']),
  reasons: z.array(z.string()).max(20),
  missing: z.array(z.string()).max(20).default([]),
});

export function verifierPrompt(card: CardState): { system: string; user: string } {
  const system =
    'You verify one work card. Decide from the evidence only. approve only when the evidence shows every requirement was met; ' +
    'otherwise request_changes and list, in missing, each piece of evidence still needed. Answer JSON {"decision","reasons","missing"}.';
  const user = [
    `Card ${card.id}: ${card.title}`,
    card.description && `Description: ${card.description}`,
    `Worker's summary: ${card.submission ?? '(none)'}`,
    'Requirements:',
    ...(card.evidenceRequirements.length ? card.evidenceRequirements.map((r) => `- ${r.id}: ${r.text}`) : ['- (none stated: the evidence must show the card is done)']),
    'Evidence:',
    ...card.evidence.map((e) => `- ${e.id} [${e.kind}${e.ref ? ` ${e.ref}` : ''}] ${e.summary}${e.covers.length ? ` (covers ${e.covers.join(', ')})` : ''}`),
  ]
    .filter(Boolean)
    .join('\n');
  return { system, user };
}

export function createLlmVerifier(opts: { host: string | undefined; model: string; timeoutMs: number; logger?: Logger }): LlmVerifier {
  const { host, model, timeoutMs } = opts;
  if (host === undefined) {
    return { configured: false, model, review: async () => ({ ran: false, note: 'OLLAMA_HOST is not set: the rule check decided alone' }) };
  }
  const safeHost = redactUrl(host).replace(/\/$/, '');
  return {
    configured: true,
    model,
    async review(card) {
      const deadline = AbortSignal.timeout(timeoutMs);
      const client = new Ollama({ host, fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline }) });
      const prompt = verifierPrompt(card);
      try {
        const response = await client.chat({
          model,
          messages: [
            { role: 'system', content: prompt.system },
            { role: 'user', content: prompt.user },
          ],
          format: z.toJSONSchema(VerdictSchema) as Record<string, unknown>,
          stream: false,
          options: { temperature: 0 },
        });
        let json: unknown;
        try {
          json = JSON.parse(response.message.content);
        } catch {
          return { ran: true, model, note: 'the verifier model answered with something other than JSON: the rule result stands' };
        }
        const verdict = VerdictSchema.safeParse(json);
        if (!verdict.success) return { ran: true, model, note: 'the verifier model\'s answer did not fit the verdict schema: the rule result stands' };
        return { ran: true, model, decision: verdict.data.decision, reasons: verdict.data.reasons, missing: verdict.data.missing };
      } catch (err) {
        const note = deadline.aborted
          ? `the verifier model did not answer within ${timeoutMs} ms (BOARD_VERIFIER_TIMEOUT_MS): the rule result stands`
          : `could not get an answer from Ollama at ${safeHost} (${err instanceof Error ? err.message : String(err)}): the rule result stands`;
        opts.logger?.warn({ err, card: card.id }, 'LLM verifier failed');
        return { ran: true, model, note };
      }
    },
  };
}
