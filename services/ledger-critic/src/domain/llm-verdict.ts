import { CritiqueDecisionSchema } from '@vouch/contracts';
import { z } from 'zod';
import type { CritiqueVerdict } from './rule-critic.js';

/**
 * The structured answer asked of the LLM critic (Ollama `format`). The model's
 * JSON arrives as a string and is validated here; an answer that does not fit
 * is not used, and the rule verdict stands.
 */
export const LlmVerdictSchema = z.object({
  decision: CritiqueDecisionSchema,
  reasons: z.array(z.string().max(1000)).max(20),
  missingEvidence: z
    .array(
      z.object({
        claimId: z.string().max(100).optional(),
        need: z.string().min(1).max(1000),
      }),
    )
    .max(50),
});
export type LlmVerdict = z.infer<typeof LlmVerdictSchema>;

/** JSON Schema of the answer, for Ollama's structured output. */
export function llmVerdictJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(LlmVerdictSchema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

export type ParsedLlmVerdict = { ok: true; verdict: LlmVerdict } | { ok: false; error: string };

/** Reads the model's message content. */
export function parseLlmVerdict(content: string): ParsedLlmVerdict {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    return { ok: false, error: `the critic model answered with text that is not JSON: ${content.slice(0, 120)}` };
  }
  const parsed = LlmVerdictSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, error: `the critic model's JSON does not fit the verdict schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  }
  return { ok: true, verdict: parsed.data };
}

/** The LLM verdict in the critics' common shape, naming the claims it cites. */
export function toCritiqueVerdict(verdict: LlmVerdict, claimTexts: ReadonlyMap<string, string>): CritiqueVerdict {
  return {
    decision: verdict.decision,
    reasons: verdict.reasons,
    missingEvidence: verdict.missingEvidence.map((m) => {
      const claimText = m.claimId === undefined ? undefined : claimTexts.get(m.claimId);
      return {
        ...(m.claimId !== undefined && claimText !== undefined ? { claimId: m.claimId, claimText } : {}),
        need: m.need,
        features: [],
      };
    }),
  };
}
