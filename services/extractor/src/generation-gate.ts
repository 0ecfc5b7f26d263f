import { DependencyError } from '@vouch/contracts';
import { ollamaCall, type Logger } from '@vouch/platform';
import { evaluateComputeApps, evaluateModelPlacement, evaluateTokenRate, findLoaded, type GateFailure, type GateStage, type VisibleGpu } from './domain/gpu-gate.js';
import { queryComputeApps, type GateOllama } from './gpu-gate-runner.js';
import { keepAliveValue } from './keep-alive.js';

/**
 * A job stopped by the GPU gate. It fails as a dependency outage, so BullMQ
 * runs it again (artifact.extract's retries) on a worker whose gate holds;
 * its message is the caller's if the retries run out: public words, no
 * address, no driver text. The reason is on /readyz and in the log.
 */
export class GpuGateFailure extends DependencyError {
  constructor(
    readonly stage: GateStage,
    readonly reason: string,
  ) {
    super(`the GPU gate failed on the worker that took this job (${stage}): the job is retried on an approved GPU worker, and never answered from the CPU`);
    this.name = 'GpuGateFailure';
  }
}

/** What a job's generations ran on, as observed before them. */
export interface ObservedPlacement {
  /** The GPUs nvidia-smi shows Ollama's runner on (the extract records these, not the configured ones). */
  gpuUuids: string[];
  /** The model's digest as /api/ps reports it now. */
  digest: string;
}

/** The gate at every generation (see createGenerationGate). */
export interface GenerationGate {
  /** keep_alive for each generation request. */
  readonly keepAlive: string | number;
  /** Before a job's first generation; throws GpuGateFailure on a miss, an Ollama error as it came. */
  beforeJob(): Promise<ObservedPlacement>;
  /** After each generation, with Ollama's counters; throws GpuGateFailure below the floor. Returns the tokens per second. */
  afterGeneration(counters: { eval_count?: number | undefined; eval_duration?: number | undefined }): number;
}

export interface GenerationGateOptions {
  ollama: GateOllama;
  nvidiaSmi: string;
  nvidiaSmiTimeoutMs: number;
  approved: readonly string[];
  /** The Ollama service's CUDA_VISIBLE_DEVICES, as names. */
  declared: readonly string[];
  /** The devices the start-up gate passed: products do not change while the worker runs. */
  devices: readonly VisibleGpu[];
  minTokensPerSecond: number;
  /** Called with every miss before it is thrown: the service stops its GPU worker. */
  onFailure(failure: GateFailure): void;
  /** Each generation's speed, for the metrics. */
  onRate?(tokensPerSecond: number): void;
  logger?: Logger;
}

/**
 * The checks that can change between jobs, run at every job: the model is
 * resident and wholly in GPU memory (/api/ps; a model whose keep-alive ran
 * out is loaded again with an explicit keep_alive and checked again, since a
 * reload can land on the CPU), and nvidia-smi shows Ollama's runner on a
 * declared, approved GPU; then, after each generation, Ollama's own
 * tokens-per-second is above the floor for the GPU class. What cannot change
 * while the process runs (the products, the allowlist, the floor) comes from
 * the start-up gate and is not asked again.
 */
export function createGenerationGate(opts: GenerationGateOptions): GenerationGate {
  const { model, host, timeoutMs } = opts.ollama;
  const keepAlive = keepAliveValue(opts.ollama.keepAlive);
  const where = [...new Set(opts.devices.map((d) => `${d.name} (${d.product.architecture})`))].join(', ');
  const fail = (failure: GateFailure): never => {
    opts.onFailure(failure);
    throw new GpuGateFailure(failure.stage, failure.reason);
  };

  const residentEntry = async () => {
    const ps = await ollamaCall(host, timeoutMs).client.ps();
    return findLoaded(model, ps.models);
  };

  return {
    keepAlive,
    async beforeJob() {
      let entry = await residentEntry();
      if (!entry) {
        // Unloaded since the last job (its keep-alive ran out, or something evicted it): load it again, and look where it landed.
        opts.logger?.info({ model }, 'the extraction model is not resident: loading it again before the job');
        await ollamaCall(host, timeoutMs).client.chat({ model, messages: [], stream: false, keep_alive: keepAlive });
        entry = await residentEntry();
      }
      const placement = evaluateModelPlacement(model, entry ? [{ name: entry.name, size: Number(entry.size), sizeVram: Number(entry.size_vram) }] : []);
      if (!placement.ok) fail(placement);
      const apps = await queryComputeApps(opts.nvidiaSmi, opts.nvidiaSmiTimeoutMs, opts.logger);
      if (!apps.ok) return fail({ ok: false, stage: 'nvidia_smi', reason: apps.reason });
      const placed = evaluateComputeApps(model, apps.apps, { approved: opts.approved, declared: opts.declared });
      if (!placed.ok) return fail(placed);
      return { gpuUuids: placed.gpuUuids, digest: entry?.digest ?? 'unknown' };
    },
    afterGeneration(counters) {
      const rate = evaluateTokenRate({ evalCount: counters.eval_count, evalDurationNs: counters.eval_duration }, opts.minTokensPerSecond, where);
      if (!rate.ok) return fail(rate);
      opts.onRate?.(rate.tokensPerSecond);
      return rate.tokensPerSecond;
    },
  };
}
