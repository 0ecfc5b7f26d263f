import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { QUEUES } from '@vouch/contracts';
import { startQueueService, type Logger, type PlatformMetrics, type RunningQueueService, type ServiceWorker } from '@vouch/platform';
import { BodyCache } from './body-cache.js';
import type { ExtractorEnv } from './config.js';
import { createDeterministicExtractor } from './deterministic-extractor.js';
import { createExtractorCommands, cpuHandlers, type ExtractorCommands } from './extractor-handlers.js';
import { createGpuWorkerGate, type GateStatus } from './gpu-worker-gate.js';
import { createExtractorMetrics, type ExtractorMetrics } from './metrics.js';

export type { GateStatus } from './gpu-worker-gate.js';

export const EXTRACTOR_SERVICE = 'extractor';
export const EXTRACTOR_VERSION = '0.1.0';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export interface ExtractorOverrides {
  logger?: Logger;
  metrics?: PlatformMetrics;
  lockDuration?: number;
  stalledInterval?: number;
  /** Called with the size of each LLM prompt (the harness reports the largest). */
  onPrompt?: (chars: number) => void;
}

export interface RunningExtractor extends RunningQueueService {
  extractorMetrics: ExtractorMetrics;
  commands: ExtractorCommands;
  gate(): GateStatus;
  /** Resolves once the gate has been run at least once (immediately when the LLM worker is off). */
  gateSettled(): Promise<GateStatus>;
  /** The GPU worker while the gate holds; undefined before it passed and after a job's gate failure stopped it. */
  gpuWorker(): ServiceWorker | undefined;
}

/**
 * Starts the extractor: the CPU worker on `extractor` (read, materialize,
 * grep, deterministic extract) always; with EXTRACTOR_LLM_ENABLED, the GPU
 * worker on `extractor-gpu`, started only once the GPU gate passes. Until
 * then LLM jobs stay queued for an approved node, /readyz says why and the
 * gauge shows the gate state; a failed gate is checked again later, never
 * bypassed. Once started, the gate runs again at every job (the model's
 * placement, the GPU of Ollama's runner, each generation's speed): a miss
 * fails the job for a retry elsewhere and stops the worker until the whole
 * gate passes again.
 */
export async function startExtractor(env: ExtractorEnv, overrides: ExtractorOverrides = {}): Promise<RunningExtractor> {
  const node = env.EXTRACTOR_NODE_NAME ?? hostname();
  const running = await startQueueService({
    service: EXTRACTOR_SERVICE,
    version: EXTRACTOR_VERSION,
    queue: QUEUES.extractor,
    env,
    migrationsDir: MIGRATIONS_DIR,
    ...(overrides.logger ? { logger: overrides.logger } : {}),
    ...(overrides.metrics ? { metrics: overrides.metrics } : {}),
    ...(overrides.lockDuration ? { lockDuration: overrides.lockDuration } : {}),
    ...(overrides.stalledInterval ? { stalledInterval: overrides.stalledInterval } : {}),
    setup({ pool, metrics, logger }) {
      const extractorMetrics = createExtractorMetrics(metrics.registry);
      const deterministic = createDeterministicExtractor(node);
      const commands = createExtractorCommands({ pool, metrics: extractorMetrics, bodies: new BodyCache(env.EXTRACTOR_BODY_CACHE_BYTES), deterministic, grepScanCapBytes: env.EXTRACTOR_GREP_SCAN_CAP_BYTES });
      const gpu = createGpuWorkerGate({
        service: EXTRACTOR_SERVICE,
        version: EXTRACTOR_VERSION,
        env,
        node,
        commands,
        extractorMetrics,
        metrics,
        logger,
        ...(overrides.stalledInterval ? { stalledInterval: overrides.stalledInterval } : {}),
        ...(overrides.onPrompt ? { onPrompt: overrides.onPrompt } : {}),
      });
      return { handlers: cpuHandlers(commands, deterministic), extractorMetrics, commands, gpu };
    },
    extraChecks: ({ gpu }) => (env.EXTRACTOR_LLM_ENABLED ? [gpu.readiness] : []),
    // The GPU worker closes beside the CPU one, within the same grace: a stop takes one SHUTDOWN_GRACE_MS, not two.
    onStopping: ({ gpu }) => gpu.stop(),
    onStop: ({ gpu }) => gpu.close(),
  });
  // The gate runs once the CPU worker takes jobs.
  running.gpu.start();
  return Object.assign(running, {
    gate: () => running.gpu.status(),
    gateSettled: () => running.gpu.settled,
    gpuWorker: () => running.gpu.worker(),
  });
}
