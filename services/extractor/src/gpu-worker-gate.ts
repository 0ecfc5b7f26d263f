import { Queue } from 'bullmq';
import { QUEUES, operationsForQueue } from '@vouch/contracts';
import { QUEUE_STREAMS, consumerRedisOptions, redisTarget, startServiceWorker, type Logger, type PlatformMetrics, type ReadinessCheck, type ServiceWorker } from '@vouch/platform';
import type { ExtractorEnv } from './config.js';
import { declaredDevices, parseAllowlist, type GateFailure } from './domain/gpu-gate.js';
import { gpuHandlers, type ExtractorCommands } from './extractor-handlers.js';
import { createGenerationGate } from './generation-gate.js';
import { runGpuGate } from './gpu-gate-runner.js';
import { createLlmExtractor } from './llm-extractor.js';
import { setGateState, type ExtractorMetrics } from './metrics.js';

/** Where the GPU gate stands in this process. */
export interface GateStatus {
  state: 'off' | 'pending' | 'passed' | 'failed';
  stage?: string;
  reason?: string;
  /** The GPU(s) nvidia-smi last showed Ollama's runner on (comma-separated when the model is split). */
  gpuUuid?: string;
  checkedAt?: string;
}

export interface GpuWorkerGateOptions {
  /** The service's name and version, as its CPU worker reports them (system.ping). */
  service: string;
  version: string;
  env: ExtractorEnv;
  /** The node name extraction results carry. */
  node: string;
  commands: ExtractorCommands;
  extractorMetrics: ExtractorMetrics;
  /** The service's platform metrics: the GPU worker's job metrics and its queue's depth. */
  metrics: PlatformMetrics;
  logger: Logger;
  stalledInterval?: number;
  /** Called with the size of each LLM prompt (the harness reports the largest). */
  onPrompt?: (chars: number) => void;
}

/**
 * The extractor's GPU worker behind its gate. The worker on `extractor-gpu`
 * starts only once the whole GPU gate passes (gpu-gate-runner.ts); until
 * then LLM jobs stay queued for an approved node, the readiness check says
 * why and the gauge shows the gate state. A failed gate is run again after
 * EXTRACTOR_GATE_RETRY_MS, never bypassed. Once started, the gate runs again
 * at every job (generation-gate.ts): a miss fails the job for a retry
 * elsewhere, stops the worker, and the whole gate must pass again before it
 * takes another job. Never a CPU fallback.
 */
export interface GpuWorkerGate {
  /** Where the gate stands now (a copy). */
  status(): GateStatus;
  /** Resolves once the gate has been run at least once (at `start` when the LLM worker is off). */
  readonly settled: Promise<GateStatus>;
  /** The GPU worker while the gate holds; undefined before it passed and after a job's gate failure stopped it. */
  worker(): ServiceWorker | undefined;
  /** /readyz's `gpu_gate` check: ready only while the gate holds. */
  readonly readiness: ReadinessCheck;
  /** Runs the gate (with EXTRACTOR_LLM_ENABLED), starting the worker once it passes. */
  start(): void;
  /** Runs no gate again and closes the GPU worker within SHUTDOWN_GRACE_MS: called beside the CPU worker's close. */
  stop(): Promise<void>;
  /** Once stopped: waits for a worker a gate failure retired, and closes the GPU queue the metrics read. */
  close(): Promise<void>;
}

export function createGpuWorkerGate(opts: GpuWorkerGateOptions): GpuWorkerGate {
  const { env, node, commands, extractorMetrics, metrics, logger } = opts;
  const status: GateStatus = { state: env.EXTRACTOR_LLM_ENABLED ? 'pending' : 'off' };
  setGateState(extractorMetrics, status.state);
  let gpuWorker: ServiceWorker | undefined;
  let gpuQueue: Queue | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** A GPU worker stopped by a job's gate failure, while it finishes that job. */
  let retiring: Promise<unknown> | undefined;
  let stopping = false;
  let settle!: (s: GateStatus) => void;
  const settled = new Promise<GateStatus>((resolve) => (settle = resolve));

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
      ...(opts.onPrompt ? { onPrompt: opts.onPrompt } : {}),
    });
    if (!gpuQueue) {
      gpuQueue = new Queue(QUEUES.extractorGpu, { connection: consumerRedisOptions(redisTarget(env), 'extractor:gpu-health'), prefix: env.BULLMQ_PREFIX, streams: QUEUE_STREAMS });
      gpuQueue.on('error', () => {}); // read for metrics only; the GPU worker logs an outage
      metrics.watchQueues([gpuQueue]);
    }
    gpuWorker = startServiceWorker({
      service: opts.service,
      version: opts.version,
      queue: QUEUES.extractorGpu,
      operations: operationsForQueue(QUEUES.extractorGpu),
      handlers: gpuHandlers(commands, model),
      connection: consumerRedisOptions(redisTarget(env), 'extractor:gpu-worker'),
      prefix: env.BULLMQ_PREFIX,
      concurrency: env.EXTRACTOR_GPU_CONCURRENCY,
      logger,
      metrics,
      lockDuration: env.EXTRACTOR_LLM_LOCK_MS,
      ...(opts.stalledInterval ? { stalledInterval: opts.stalledInterval } : {}),
    });
  };

  return {
    status: () => ({ ...status }),
    settled,
    worker: () => gpuWorker,
    readiness: {
      name: 'gpu_gate',
      probe: async () => ({ ok: status.state === 'passed', detail: status.state === 'passed' ? `passed on ${status.gpuUuid}` : (status.reason ?? `gate ${status.state}`) }),
    },
    start() {
      if (env.EXTRACTOR_LLM_ENABLED) void gateLoop().catch((err: unknown) => logger.error({ err }, 'GPU gate crashed'));
      else settle({ ...status });
    },
    async stop() {
      stopping = true;
      clearTimeout(retryTimer);
      await gpuWorker?.close(env.SHUTDOWN_GRACE_MS);
    },
    async close() {
      await retiring;
      await gpuQueue?.close();
    },
  };
}
