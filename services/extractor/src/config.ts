import { z } from 'zod';
import { commonEnvSchema, portVar } from '@vouch/platform';
import { DEFAULT_KEEP_ALIVE } from './keep-alive.js';

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** The extractor's environment. */
export const extractorEnvSchema = commonEnvSchema
  .extend({
    HTTP_PORT: portVar(9102),
    /** Concurrency of the CPU worker (read, materialize, grep, deterministic extract) on the `extractor` queue. */
    WORKER_CONCURRENCY: z.coerce.number().int().min(1, 'must be at least 1').max(64, 'must be at most 64').default(2),
    /** Bodies kept in memory (per process, keyed by tenant and hash), in bytes. */
    EXTRACTOR_BODY_CACHE_BYTES: z.coerce.number().int().min(0).max(8 * 1024 ** 3).default(256 * 1024 ** 2),
    /** Most bytes of bodies one artifact.grep scans; files past it are reported unscanned (the result is partial). */
    EXTRACTOR_GREP_SCAN_CAP_BYTES: z.coerce.number().int().min(1024).max(4 * 1024 ** 3).default(512 * 1024 ** 2),

    /** Run the GPU-gated LLM worker on the `extractor-gpu` queue in this process (GPU nodes only). */
    EXTRACTOR_LLM_ENABLED: bool(false),
    /** Comma-separated GPU UUIDs approved for LLM extraction (nvidia-smi -L). */
    EXTRACTOR_APPROVED_GPU_UUIDS: z.string().optional(),
    /** The CUDA_VISIBLE_DEVICES the Ollama service runs with (the same config value the sidecar gets). */
    OLLAMA_CUDA_VISIBLE_DEVICES: z.string().optional(),
    NVIDIA_SMI: z.string().trim().min(1).default('nvidia-smi'),
    NVIDIA_SMI_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** Minimums on top of the accepted-product table (domain/gpu-class.ts): compute capability, and the product's marketed memory in GB. */
    EXTRACTOR_GPU_MIN_COMPUTE: z.coerce.number().min(0).max(20).default(8.0),
    EXTRACTOR_GPU_MIN_MEMORY_GIB: z.coerce.number().min(0).max(4096).default(40),
    /** Least tokens/s a generation may show (Ollama's eval_count/eval_duration); unset: the GPU class's floor. Below it counts as a CPU fallback. */
    EXTRACTOR_MIN_TOKENS_PER_SECOND: z.coerce.number().gt(0, 'must be above 0').max(100_000).optional(),
    /**
     * keep_alive sent with every load and generation, so the model stays in GPU memory between jobs:
     * seconds (a negative number keeps it until Ollama stops) or a Go duration (30m, 1h30m). Not 0, which unloads after each call.
     */
    EXTRACTOR_KEEP_ALIVE: z
      .string()
      .trim()
      .regex(/^(?:-?\d+|-?(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)$/, 'must be seconds (e.g. 1800, or -1 to keep the model loaded) or a Go duration (e.g. 30m, 1h30m)')
      .refine((v) => !/^-?0+(?:\.0+)?(?:ns|us|µs|ms|s|m|h)?$/.test(v) && !/^0+$/.test(v), 'must not be 0: the model would be unloaded after every call and each job would load it again')
      .default(DEFAULT_KEEP_ALIVE),
    /** How often a failed gate is checked again (the worker stays stopped meanwhile). */
    EXTRACTOR_GATE_RETRY_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
    OLLAMA_HOST: z
      .string()
      .trim()
      .pipe(z.url({ protocol: /^https?$/, error: 'must be the Ollama base URL with scheme and port, e.g. http://127.0.0.1:11434' }))
      .optional(),
    EXTRACTOR_MODEL: z.string().trim().min(1, 'must name an Ollama model, e.g. qwen2.5:7b-instruct').default('qwen2.5:7b-instruct'),
    /** One generation's deadline. */
    EXTRACTOR_LLM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(1_800_000).default(120_000),
    /** BullMQ lock of a GPU job: above the longest generation, so a slow generation is not taken for a dead worker. */
    EXTRACTOR_LLM_LOCK_MS: z.coerce.number().int().min(5_000).max(3_600_000).default(300_000),
    /** Jobs at once per GPU worker: 1, one generation per GPU. */
    EXTRACTOR_GPU_CONCURRENCY: z.coerce.number().int().min(1).max(8).default(1),
    EXTRACTOR_MAX_PROMPT_CHARS: z.coerce.number().int().min(1_000).max(100_000).default(3_000),
    EXTRACTOR_MAX_WINDOWS: z.coerce.number().int().min(1).max(64).default(8),
    /** The node name reported in the extractor identity (Kubernetes: spec.nodeName); default the hostname. */
    EXTRACTOR_NODE_NAME: z.string().trim().min(1).optional(),
  })
  .superRefine((env, ctx) => {
    if (!env.EXTRACTOR_LLM_ENABLED) return;
    if (!env.OLLAMA_HOST) ctx.addIssue({ code: 'custom', path: ['OLLAMA_HOST'], message: 'is required when EXTRACTOR_LLM_ENABLED=true: the Ollama sidecar URL, e.g. http://127.0.0.1:11434' });
    if (env.EXTRACTOR_LLM_LOCK_MS <= env.EXTRACTOR_LLM_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['EXTRACTOR_LLM_LOCK_MS'], message: `must be above EXTRACTOR_LLM_TIMEOUT_MS (${env.EXTRACTOR_LLM_TIMEOUT_MS}): a lock shorter than a generation lets another worker take the job` });
    }
  });
export type ExtractorEnv = z.infer<typeof extractorEnvSchema>;
