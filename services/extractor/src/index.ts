/**
 * @vouch/extractor — artifact fidelity: file reads as canonical evidence
 * (hash, revision, range, fidelity, availability), explicit materialization,
 * capped search, branch extraction with verified anchors, and LLM extraction
 * only behind the GPU gate.
 */
export { extractorEnvSchema, type ExtractorEnv } from './config.js';
export { EXTRACTOR_SERVICE, EXTRACTOR_VERSION, MIGRATIONS_DIR, startExtractor, type ExtractorOverrides, type GateStatus, type RunningExtractor } from './extractor-service.js';
export { createExtractorCommands, cpuHandlers, gpuHandlers, type ExtractorCaller, type ExtractorCommands } from './extractor-handlers.js';
export { COMPUTE_APPS_ARGS, DEFAULT_KEEP_ALIVE, GPU_QUERY_ARGS, MIG_QUERY_ARGS, queryComputeApps, queryGpus, runGpuGate, type GateConfig, type GateOllama, type GateResult } from './gpu-gate-runner.js';
export { GpuGateFailure, createGenerationGate, type GenerationGate, type GenerationGateOptions, type ObservedPlacement } from './generation-gate.js';
export { createLlmExtractor } from './llm-extractor.js';
export { createDeterministicExtractor } from './deterministic-extractor.js';
export { BodyCache } from './body-cache.js';
export { createExtractorMetrics, type ExtractorMetrics } from './metrics.js';
export * from './domain/gpu-gate.js';
export * from './domain/gpu-class.js';
export * from './domain/partial-source.js';
export * from './domain/grep-pattern.js';
export * from './domain/extract-windows.js';
export { extractDeterministically, DETERMINISTIC_EXTRACTOR } from './domain/deterministic-extract.js';
