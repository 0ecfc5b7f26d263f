import { execFile } from 'node:child_process';
import { describeOllamaFailure, ollamaCall, redactHost, type Logger, type OllamaStage } from '@vouch/platform';
import {
  declaredDevices,
  evaluateComputeApps,
  evaluateModelPlacement,
  evaluateStaticGate,
  findLoaded,
  parseComputeApps,
  parseGpuQuery,
  tokenRateFloor,
  type ComputeApp,
  type GateStage,
  type GpuDevice,
  type VisibleGpu,
} from './domain/gpu-gate.js';
import type { GpuClassMinimum } from './domain/gpu-class.js';
import { keepAliveValue } from './keep-alive.js';

export { DEFAULT_KEEP_ALIVE } from './keep-alive.js';

/** The nvidia-smi device query the gate runs: the exact command of the H200 capture (smi-query.csv). */
export const GPU_QUERY_ARGS = ['--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current', '--format=csv'] as const;
/** MIG now and after the next GPU reset. */
export const MIG_QUERY_ARGS = ['--query-gpu=index,uuid,mig.mode.current,mig.mode.pending', '--format=csv'] as const;
/** The processes on the GPUs: the exact command of the H200 capture (smi-apps.csv). */
export const COMPUTE_APPS_ARGS = ['--query-compute-apps=pid,gpu_uuid,used_memory', '--format=csv'] as const;

/** Where the model is loaded from and how long Ollama keeps it. */
export interface GateOllama {
  host: string;
  model: string;
  timeoutMs: number;
  /** Sent with every load and generation (EXTRACTOR_KEEP_ALIVE), so the model is not unloaded between jobs. */
  keepAlive: string;
}

export interface GateConfig {
  approved: readonly string[];
  cudaVisibleDevices: string | undefined;
  minimum: GpuClassMinimum;
  nvidiaSmi: string;
  nvidiaSmiTimeoutMs: number;
  /** Without an Ollama the gate stops after the static checks (an operator's pre-flight). */
  ollama?: GateOllama;
  /** The generation-speed floor, when the operator overrides the GPU class's (EXTRACTOR_MIN_TOKENS_PER_SECOND). */
  minTokensPerSecond?: number;
  /** Where details the reason leaves out go: addresses, nvidia-smi's and Ollama's own words. */
  logger?: Logger;
}

export type GateResult =
  | {
      ok: true;
      /** The approved devices CUDA_VISIBLE_DEVICES names, with their products. */
      devices: VisibleGpu[];
      /** The GPU nvidia-smi shows Ollama's runner on after the warm-up load; absent when no model was checked. */
      gpuUuid?: string;
      /** Every GPU Ollama's runner is on (several when the model is split across GPUs). */
      gpuUuids: string[];
      model?: { name: string; digest: string };
      /** The least tokens per second a generation must show. */
      minTokensPerSecond: number;
    }
  | { ok: false; stage: GateStage; reason: string };

// nvidia-smi's documented exit codes (nvidia-smi(1), RETURN VALUE), in words the gate's reason may carry.
const SMI_EXIT: Record<number, string> = {
  2: 'it was given an argument it does not know (an nvidia-smi older than the gate expects)',
  3: 'the query is not available on this device',
  4: 'it may not read this device (permissions)',
  6: 'it found no such device',
  8: "a GPU's external power cables are not attached",
  9: 'the NVIDIA driver is not loaded',
  10: 'the kernel reported an interrupt problem with a GPU',
  12: 'the NVML library could not be found or loaded',
  13: 'the installed NVML does not implement the query',
  14: "a GPU's infoROM is corrupted",
  15: 'a GPU has fallen off the bus or is otherwise inaccessible',
  255: 'the driver reported an internal error',
};

type SmiOutput = { ok: true; stdout: string } | { ok: false; reason: string };

/**
 * Runs nvidia-smi; a missing, failing or slow command is a reason in the
 * gate's own words (it reaches /readyz), never an exception. What nvidia-smi
 * printed goes to the log only.
 */
export function runNvidiaSmi(path: string, args: readonly string[], timeoutMs: number, logger?: Logger): Promise<SmiOutput> {
  return new Promise((resolve) => {
    execFile(path, [...args], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, env: process.env }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, stdout: String(stdout) });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string };
      if (e.code === 'ENOENT') return resolve({ ok: false, reason: 'nvidia-smi not found at the path NVIDIA_SMI names: no NVIDIA driver tools on this node' });
      if (e.code === 'EACCES') return resolve({ ok: false, reason: 'nvidia-smi at the path NVIDIA_SMI names is not executable' });
      if (e.killed || e.signal === 'SIGKILL') return resolve({ ok: false, reason: `nvidia-smi did not answer within ${timeoutMs} ms (NVIDIA_SMI_TIMEOUT_MS): the driver is hung or the node is overloaded` });
      logger?.warn({ args, exit: e.code, stdout: String(stdout).slice(0, 2_000), stderr: String(stderr).slice(0, 2_000) }, 'nvidia-smi failed');
      const meaning = typeof e.code === 'number' ? SMI_EXIT[e.code] : undefined;
      return resolve({ ok: false, reason: `nvidia-smi failed (exit ${String(e.code)})${meaning ? `: ${meaning}` : ''}; its output is in the extractor's log` });
    });
  });
}

/** The node's GPUs: the device query and the MIG query, joined by UUID. */
export async function queryGpus(path: string, timeoutMs: number, logger?: Logger): Promise<{ ok: true; devices: GpuDevice[] } | { ok: false; reason: string }> {
  const devices = await runNvidiaSmi(path, GPU_QUERY_ARGS, timeoutMs, logger);
  if (!devices.ok) return devices;
  const mig = await runNvidiaSmi(path, MIG_QUERY_ARGS, timeoutMs, logger);
  if (!mig.ok) return mig;
  try {
    return { ok: true, devices: parseGpuQuery(devices.stdout, mig.stdout) };
  } catch (parseErr) {
    return { ok: false, reason: `nvidia-smi printed what the gate cannot read: ${(parseErr as Error).message}` };
  }
}

/** The processes on the node's GPUs. */
export async function queryComputeApps(path: string, timeoutMs: number, logger?: Logger): Promise<{ ok: true; apps: ComputeApp[] } | { ok: false; reason: string }> {
  const out = await runNvidiaSmi(path, COMPUTE_APPS_ARGS, timeoutMs, logger);
  if (!out.ok) return out;
  try {
    return { ok: true, apps: parseComputeApps(out.stdout) };
  } catch (parseErr) {
    return { ok: false, reason: `nvidia-smi printed what the gate cannot read: ${(parseErr as Error).message}` };
  }
}

/** The extraction model's stage, for failures in public words. */
export function extractionStage(model: string, timeoutMs: number): OllamaStage {
  return { role: 'extraction model', model, timeoutMs, timeoutVariable: 'EXTRACTOR_LLM_TIMEOUT_MS', modelVariable: 'EXTRACTOR_MODEL' };
}

/**
 * The whole gate, in order: the static checks (allowlist, nvidia-smi, the
 * Ollama service's CUDA_VISIBLE_DEVICES, product class, MIG now and pending),
 * then a warm-up load of the model (no generation, with the configured
 * keep_alive), /api/ps (the model entirely in GPU memory), and nvidia-smi's
 * compute apps (Ollama's runner on a declared, approved GPU) before the first
 * generation. The generation gate repeats the last three at every job.
 */
export async function runGpuGate(config: GateConfig): Promise<GateResult> {
  const smi = await queryGpus(config.nvidiaSmi, config.nvidiaSmiTimeoutMs, config.logger);
  const verdict = evaluateStaticGate({ approved: config.approved, cudaVisibleDevices: config.cudaVisibleDevices, minimum: config.minimum, smi });
  if (!verdict.ok) return verdict;
  const minTokensPerSecond = tokenRateFloor(verdict.devices, config.minTokensPerSecond);
  if (!config.ollama) return { ok: true, devices: verdict.devices, gpuUuids: [], minTokensPerSecond };

  const { host, model, timeoutMs, keepAlive } = config.ollama;
  const call = ollamaCall(host, timeoutMs);
  let digest: string;
  try {
    // Empty messages load the model without generating (done_reason "load").
    await call.client.chat({ model, messages: [], stream: false, keep_alive: keepAliveValue(keepAlive) });
    const ps = await call.client.ps();
    const placement = evaluateModelPlacement(
      model,
      ps.models.map((m) => ({ name: m.name, size: Number(m.size), sizeVram: Number(m.size_vram) })),
    );
    if (!placement.ok) return placement;
    digest = findLoaded(model, ps.models)?.digest ?? 'unknown';
  } catch (err) {
    // The reason reaches /readyz: it says what happened in public words; the address and the driver's message go to the log.
    const failure = call.failure(err);
    config.logger?.warn({ err, model, ollama: redactHost(host), failure: failure.kind }, 'loading the extraction model for the GPU gate failed');
    return { ok: false, stage: 'model_placement', reason: `loading ${model} failed: ${describeOllamaFailure(failure, extractionStage(model, timeoutMs))}` };
  }
  const apps = await queryComputeApps(config.nvidiaSmi, config.nvidiaSmiTimeoutMs, config.logger);
  if (!apps.ok) return { ok: false, stage: 'nvidia_smi', reason: apps.reason };
  const placed = evaluateComputeApps(model, apps.apps, { approved: config.approved, declared: declaredDevices(config.cudaVisibleDevices ?? '') });
  if (!placed.ok) return placed;
  return { ok: true, devices: verdict.devices, gpuUuid: placed.gpuUuids[0], gpuUuids: placed.gpuUuids, model: { name: model, digest }, minTokensPerSecond };
}
