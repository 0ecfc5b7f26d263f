/**
 * @vouch/vision-router — the visual evidence ladder over scoped media:
 * resolve the image from the caller's scope, plan the evidence the request
 * needs by modality, then observation → OCR → auxiliary vision, stopping
 * once the need is met, with every stage's reason, timing and tool recorded.
 */
export { visionRouterEnvSchema, type VisionRouterEnv } from './config.js';
export { MODALITY_CUES, deriveNeed, planEvidence, type PlanRequest } from './domain/plan-evidence.js';
export { OCR_MIN_CONFIDENCE, TEXT_LIKELY, assessCoverage, ocrConfident, textLikely, type Coverage, type LadderEvidence } from './domain/assess-coverage.js';
export { runLadder, type LadderOutcome, type StageResult, type StageRunners } from './domain/run-ladder.js';
export { summarizeEvidence, unresolvedItems } from './domain/summarize-evidence.js';
export { chooseImageQuestion, competingImages } from './domain/choose-image.js';
export { EVIDENCE_VERSION, needKey } from './domain/need-key.js';
export { auxiliaryPrompt } from './domain/auxiliary-prompt.js';
export { estimateTextLikelihood } from './domain/text-likelihood.js';
