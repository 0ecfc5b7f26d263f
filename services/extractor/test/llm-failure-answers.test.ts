import { QUEUES, type Artifact, type DerivedExtract } from '@vouch/contracts';
import { createLogger } from '@vouch/platform';
import {
  H200_UUID,
  OLLAMA_FAILURE_MODES,
  installFakeNvidiaSmi,
  ollamaComputeApp,
  scriptedExtractionModel,
  startOllamaFailureRig,
  useTestPrefix,
  type FakeNvidiaSmi,
  type OllamaFailureMode,
  type OllamaFailureRig,
  type TestPrefix,
} from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobFailed, QueueJobs, h200GateVars, startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

const MODEL = 'extract:7b';
const WAY_OUT = ': the model extraction stopped; run it again later, or use artifact.extractDeterministic (no model)';

/** The failed job's message, in full, for each way Ollama fails the call (a malformed chat content is not a failure of the call). */
type CallFailure = Exclude<OllamaFailureMode, 'malformed_content'>;
const CALL_FAILURES = OLLAMA_FAILURE_MODES.filter((m): m is CallFailure => m !== 'malformed_content');
const MESSAGE: Record<CallFailure, string> = {
  refused: `the extraction model could not be reached (check that Ollama runs at OLLAMA_HOST)${WAY_OUT}`,
  timeout: `the extraction model did not answer within 1000 ms (EXTRACTOR_LLM_TIMEOUT_MS)${WAY_OUT}`,
  http_500: `the extraction model answered with an error (HTTP 500)${WAY_OUT}`,
  malformed_body: `the extraction model's answer could not be read (it is not Ollama's JSON)${WAY_OUT}`,
  model_missing: `the extraction model ${MODEL} is not installed on the Ollama server (pull it there, or name an installed model in EXTRACTOR_MODEL)${WAY_OUT}`,
};

/**
 * Issue 16: whichever way Ollama fails, an artifact.extract job answers in
 * public words: which stage stopped, why, and what to do instead, with no
 * address, port, driver message, stack or Ollama error text; those go to
 * the service's log. The GPU worker runs behind its gate on the fake
 * nvidia-smi (the H200 capture), as in production.
 */
describe('artifact.extract answers when the extraction model fails (Ollama test server, gated GPU worker, Redis and Postgres)', () => {
  let rig: OllamaFailureRig;
  let smi: FakeNvidiaSmi;
  let prefix: TestPrefix;
  let svc: ExtractorUnderTest;
  let cpu: QueueJobs;
  let gpu: QueueJobs;
  const log: string[] = [];

  beforeAll(async () => {
    rig = await startOllamaFailureRig({ models: [{ name: MODEL, size: 4_000_000_000 }], reply: scriptedExtractionModel() });
    smi = await installFakeNvidiaSmi('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    prefix = await useTestPrefix('extractor_llm_failures');
    const logger = createLogger({ service: 'extractor', level: 'warn', destination: { write: (line: string) => void log.push(line) } });
    svc = await startExtractorUnderTest(
      'extractor_llm_failures',
      {
        ...h200GateVars(smi.path, rig.url, MODEL),
        EXTRACTOR_LLM_TIMEOUT_MS: '1000',
        EXTRACTOR_GATE_RETRY_MS: '600000',
      },
      { prefix: prefix.prefix },
      { logger },
    );
    const gate = await svc.service.gateSettled();
    if (gate.state !== 'passed') throw new Error(`the GPU gate did not pass: ${gate.reason ?? gate.state}`);
    cpu = new QueueJobs(prefix.prefix, QUEUES.extractor);
    gpu = new QueueJobs(prefix.prefix, QUEUES.extractorGpu);
    await Promise.all([cpu.ready(), gpu.ready()]);
  });
  afterAll(async () => {
    await cpu?.close();
    await gpu?.close();
    await svc?.stop();
    await prefix?.cleanup();
    await rig?.close();
    await smi?.cleanup();
  });

  /** Runs artifact.extract on a one-window file with the failure in place; the job as it ended. */
  const extractWhile = async (mode: OllamaFailureMode): Promise<{ result?: DerivedExtract; failed?: JobFailed }> => {
    const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: `drivers/${mode}.ts`, content: 'export const uart = {\n  baudRate: 115200,\n};\n' });
    rig.ollama.reset();
    log.length = 0;
    const undo = await rig.fail(mode, { model: MODEL });
    try {
      return { result: await gpu.run<DerivedExtract>('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }] }) };
    } catch (err) {
      if (err instanceof JobFailed) return { failed: err };
      throw err;
    } finally {
      await undo();
    }
  };

  it.each(CALL_FAILURES)('%s: the job fails as a dependency outage, in public words only', async (mode) => {
    const { result, failed } = await extractWhile(mode);
    expect(result).toBeUndefined();
    expect(failed?.body).toEqual({ code: 'DEPENDENCY_UNAVAILABLE', message: MESSAGE[mode] });
    // What the gateway reads: the decoded error and the raw reason it is decoded from.
    expect(rig.internalsIn(JSON.stringify(failed!.body))).toEqual([]);
    expect(rig.internalsIn(failed!.job.failedReason)).toEqual([]);
    expect(log.join('')).toContain(`"ollama":"${rig.url}"`);
  });

  it('malformed_content: the requirement is unresolved, the answer says the model answer was not JSON, and holds nothing internal', async () => {
    const { result, failed } = await extractWhile('malformed_content');
    expect(failed).toBeUndefined();
    expect(result?.requirements).toEqual([
      expect.objectContaining({ id: 'baudRate', status: 'unresolved', code: 'model_failed', reason: 'the model answer is not JSON' }),
    ]);
    expect(result?.coverage).toMatchObject({ satisfied: 0, unresolved: 1, complete: false });
    expect(rig.internalsIn(JSON.stringify(result))).toEqual([]);
  });

  it('the log keeps what the answer leaves out: the refused address and the driver code', async () => {
    await extractWhile('refused');
    const line = log.find((l) => l.includes('extraction model call failed'));
    expect(line).toContain('"failure":"unreachable"');
    expect(line).toContain('ECONNREFUSED');
  });
});
