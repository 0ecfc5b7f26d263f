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
export { VISION_ROUTER_SERVICE, VISION_ROUTER_VERSION, MIGRATIONS_DIR, startVisionRouter, type RunningVisionRouter, type VisionRouterOverrides } from './vision-router-service.js';
export { createVisionCommands, visionHandlers, type VisionCaller, type VisionCommands, type VisionDeps } from './vision-handlers.js';
export { nativeCopy, observeImage } from './observe-image.js';
export { OCR_LANG_PATH, OCR_TOOL, OcrPool, OcrUnavailable, type OcrPoolOptions } from './ocr-pool.js';
export { readText } from './read-text.js';
export { createAuxiliaryVision, type AuxiliaryOutcome, type AuxiliaryVision, type AuxiliaryVisionOptions } from './auxiliary-vision.js';
export { createVisionMetrics, type VisionMetrics } from './metrics.js';
export { cacheEvidence, cachedEvidence, countPackets, pruneOldEvidence, packetById, packetByJob, packetIdFor, savePacket } from './packet-store.js';
