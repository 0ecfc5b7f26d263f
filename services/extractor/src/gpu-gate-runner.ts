import { execFile } from 'node:child_process';
import { Ollama } from 'ollama';
import { classifyOllamaFailure, describeOllamaFailure, redactUrl, type Logger, type OllamaStage } from '@vouch/platform';
import {
  evaluateModelPlacement,
  evaluateStaticGate,
  parseGpuQuery,
  type GateStage,
  type GpuClassMinimum,
  type GpuDevice,
} from './domain/gpu-gate.js';

/** The nvidia-smi query the gate runs: the exact command of the H200 capture (smi-query.csv). */
export const GPU_QUERY_ARGS = ['--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current', '--format=csv'] as const;

export interface GateConfig {
  approved: readonly string[];
  cudaVisibleDevices: string | undefined;
  minimum: GpuClassMinimum;
  nvidiaSmi: string;
  nvidiaSmiTimeoutMs: number;
  /** Without an Ollama the gate stops after the static checks (the harness's pre-flight). */
  ollama?: { host: string; model: string; timeoutMs: number };
  /** Where a failed model load's details (address, driver message) go; the gate's reason holds neither. */
  logger?: Logger;
}

export type GateResult =
  | { ok: true; devices: GpuDevice[]; gpuUuid: string; model?: { name: string; digest: string } }
  | { ok: false; stage: GateStage; reason: string };

/** Runs nvidia-smi; a missing, failing or slow command is a precise reason, never an exception. */
export function queryGpus(path: string, timeoutMs: number): Promise<{ ok: true; devices: GpuDevice[] } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    execFile(path, [...GPU_QUERY_ARGS], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, env: process.env }, (err, stdout, stderr) => {
      if (err) {
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string };
        if (e.code === 'ENOENT') return resolve({ ok: false, reason: `nvidia-smi not found at ${path} (NVIDIA_SMI): no NVIDIA driver tools on this node` });
        if (e.code === 'EACCES') return resolve({ ok: false, reason: `nvidia-smi at ${path} is not executable` });
        if (e.killed || e.signal === 'SIGKILL') return resolve({ ok: false, reason: `nvidia-smi did not answer within ${timeoutMs} ms (NVIDIA_SMI_TIMEOUT_MS): the driver is hung or the node is overloaded` });
        const said = `${String(stdout).trim()} ${String(stderr).trim()}`.trim().slice(0, 300);
        return resolve({ ok: false, reason: `nvidia-smi failed (exit ${String(e.code)})${said ? `: ${said}` : ''}` });
      }
      try {
        resolve({ ok: true, devices: parseGpuQuery(String(stdout)) });
      } catch (parseErr) {
        resolve({ ok: false, reason: `nvidia-smi printed what the gate cannot read: ${(parseErr as Error).message}` });
      }
    });
  });
}

/**
 * The whole gate, in order: the static checks (allowlist, nvidia-smi, the
 * Ollama service's CUDA_VISIBLE_DEVICES, class minimum, MIG), then a warm-up
 * load of the model (no generation) and /api/ps: the model must be entirely
 * in GPU memory before the first generation.
 */
export async function runGpuGate(config: GateConfig): Promise<GateResult> {
  const smi = await queryGpus(config.nvidiaSmi, config.nvidiaSmiTimeoutMs);
  const verdict = evaluateStaticGate({ approved: config.approved, cudaVisibleDevices: config.cudaVisibleDevices, minimum: config.minimum, smi });
  if (!verdict.ok) return verdict;
  const gpuUuid = verdict.devices[0]!.uuid;
  if (!config.ollama) return { ok: true, devices: verdict.devices, gpuUuid };

  const { host, model, timeoutMs } = config.ollama;
  const deadline = AbortSignal.timeout(timeoutMs);
  const client = new Ollama({ host, fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline }) });
  try {
    // Empty messages load the model without generating (done_reason "load").
    await client.chat({ model, messages: [], stream: false });
    const ps = await client.ps();
    const placement = evaluateModelPlacement(
      model,
      ps.models.map((m) => ({ name: m.name, size: Number(m.size), sizeVram: Number(m.size_vram) })),
    );
    if (!placement.ok) return placement;
    const entry = ps.models.find((m) => m.name === model || m.name === `${model}:latest` || m.model === model);
    return { ok: true, devices: verdict.devices, gpuUuid, model: { name: model, digest: entry?.digest ?? 'unknown' } };
  } catch (err) {
    // The reason reaches /readyz: it says what happened in public words; the address and the driver's message go to the log.
    const failure = classifyOllamaFailure(err, { timedOut: deadline.aborted });
    const stage: OllamaStage = { role: 'extraction model', model, timeoutMs, timeoutVariable: 'EXTRACTOR_LLM_TIMEOUT_MS', modelVariable: 'EXTRACTOR_MODEL' };
    config.logger?.warn({ err, model, ollama: redactUrl(host), failure: failure.kind }, 'loading the extraction model for the GPU gate failed');
    return { ok: false, stage: 'model_placement', reason: `loading ${model} failed: ${describeOllamaFailure(failure, stage)}` };
  }
}
