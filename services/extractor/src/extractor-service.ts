import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { QUEUES, operationsForQueue } from '@vouch/contracts';
import {
  QUEUE_STREAMS,
  consumerRedisOptions,
  startQueueService,
  startServiceWorker,
  type Logger,
  type PlatformMetrics,
  type RunningQueueService,
  type ServiceWorker,
} from '@vouch/platform';
import { BodyCache } from './body-cache.js';
import type { ExtractorEnv } from './config.js';
import { createDeterministicExtractor } from './deterministic-extractor.js';
import { declaredDevices, parseAllowlist, type GateFailure } from './domain/gpu-gate.js';
import { createExtractorCommands, cpuHandlers, gpuHandlers, type ExtractorCommands } from './extractor-handlers.js';
import { createGenerationGate } from './generation-gate.js';
import { runGpuGate } from './gpu-gate-runner.js';
import { createLlmExtractor } from './llm-extractor.js';
import { createExtractorMetrics, setGateState, type ExtractorMetrics } from './metrics.js';

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

/** Where the GPU gate stands in this process. */
export interface GateStatus {
  state: 'off' | 'pending' | 'passed' | 'failed';
  stage?: string;
  reason?: string;
  /** The GPU(s) nvidia-smi last showed Ollama's runner on (comma-separated when the model is split). */
  gpuUuid?: string;
  checkedAt?: string;
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
  const status: GateStatus = { state: env.EXTRACTOR_LLM_ENABLED ? 'pending' : 'off' };
  let built: { extractorMetrics: ExtractorMetrics; commands: ExtractorCommands } | undefined;
  let gpuWorker: ServiceWorker | undefined;
  let gpuQueue: Queue | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** A GPU worker stopped by a job's gate failure, while it finishes that job. */
  let retiring: Promise<unknown> | undefined;
  let stopping = false;
  let settle!: (s: GateStatus) => void;
  const settled = new Promise<GateStatus>((resolve) => (settle = resolve));

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
    extraChecks: env.EXTRACTOR_LLM_ENABLED
      ? [
          {
            name: 'gpu_gate',
            probe: async () => ({ ok: status.state === 'passed', detail: status.state === 'passed' ? `passed on ${status.gpuUuid}` : (status.reason ?? `gate ${status.state}`) }),
          },
        ]
      : [],
    async handlers({ pool, metrics }) {
      const extractorMetrics = createExtractorMetrics(metrics.registry);
      setGateState(extractorMetrics, status.state);
      const deterministic = createDeterministicExtractor(node);
      const commands = createExtractorCommands({ pool, metrics: extractorMetrics, bodies: new BodyCache(env.EXTRACTOR_BODY_CACHE_BYTES), deterministic, grepScanCapBytes: env.EXTRACTOR_GREP_SCAN_CAP_BYTES });
      built = { extractorMetrics, commands };
      return cpuHandlers(commands, deterministic);
    },
    // The GPU worker closes beside the CPU one, within the same grace: a stop takes one SHUTDOWN_GRACE_MS, not two.
    async onStopping() {
      stopping = true;
      clearTimeout(retryTimer);
      await gpuWorker?.close(env.SHUTDOWN_GRACE_MS);
    },
    async onStop() {
      await retiring;
      await gpuQueue?.close();
    },
  });
  if (!built) throw new Error('the extractor started without its handlers');
  const { extractorMetrics, commands } = built;
  const { logger } = running;

  const record = (result: { ok: true; gpuUuid?: string | undefined } | { ok: false; stage: string; reason: string }) => {
    status.checkedAt = new Date().toISOString();
    extractorMetrics.gpuGateChecks.inc({ outcome: result.ok ? 'passed' : 'failed', stage: result.ok ? 'none' : result.stage });
    if (result.ok) {
      Object.assign(status, { state: 'passed', gpuUuid: result.gpuUuid, stage: undefined, reason: undefined });
    } else {
      Object.assign(status, { state: 'failed', stage: result.stage, reason: `GPU gate failed at ${result.stage}: ${result.reason}` });
    }
    setGateState(extractorMetrics, status.state);
  };

  const approved = parseAllowlist(env.EXTRACTOR_APPROVED_GPU_UUIDS);
  const ollama = { host: env.OLLAMA_HOST!, model: env.EXTRACTOR_MODEL, timeoutMs: env.EXTRACTOR_LLM_TIMEOUT_MS, keepAlive: env.EXTRACTOR_KEEP_ALIVE };

  const retryGateLater = () => {
    clearTimeout(retryTimer);
    if (!stopping) retryTimer = setTimeout(() => void gateLoop().catch((err: unknown) => logger.error({ err }, 'GPU gate crashed')), env.EXTRACTOR_GATE_RETRY_MS);
  };

  /**
   * A job's generation gate failed: the job fails (GpuGateFailure, retried on
   * a worker whose gate holds), this worker stops taking jobs at once, and the
   * whole gate runs again later before it takes any.
   */
  const stopTakingJobs = (failure: GateFailure) => {
    if (stopping) return;
    record(failure);
    logger.error({ gate: status }, 'GPU gate failed during an extraction job: the LLM worker stops taking jobs; the job is retried elsewhere; no CPU fallback');
    const current = gpuWorker;
    gpuWorker = undefined;
    if (current) {
      // Synchronously marks the BullMQ worker closing, so it fetches no job after the failing one; the running job ends with its failure.
      void current.worker.close().catch(() => undefined);
      retiring = current.close(env.SHUTDOWN_GRACE_MS).catch((err: unknown) => logger.warn({ err }, 'closing the LLM worker after a gate failure failed'));
    }
    retryGateLater();
  };

  const gateLoop = async (): Promise<void> => {
    if (stopping || gpuWorker) return;
    const result = await runGpuGate({
      approved,
      cudaVisibleDevices: env.OLLAMA_CUDA_VISIBLE_DEVICES,
      minimum: { computeCapability: env.EXTRACTOR_GPU_MIN_COMPUTE, memoryGiB: env.EXTRACTOR_GPU_MIN_MEMORY_GIB },
      nvidiaSmi: env.NVIDIA_SMI,
      nvidiaSmiTimeoutMs: env.NVIDIA_SMI_TIMEOUT_MS,
      ollama,
      ...(env.EXTRACTOR_MIN_TOKENS_PER_SECOND !== undefined ? { minTokensPerSecond: env.EXTRACTOR_MIN_TOKENS_PER_SECOND } : {}),
      logger,
    });
    if (stopping) return;
    record(result);
    settle({ ...status });
    if (!result.ok) {
      logger.error({ gate: status }, 'GPU gate failed: the LLM worker takes no jobs (they stay queued); no CPU fallback');
      retryGateLater();
      return;
    }
    logger.info({ gpuUuids: result.gpuUuids, model: result.model, minTokensPerSecond: result.minTokensPerSecond }, 'GPU gate passed: starting the LLM worker');
    const gate = createGenerationGate({
      ollama,
      nvidiaSmi: env.NVIDIA_SMI,
      nvidiaSmiTimeoutMs: env.NVIDIA_SMI_TIMEOUT_MS,
      approved,
      declared: declaredDevices(env.OLLAMA_CUDA_VISIBLE_DEVICES ?? ''),
      devices: result.devices,
      minTokensPerSecond: result.minTokensPerSecond,
      onFailure: stopTakingJobs,
      onRate: (tokensPerSecond) => extractorMetrics.generationTokensPerSecond.observe(tokensPerSecond),
      logger,
    });
    const model = createLlmExtractor({
      host: env.OLLAMA_HOST!,
      model: env.EXTRACTOR_MODEL,
      node,
      timeoutMs: env.EXTRACTOR_LLM_TIMEOUT_MS,
      limits: { maxPromptChars: env.EXTRACTOR_MAX_PROMPT_CHARS, contextLines: 4, lineChars: 160, maxWindows: env.EXTRACTOR_MAX_WINDOWS },
      gate: {
        keepAlive: gate.keepAlive,
        afterGeneration: gate.afterGeneration,
        async beforeJob() {
          const observed = await gate.beforeJob();
          // A job that passed counts as a check, so the counter shows the gate working job by job.
          extractorMetrics.gpuGateChecks.inc({ outcome: 'passed', stage: 'none' });
          status.gpuUuid = observed.gpuUuids.join(',');
          return observed;
        },
      },
      metrics: extractorMetrics,
      logger,
      ...(overrides.onPrompt ? { onPrompt: overrides.onPrompt } : {}),
    });
    if (!gpuQueue) {
      gpuQueue = new Queue(QUEUES.extractorGpu, { connection: consumerRedisOptions(env.REDIS_URL, 'extractor:gpu-health'), prefix: env.BULLMQ_PREFIX, streams: QUEUE_STREAMS });
      gpuQueue.on('error', () => {}); // read for metrics only; the GPU worker logs an outage
      running.metrics.watchQueues([gpuQueue]);
    }
    gpuWorker = startServiceWorker({
      service: EXTRACTOR_SERVICE,
      version: EXTRACTOR_VERSION,
      queue: QUEUES.extractorGpu,
      operations: operationsForQueue(QUEUES.extractorGpu),
      handlers: gpuHandlers(commands, model),
      connection: consumerRedisOptions(env.REDIS_URL, 'extractor:gpu-worker'),
      prefix: env.BULLMQ_PREFIX,
      concurrency: env.EXTRACTOR_GPU_CONCURRENCY,
      logger,
      metrics: running.metrics,
      lockDuration: env.EXTRACTOR_LLM_LOCK_MS,
      ...(overrides.stalledInterval ? { stalledInterval: overrides.stalledInterval } : {}),
    });
  };

  if (env.EXTRACTOR_LLM_ENABLED) void gateLoop().catch((err: unknown) => logger.error({ err }, 'GPU gate crashed'));
  else settle({ ...status });

  return Object.assign(running, {
    extractorMetrics,
    commands,
    gate: () => ({ ...status }),
    gateSettled: () => settled,
    gpuWorker: () => gpuWorker,
  });
}
