import { createHash } from 'node:crypto';
import type { EvidencePlan } from '@vouch/contracts';

/**
 * Bumped whenever planning, a stage or the packet changes meaning, so
 * evidence cached by an older version is not served as if current.
 */
export const EVIDENCE_VERSION = 1;

/**
 * The cache key of an evidence need: what the stages depend on (modalities,
 * detail, route, the stages chosen), never the prompt's wording, so two
 * phrasings of the same need share evidence. The image side of the key is
 * the content hash, kept with the tenant in the store.
 */
export function needKey(plan: EvidencePlan, auxiliaryModel: string | undefined): string {
  const canonical = JSON.stringify({
    v: EVIDENCE_VERSION,
    modalities: [...plan.need.modalities].sort(),
    detail: plan.requestedDetail,
    route: plan.route,
    stages: plan.stages.map((s) => `${s.kind}:${s.role}:${s.onlyIfTextLikely ? 1 : 0}`),
    runAll: plan.runAll,
    aux: auxiliaryModel ?? null,
  });
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}
