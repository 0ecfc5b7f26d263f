import { z } from 'zod';
import { describeOllamaFailure, ollamaCall, redactHost, type Logger, type OllamaStage } from '@vouch/platform';
import type { CardState } from './domain/replay-board.js';

/**
 * The built-in verifier's optional second opinion: one structured-output
 * chat call to Ollama. It may turn an approval into a request for changes,
 * and it may show a requirement the rules did not see, but only by quoting
 * an evidence item's own words, which the judge checks (verify-card.ts). It never
 * throws: a timeout, an error or an answer off the schema leaves the rule
 * result standing, with a note saying why. The note reaches the review's
 * answer, so it names what happened in public words only; the host and the
 * driver's message go to the log.
 */
export interface LlmOpinion {
  ran: boolean;
  model?: string;
  decision?: 'approve' | 'request_changes';
  reasons?: string[];
  missing?: string[];
  /** Per requirement: whether the model finds it shown, and by which item's own words. */
  requirements?: RequirementQuote[];
  note?: string;
}

/** The model's word on one requirement: shown by an item, in a quote of it. The judge checks the quote before it counts. */
export interface RequirementQuote {
  requirementId: string;
  shown: boolean;
  evidenceId?: string | undefined;
  quote?: string | undefined;
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
  requirements: z
    .array(z.object({ requirementId: z.string().max(40), shown: z.boolean(), evidenceId: z.string().max(40).optional(), quote: z.string().max(500).optional() }))
    .max(50)
    .default([]),
});

export function verifierPrompt(card: CardState): { system: string; user: string } {
  const system =
    'You verify one work card. Decide from the evidence only. approve only when the evidence shows every requirement was met; ' +
    'otherwise request_changes and list, in missing, each piece of evidence still needed. For each requirement (or "title" when none is stated), say in requirements ' +
    'whether an evidence item shows it, naming the item (evidenceId) and quoting its exact words (quote) that carry the requirement\'s identifiers and numbers. ' +
    'A quote that is not in the item, or leaves them out, does not count. What the worker says it covers is not evidence. ' +
    'Answer JSON {"decision","reasons","missing","requirements":[{"requirementId","shown","evidenceId","quote"}]}.';
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
  const safeHost = redactHost(host);
  const stage: OllamaStage = { role: 'verifier model', model, timeoutMs, timeoutVariable: 'BOARD_VERIFIER_TIMEOUT_MS', modelVariable: 'BOARD_VERIFIER_MODEL' };
  const standing = (what: string) => `${what}: the rule result stands`;
  return {
    configured: true,
    model,
    async review(card) {
      const call = ollamaCall(host, timeoutMs);
      const prompt = verifierPrompt(card);
      try {
        const response = await call.client.chat({
          model,
          messages: [
            { role: 'system', content: prompt.system },
            { role: 'user', content: prompt.user },
          ],
          format: z.toJSONSchema(VerdictSchema) as Record<string, unknown>,
          stream: false,
          options: { temperature: 0 },
        });
        const content = (response as { message?: { content?: unknown } } | undefined)?.message?.content;
        if (typeof content !== 'string') {
          opts.logger?.warn({ card: card.id, model, ollama: safeHost }, 'LLM verifier answer has no message content');
          return { ran: true, model, note: standing(describeOllamaFailure({ kind: 'malformed' }, stage)) };
        }
        let json: unknown;
        try {
          json = JSON.parse(content);
        } catch {
          return { ran: true, model, note: standing('the verifier model answered with something other than JSON') };
        }
        const verdict = VerdictSchema.safeParse(json);
        if (!verdict.success) return { ran: true, model, note: standing('the verifier model\'s answer did not fit the verdict schema') };
        return { ran: true, model, decision: verdict.data.decision, reasons: verdict.data.reasons, missing: verdict.data.missing, requirements: verdict.data.requirements };
      } catch (err) {
        const failure = call.failure(err);
        opts.logger?.warn({ err, card: card.id, model, ollama: safeHost, failure: failure.kind }, 'LLM verifier failed; the rule result stands');
        return { ran: true, model, note: standing(describeOllamaFailure(failure, stage)) };
      }
    },
  };
}
