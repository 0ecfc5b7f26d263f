import { createLogger, parseConfig } from '@vouch/platform';
import { H200_UUID, startServiceUnderTest, type ServiceUnderTest } from '@vouch/testing';
import { extractorEnvSchema, type ExtractorEnv } from '../src/config.js';
import { startExtractor, type ExtractorOverrides, type RunningExtractor } from '../src/extractor-service.js';

/** The extractor running in this process on its own BullMQ prefix (or a shared one) and Postgres schema. */
export type ExtractorUnderTest = ServiceUnderTest<ExtractorEnv, RunningExtractor>;

export async function startExtractorUnderTest(label: string, vars: Record<string, string> = {}, shared?: { prefix?: string; schema?: string }, overrides: ExtractorOverrides = {}): Promise<ExtractorUnderTest> {
  return startServiceUnderTest({
    label,
    vars,
    shared,
    parse: (v) => parseConfig(extractorEnvSchema, v),
    start: (env) => startExtractor(env, { logger: createLogger({ service: 'extractor', level: 'silent' }), ...overrides }),
  });
}

export { JobFailed, QueueJobs } from '@vouch/testing';

/**
 * An oversized source file with exactly one `baudRate` and one `channel`
 * definition deep inside, among distractors that a careless extractor would
 * take: comments naming old values, longer identifiers, strings.
 */
export function oversizedSource(seed: number, opts: { baudRate?: number; channel?: number | null; lines?: number } = {}): { text: string; baudRate: string; channel: string | null } {
  const baudRate = String(opts.baudRate ?? [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600][seed % 8]);
  const channel = opts.channel === null ? null : String(opts.channel ?? 1 + ((seed * 7) % 26));
  const total = opts.lines ?? 1_800;
  const out: string[] = [`// generated driver ${seed}: large on purpose`, `// note: baudRate used to be 4800 on revision A boards; channelMask is unrelated`];
  const baudAt = 200 + ((seed * 97) % (total - 400));
  let chanAt = 150 + ((seed * 53 + 600) % (total - 300));
  if (chanAt === baudAt) chanAt += 1;
  for (let i = out.length; i < total; i++) {
    if (i === baudAt) out.push(`  baudRate: ${baudRate},`);
    else if (i === chanAt && channel !== null) out.push(`  channel: ${channel},`);
    else if (i % 97 === 0) out.push(`  const channelCount${i} = ${i % 13}; // not the channel`);
    else out.push(`  register_${seed}_${i}: 0x${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}, // filler ${'-'.repeat(i % 40)}`);
  }
  return { text: `${out.join('\n')}\n`, baudRate, channel };
}

/**
 * The variables of an extractor with LLM extraction behind its gate on the
 * captured H200: the fake nvidia-smi at `nvidiaSmi`, the model `model` served
 * by the Ollama (test server) at `ollamaUrl`. Tests add or override the rest.
 */
export function h200GateVars(nvidiaSmi: string, ollamaUrl: string, model: string): Record<string, string> {
  return {
    EXTRACTOR_LLM_ENABLED: 'true',
    EXTRACTOR_APPROVED_GPU_UUIDS: H200_UUID,
    OLLAMA_CUDA_VISIBLE_DEVICES: H200_UUID,
    NVIDIA_SMI: nvidiaSmi,
    OLLAMA_HOST: ollamaUrl,
    EXTRACTOR_MODEL: model,
    EXTRACTOR_LLM_TIMEOUT_MS: '10000',
    EXTRACTOR_LLM_LOCK_MS: '30000',
  };
}

/**
 * The extractor as a full stack runs it: both queues served, the GPU worker
 * behind its gate on the fake nvidia-smi (the H200 capture, Ollama's runner
 * on the H200) with the Ollama test server as the model. Resolves once the
 * gate passed.
 */
export async function startGatedExtractorUnderTest(label: string, shared: { prefix: string }): Promise<{ service: ExtractorUnderTest; stop(): Promise<void> }> {
  const { installFakeNvidiaSmi, ollamaComputeApp, scriptedExtractionModel, startOllamaTestServer } = await import('@vouch/testing');
  const ollama = await startOllamaTestServer({ models: [{ name: 'extract:7b', size: 4_000_000_000 }], reply: scriptedExtractionModel() });
  // The captured H200, with Ollama's runner on it as nvidia-smi lists it once the model is loaded.
  const smi = await installFakeNvidiaSmi('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
  const service = await startExtractorUnderTest(
    label,
    h200GateVars(smi.path, ollama.url, 'extract:7b'),
    shared,
  );
  const gate = await service.service.gateSettled();
  if (gate.state !== 'passed') throw new Error(`the test extractor's GPU gate did not pass: ${gate.reason ?? gate.state}`);
  return {
    service,
    async stop() {
      await service.stop();
      await ollama.close();
      await smi.cleanup();
    },
  };
}
