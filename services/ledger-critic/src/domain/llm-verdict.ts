import { CritiqueDecisionSchema, type CompletionClaim, type CompletionEvidence, type LlmClaimJudgement, type MissingEvidence } from '@vouch/contracts';
import { z } from 'zod';
import { stricterDecision } from './combine-verdicts.js';
import type { CritiqueVerdict } from './rule-critic.js';

/**
 * The structured answer asked of the LLM critic (Ollama `format`). The model's
 * JSON arrives as a string and is validated here; an answer that does not fit
 * is not used, and the rule verdict stands.
 *
 * Besides its decision, the model judges each material claim against the
 * evidence listed for it: `entails` (quoting the words of one observation
 * that state the fact), `contradicts` (quoting the words that say it is
 * false, failed or not done) or `unrelated`. It may only tighten: a claim it
 * does not find entailed, or whose quote is not in the cited observation, is
 * held; nothing it says approves what the rule floor held.
 */
export const LlmClaimVerdictSchema = z.object({
  claimId: z.string().max(100),
  verdict: z.enum(['entails', 'contradicts', 'unrelated']),
  evidenceId: z.string().max(100).optional(),
  quote: z.string().max(500).optional(),
});

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
  claims: z.array(LlmClaimVerdictSchema).max(200).optional(),
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

const squash = (text: string): string => text.toLowerCase().replace(/[\s"“”'‘’`]+/g, ' ').trim();

/** The model's claim judgements, each quote checked against the observation it cites. */
export function checkClaimJudgements(verdict: LlmVerdict, evidence: ReadonlyMap<string, CompletionEvidence>): LlmClaimJudgement[] {
  return (verdict.claims ?? []).map((c) => {
    const item = c.evidenceId === undefined ? undefined : evidence.get(c.evidenceId);
    const quoteFound = item !== undefined && c.quote !== undefined && squash(c.quote).length > 0 && squash(item.summary).includes(squash(c.quote));
    return { claimId: c.claimId, verdict: c.verdict, ...(c.evidenceId !== undefined ? { evidenceId: c.evidenceId } : {}), ...(c.quote !== undefined ? { quote: c.quote } : {}), quoteFound };
  });
}

/**
 * The LLM verdict in the critics' common shape. Its claim judgements tighten
 * it: a material claim the model finds contradicted, unrelated to the
 * evidence, or "entailed" by words that are not in the observation it cites,
 * makes the decision at least request_changes.
 */
export function toCritiqueVerdict(verdict: LlmVerdict, claims: readonly CompletionClaim[], judgements: readonly LlmClaimJudgement[] = []): CritiqueVerdict {
  const byId = new Map(claims.map((c) => [c.id, c]));
  const missingEvidence: MissingEvidence[] = verdict.missingEvidence.map((m) => {
    const claim = m.claimId === undefined ? undefined : byId.get(m.claimId);
    return { ...(m.claimId !== undefined && claim !== undefined ? { claimId: m.claimId, claimText: claim.text } : {}), need: m.need, features: [] };
  });
  const reasons = [...verdict.reasons];
  let decision = verdict.decision;
  for (const j of judgements) {
    const claim = byId.get(j.claimId);
    if (!claim || !claim.requiresEvidence) continue;
    const quoted = j.quote !== undefined && j.evidenceId !== undefined ? ` (${j.evidenceId}: "${j.quote}")` : '';
    let why: string | undefined;
    if (j.verdict === 'contradicts') why = `the evidence contradicts it${quoted}`;
    else if (j.verdict === 'unrelated') why = 'no listed observation states it';
    else if (!j.quoteFound) why = `the words quoted for it are not in ${j.evidenceId ?? 'any cited observation'}`;
    if (!why) continue;
    decision = stricterDecision(decision, 'request_changes');
    reasons.push(`"${claim.text}": ${why}`);
    missingEvidence.push({ claimId: claim.id, claimText: claim.text, need: `an observation that states it (${why})`, features: [] });
  }
  return { decision, reasons, missingEvidence };
}
