/**
 * Runs the GPU gate once on this node and prints its verdict as JSON; exit 0
 * when it passes, 1 when it fails. For operators checking a node before
 * deploying, and for the live check on a GPU machine:
 *
 *   EXTRACTOR_APPROVED_GPU_UUIDS=GPU-… OLLAMA_CUDA_VISIBLE_DEVICES=GPU-… npm run gate --workspace @vouch/extractor
 *
 * Without OLLAMA_HOST it stops after the checks that need no model (allowlist,
 * nvidia-smi, CUDA_VISIBLE_DEVICES, the GPU's product class, MIG now and
 * pending); with it, it also loads EXTRACTOR_MODEL (with EXTRACTOR_KEEP_ALIVE),
 * checks /api/ps and finds Ollama's runner in nvidia-smi's compute apps.
 */
import { DEFAULT_GPU_CLASS_MINIMUM } from '../domain/gpu-class.js';
import { parseAllowlist } from '../domain/gpu-gate.js';
import { DEFAULT_KEEP_ALIVE, runGpuGate } from '../gpu-gate-runner.js';

const env = process.env;
const approved = parseAllowlist(env.EXTRACTOR_APPROVED_GPU_UUIDS ?? env.HARNESS_APPROVED_GPU_UUID);
const result = await runGpuGate({
  approved,
  cudaVisibleDevices: env.OLLAMA_CUDA_VISIBLE_DEVICES,
  minimum: {
    computeCapability: Number(env.EXTRACTOR_GPU_MIN_COMPUTE ?? DEFAULT_GPU_CLASS_MINIMUM.computeCapability),
    memoryGiB: Number(env.EXTRACTOR_GPU_MIN_MEMORY_GIB ?? DEFAULT_GPU_CLASS_MINIMUM.memoryGiB),
  },
  nvidiaSmi: env.NVIDIA_SMI ?? 'nvidia-smi',
  nvidiaSmiTimeoutMs: Number(env.NVIDIA_SMI_TIMEOUT_MS ?? 10_000),
  ...(env.EXTRACTOR_MIN_TOKENS_PER_SECOND ? { minTokensPerSecond: Number(env.EXTRACTOR_MIN_TOKENS_PER_SECOND) } : {}),
  ...(env.OLLAMA_HOST
    ? { ollama: { host: env.OLLAMA_HOST, model: env.EXTRACTOR_MODEL ?? 'qwen2.5:7b-instruct', timeoutMs: Number(env.EXTRACTOR_LLM_TIMEOUT_MS ?? 300_000), keepAlive: env.EXTRACTOR_KEEP_ALIVE ?? DEFAULT_KEEP_ALIVE } }
    : {}),
});
process.stdout.write(`${JSON.stringify({ approved, cudaVisibleDevices: env.OLLAMA_CUDA_VISIBLE_DEVICES ?? null, modelChecked: Boolean(env.OLLAMA_HOST), ...result }, null, 2)}\n`);
process.exit(result.ok ? 0 : 1);
