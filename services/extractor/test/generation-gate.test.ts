// Issue 19, items 1 and 3: the GPU gate at every generation. The Ollama test
// server misbehaves as a real one does (a reload after keep-alive lands on the
// CPU; /api/ps says 100% GPU while generation runs at CPU speed) and the fake
// nvidia-smi shows Ollama's runner on another GPU. Each time the job fails as
// a gate failure, the worker stops taking jobs, /readyz says why, the metric
// moves; the job is then answered by a healthy worker, whose extract records
// the GPU observed for its generations.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, decodeJobError, type Artifact, type DerivedExtract, type JobEnvelope } from '@vouch/contracts';
import {
  H200_UUID,
  OLLAMA_RUNNER_PID,
  OTHER_GPU_UUID,
  SECOND_H200_UUID,
  eventually,
  installFakeNvidiaSmi,
  metricValue,
  ollamaComputeApp,
  repoRoot,
  scriptedExtractionModel,
  startOllamaTestServer,
  useTestPrefix,
  useTestSchema,
  type FakeNvidiaSmi,
  type OllamaTestModel,
  type OllamaTestServer,
  type TestPrefix,
  type TestSchema,
} from '@vouch/testing';
import type { Job } from 'bullmq';
import { QueueJobs, h200GateVars, startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

const MODEL = 'extract:7b';
const SOURCE = 'export const uart = {\n  baudRate: 115200,\n  channel: 7,\n};\n';

describe('the GPU gate at every generation (Ollama test server, fake nvidia-smi, Redis, Postgres)', () => {
  let ollama: OllamaTestServer;
  let prefix: TestPrefix;
  let schema: TestSchema;
  let cpu: QueueJobs;
  let gpu: QueueJobs;
  const fakes: FakeNvidiaSmi[] = [];
  const running: ExtractorUnderTest[] = [];
  const model = (): OllamaTestModel => ollama.models.find((m) => m.name === MODEL)!;

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, size: 4_000_000_000 }], reply: scriptedExtractionModel() });
    prefix = await useTestPrefix('extractor_generation_gate');
    schema = await useTestSchema('extractor_generation_gate');
    cpu = new QueueJobs(prefix.prefix, QUEUES.extractor);
    gpu = new QueueJobs(prefix.prefix, QUEUES.extractorGpu);
    await Promise.all([cpu.ready(), gpu.ready()]);
  });
  afterAll(async () => {
    for (const s of running) await s.stop();
    await cpu?.close();
    await gpu?.close();
    await prefix?.cleanup();
    await schema?.cleanup();
    await ollama?.close();
    for (const f of fakes) await f.cleanup();
  });

  const fake = async (...args: Parameters<typeof installFakeNvidiaSmi>) => {
    const f = await installFakeNvidiaSmi(...args);
    fakes.push(f);
    return f;
  };

  /** An extractor on the shared prefix and schema whose start-up gate passed. */
  const startGated = async (smi: FakeNvidiaSmi, vars: Record<string, string> = {}) => {
    const svc = await startExtractorUnderTest(
      'extractor_generation_gate',
      {
        ...h200GateVars(smi.path, ollama.url, MODEL),
        EXTRACTOR_GATE_RETRY_MS: '600000',
        ...vars,
      },
      { prefix: prefix.prefix, schema: schema.schema },
    );
    running.push(svc);
    const gate = await svc.service.gateSettled();
    if (gate.state !== 'passed') throw new Error(`the start-up gate did not pass: ${gate.reason ?? gate.state}`);
    await eventually('the GPU worker runs', () => (svc.service.gpuWorker()?.worker.isRunning() ? true : undefined));
    return svc;
  };
  const stop = async (svc: ExtractorUnderTest) => {
    await svc.stop();
    running.splice(running.indexOf(svc), 1);
  };

  /** A healthy worker on another node: two approved H200s declared, Ollama's runner on the second. */
  const startHealthyElsewhere = async () => {
    const smi = await fake('two-gpus', { computeApps: [ollamaComputeApp(SECOND_H200_UUID)] });
    return startGated(smi, { EXTRACTOR_APPROVED_GPU_UUIDS: `${H200_UUID},${SECOND_H200_UUID}`, OLLAMA_CUDA_VISIBLE_DEVICES: `${H200_UUID},${SECOND_H200_UUID}` });
  };

  const readSource = (path: string) => cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path, content: SOURCE });

  /**
   * Runs a job into the gate failure and checks everything that must follow:
   * the job failed as a gate failure and waits to run again; the worker stopped
   * taking jobs; /readyz and the metrics say why, in public words.
   */
  const expectGateFailure = async (svc: ExtractorUnderTest, stage: string, reason: string): Promise<Job<JobEnvelope>> => {
    const worker = svc.service.gpuWorker()!.worker;
    const read = await readSource(`drivers/${stage}.ts`);
    const job = await gpu.add('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }, { id: 'channel' }] });
    const failed = await eventually('the job fails its attempt', async () => {
      const fresh = await gpu.queue.getJob(job.id!);
      return fresh && fresh.attemptsMade >= 1 ? fresh : undefined;
    });
    expect(decodeJobError(failed.failedReason)).toEqual({
      code: 'DEPENDENCY_UNAVAILABLE',
      message: `the GPU gate failed on the worker that took this job (${stage}): the job is retried on an approved GPU worker, and never answered from the CPU`,
    });
    expect(failed.returnvalue).toBeFalsy();
    // Retried, not given up: it waits for a worker whose gate holds.
    expect(['waiting', 'delayed']).toContain(await failed.getState());

    expect(svc.service.gate()).toMatchObject({ state: 'failed', stage });
    expect(svc.service.gate().reason).toContain(reason);
    expect(svc.service.gpuWorker()).toBeUndefined();
    await eventually('the stopped worker takes no more jobs', () => (worker.isRunning() ? undefined : true));

    const res = await fetch(`http://127.0.0.1:${svc.service.ops.port}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { checks: Record<string, boolean>; details: Record<string, string> };
    expect(body.checks).toMatchObject({ gpu_gate: false });
    expect(body.details.gpu_gate).toContain(`GPU gate failed at ${stage}: `);
    expect(body.details.gpu_gate).toContain(reason);
    expect(body.details.gpu_gate).not.toMatch(new RegExp(`127\\.0\\.0\\.1|:${ollama.port}\\b|fetch failed|ECONNREFUSED`));

    const registry = svc.service.metrics.registry;
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate', { state: 'failed' })).toBe(1);
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate', { state: 'passed' })).toBe(0);
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate_checks_total', { outcome: 'failed', stage })).toBe(1);
    return failed;
  };

  /** Another worker answers the job; the extract names the GPU observed for it, not the first one configured. */
  const expectAnsweredElsewhere = async (job: Job<JobEnvelope>) => {
    const healthy = await startHealthyElsewhere();
    try {
      const extract = await gpu.wait<DerivedExtract>(job, 20_000);
      expect(extract.coverage).toMatchObject({ complete: true, satisfied: 2 });
      expect(extract.extractor).toMatchObject({ kind: 'llm', gpuUuid: SECOND_H200_UUID, model: { name: MODEL, digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });
      expect(healthy.service.gate()).toMatchObject({ state: 'passed', gpuUuid: SECOND_H200_UUID });
      expect(await metricValue(healthy.service.metrics.registry, 'vouch_extractor_generation_tokens_per_second')).toBeGreaterThan(0);
    } finally {
      await stop(healthy);
    }
  };

  it('sends an explicit keep_alive with every load and generation, and records the GPU observed for the job', async () => {
    ollama.reset();
    const svc = await startHealthyElsewhere();
    try {
      const read = await readSource('drivers/healthy.ts');
      const extract = await gpu.run<DerivedExtract>('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }] });
      // Configured: both H200s, the first one first; observed: the runner on the second.
      expect(extract.extractor.gpuUuid).toBe(SECOND_H200_UUID);
      const generations = ollama.requests.filter((r) => r.path === '/api/chat');
      expect(generations.length).toBeGreaterThanOrEqual(2);
      for (const r of generations) expect(r.body).toMatchObject({ keep_alive: '30m' });
      // Every job asks /api/ps before its first generation.
      expect(ollama.requests.filter((r) => r.path === '/api/ps').length).toBeGreaterThanOrEqual(2);
      const registry = svc.service.metrics.registry;
      expect(await metricValue(registry, 'vouch_extractor_gpu_gate_checks_total', { outcome: 'passed', stage: 'none' })).toBe(2);
    } finally {
      await stop(svc);
    }
  });

  it('a reload after the keep-alive ran out lands on the CPU: the job fails at model_placement and is answered elsewhere', async () => {
    ollama.reset();
    model().reloadSizeVram = 1_000_000_000;
    const smi = await fake('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    const svc = await startGated(smi, { EXTRACTOR_KEEP_ALIVE: '10m' });
    ollama.expire(MODEL);
    ollama.calls.length = 0;
    const job = await expectGateFailure(svc, 'model_placement', 'Ollama holds extract:7b 75% in CPU memory (size_vram 1000000000 of 4000000000 bytes)');
    // It loaded the model again, with the configured keep_alive, and generated nothing.
    expect(ollama.loads(MODEL)).toBe(2);
    expect(ollama.requests.filter((r) => r.path === '/api/chat').at(-1)?.body).toMatchObject({ messages: [], keep_alive: '10m' });
    expect(ollama.calls).toEqual([]);
    delete model().reloadSizeVram;
    await expectAnsweredElsewhere(job);
    await stop(svc);
  });

  it('/api/ps says 100% GPU while generation runs at CPU speed: the answer is not used, the job fails at token_rate', async () => {
    ollama.reset();
    const smi = await fake('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    const svc = await startGated(smi);
    model().evalTokensPerSecond = 4;
    ollama.calls.length = 0;
    const job = await expectGateFailure(svc, 'token_rate', 'the generation ran at 4.0 tokens/s, below the 35 tokens/s floor for NVIDIA H200 (Hopper)');
    // /api/ps kept saying the model is wholly in GPU memory.
    const ps = (await (await fetch(`${ollama.url}/api/ps`)).json()) as { models: Array<{ size: number; size_vram: number }> };
    expect(ps.models[0]).toMatchObject({ size: 4_000_000_000, size_vram: 4_000_000_000 });
    // One generation ran; nothing from it was recorded.
    expect(ollama.calls).toHaveLength(1);
    expect(await metricValue(svc.service.metrics.registry, 'vouch_extractor_extracts_total', { kind: 'llm' })).toBe(0);
    delete model().evalTokensPerSecond;
    await expectAnsweredElsewhere(job);
    await stop(svc);
  });

  it("Ollama's runner turns up on another GPU: the job fails at gpu_process before any generation", async () => {
    ollama.reset();
    const smi = await fake('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    const svc = await startGated(smi);
    await smi.setComputeApps([ollamaComputeApp(OTHER_GPU_UUID)]);
    ollama.calls.length = 0;
    const job = await expectGateFailure(svc, 'gpu_process', `nvidia-smi shows process ${OLLAMA_RUNNER_PID} on ${OTHER_GPU_UUID}: CUDA_VISIBLE_DEVICES of the Ollama service names only ${H200_UUID}, and it is not on the approved list`);
    expect(ollama.calls).toEqual([]);
    await expectAnsweredElsewhere(job);
    await stop(svc);
  });

  it('an alert rule fires at the first gate failure', () => {
    const alerts = readFileSync(join(repoRoot(), 'deploy', 'prometheus', 'alerts.yml'), 'utf8');
    const rule = /- alert: VouchExtractorGpuGateTripped\n\s+expr: (.+)\n\s+for: (\S+)/.exec(alerts);
    expect(rule?.[1]).toContain('increase(vouch_extractor_gpu_gate_checks_total{outcome="failed"}');
    expect(rule?.[2]).toBe('0m');
  });
});
