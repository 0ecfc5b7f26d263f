import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, type Artifact, type DerivedExtract } from '@vouch/contracts';
import { H200_UUID, OTHER_GPU_UUID, eventually, installFakeNvidiaSmi, metricValue, ollamaComputeApp, scriptedExtractionModel, startOllamaTestServer, useTestPrefix, type FakeNvidiaSmi, type OllamaTestServer, type TestPrefix } from '@vouch/testing';
import { JobFailed, QueueJobs, h200GateVars, oversizedSource, startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

const MODEL = 'extract:7b';

describe('the GPU-gated LLM worker', () => {
  let ollama: OllamaTestServer;
  let h200: FakeNvidiaSmi;
  let otherUuid: FakeNvidiaSmi;
  let prefix: TestPrefix;
  let cpu: QueueJobs;
  let gpu: QueueJobs;
  const started: ExtractorUnderTest[] = [];

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, size: 4_000_000_000 }], reply: scriptedExtractionModel() });
    h200 = await installFakeNvidiaSmi('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    otherUuid = await installFakeNvidiaSmi('other-uuid');
    prefix = await useTestPrefix('extractor_gpu');
    cpu = new QueueJobs(prefix.prefix, QUEUES.extractor);
    gpu = new QueueJobs(prefix.prefix, QUEUES.extractorGpu);
    await Promise.all([cpu.ready(), gpu.ready()]);
  });
  afterAll(async () => {
    for (const s of started) await s.stop();
    await cpu?.close();
    await gpu?.close();
    await prefix?.cleanup();
    await ollama?.close();
    await h200?.cleanup();
    await otherUuid?.cleanup();
  });

  const start = async (smi: FakeNvidiaSmi, extra: Record<string, string> = {}) => {
    const svc = await startExtractorUnderTest(
      'extractor_gpu',
      {
        ...h200GateVars(smi.path, ollama.url, MODEL),
        EXTRACTOR_GATE_RETRY_MS: '600000',
        ...extra,
      },
      { prefix: prefix.prefix },
    );
    started.push(svc);
    return svc;
  };

  it('never takes a job when its gate fails: the job stays queued, /readyz says why, the gauge says failed', async () => {
    const svc = await start(otherUuid);
    const gate = await svc.service.gateSettled();
    expect(gate).toMatchObject({ state: 'failed', stage: 'visible_devices' });
    expect(gate.reason).toContain(`which nvidia-smi does not list on this node (it lists ${OTHER_GPU_UUID})`);
    expect(svc.service.gpuWorker()).toBeUndefined();

    const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: 'a.ts', content: 'baudRate: 9600\n' });
    const job = await gpu.add('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }] });
    // The CPU worker of the same process keeps serving its own queue meanwhile.
    await cpu.run('artifact.grep', 'acme', { workspace: 'fw', pattern: 'baudRate' });
    expect(await job.getState()).toBe('waiting');
    expect(ollama.calls).toHaveLength(0);

    const res = await fetch(`http://127.0.0.1:${svc.service.ops.port}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { checks: Record<string, boolean>; details: Record<string, string> };
    expect(body.checks).toMatchObject({ gpu_gate: false, worker: true });
    expect(body.details.gpu_gate).toContain('GPU gate failed at visible_devices');
    const registry = svc.service.metrics.registry;
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate', { state: 'failed' })).toBe(1);
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate', { state: 'passed' })).toBe(0);
    expect(await metricValue(registry, 'vouch_extractor_gpu_gate_checks_total', { outcome: 'failed', stage: 'visible_devices' })).toBe(1);
    await svc.stop();
    started.splice(started.indexOf(svc), 1);
    expect(await job.getState()).toBe('waiting');
    await job.remove();
  });

  it('with the gate passed on the H200, extracts through windows with verified anchors and an LLM identity', async () => {
    const svc = await start(h200);
    expect(await svc.service.gateSettled()).toMatchObject({ state: 'passed', gpuUuid: H200_UUID });
    const ready = await fetch(`http://127.0.0.1:${svc.service.ops.port}/readyz`);
    expect(ready.status).toBe(200);
    await eventually('the GPU worker runs', () => (svc.service.gpuWorker()?.worker.isRunning() ? true : undefined));

    const file = oversizedSource(3);
    const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: 'drivers/big.ts', content: file.text });
    ollama.calls.length = 0;
    const x = await gpu.run<DerivedExtract>('artifact.extract', 'acme', { artifactId: read.artifactId, expectedHash: read.hash, requirements: [{ id: 'baudRate', description: 'the exact UART baudRate' }, { id: 'channel' }] });
    expect(x.coverage).toEqual({ total: 2, satisfied: 2, unresolved: 0, complete: true });
    expect(x.requirements.map((r) => [r.id, r.status === 'satisfied' ? r.value : null])).toEqual([
      ['baudRate', file.baudRate],
      ['channel', file.channel],
    ]);
    expect(x.extractor).toMatchObject({ kind: 'llm', model: { name: MODEL, digest: expect.stringMatching(/^[0-9a-f]{64}$/) }, gpuUuid: H200_UUID });
    expect(x.windows.largestPromptChars).toBeLessThanOrEqual(3_000);
    expect(x.evidenceChars).toBeLessThanOrEqual(800);
    for (const call of ollama.calls) {
      expect(call.format).toMatchObject({ type: 'object', properties: { results: { type: 'array' } } });
      expect(call.messages.map((m) => m.content).join('').length).toBeLessThanOrEqual(3_000);
      expect(call.stream).toBe(false);
    }
    expect(file.text.length).toBeGreaterThan(40 * ollama.calls.reduce((n, c) => Math.max(n, c.messages.map((m) => m.content).join('').length), 0));
  });

  it('turns a hallucinated quote into an unresolved requirement, never a satisfied one', async () => {
    ollama.reply(scriptedExtractionModel({ lie: ['channel'] }));
    try {
      const file = oversizedSource(5);
      const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: 'drivers/lie.ts', content: file.text });
      const x = await gpu.run<DerivedExtract>('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }, { id: 'channel' }] });
      expect(x.requirements[1]).toMatchObject({ id: 'channel', status: 'unresolved', code: 'anchor_failed' });
      expect(x.coverage).toMatchObject({ satisfied: 1, unresolved: 1, complete: false });
    } finally {
      ollama.reply(scriptedExtractionModel());
    }
  });

  it('over a capped read, a value the model does not find is not in the part read, never not found', async () => {
    const file = oversizedSource(6);
    const lines = file.text.split('\n');
    const baudAt = lines.findIndex((l) => l.startsWith('  baudRate:'));
    // The read was cut short before the baudRate definition. A header comment mentions baudRate, so the model is asked and finds no value (model_unresolved); missingSetting is mentioned nowhere (not_found).
    const head = `${lines.slice(0, Math.min(baudAt, 150)).join('\n')}\n`;
    const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: 'drivers/capped.ts', content: head, capped: true });
    const x = await gpu.run<DerivedExtract>('artifact.extract', 'acme', { artifactId: read.artifactId, requirements: [{ id: 'baudRate' }, { id: 'missingSetting' }] });
    for (const r of x.requirements) {
      expect(r).toMatchObject({ status: 'unresolved', code: 'not_in_part_read', recovery: { readRest: { path: 'drivers/capped.ts' } } });
      expect(r.status === 'unresolved' && r.reason).toContain(`is not in the part read (${read.lineCount} line(s) of drivers/capped.ts from line 1, where the read was cut short)`);
    }
    expect(x.extractor).toMatchObject({ kind: 'llm', gpuUuid: H200_UUID });
  });

  it("answers another tenant's artifact as not found", async () => {
    const read = await cpu.run<Artifact>('artifact.read', 'acme', { workspace: 'fw', path: 'secret.ts', content: 'channel: 9\n' });
    await expect(gpu.run('artifact.extract', 'globex', { artifactId: read.artifactId, requirements: [{ id: 'channel' }] })).rejects.toBeInstanceOf(JobFailed);
  });
});
