import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  H200_UUID,
  OTHER_GPU_UUID,
  SECOND_H200_UUID,
  V100_UUID,
  installFakeNvidiaSmi,
  readH200Capture,
  startOllamaTestServer,
  type FakeNvidiaSmi,
  type FakeNvidiaSmiVariant,
  type OllamaTestServer,
} from '@vouch/testing';
import { DEFAULT_GPU_CLASS_MINIMUM, evaluateModelPlacement, evaluateStaticGate, parseGpuQuery } from '../src/domain/gpu-gate.js';
import { runGpuGate, type GateConfig } from '../src/gpu-gate-runner.js';

const capture = readH200Capture();
const h200 = parseGpuQuery(capture.files['smi-query.csv']!);

describe('the gate over the real H200 capture', () => {
  it('reads the captured query exactly', () => {
    expect(h200).toEqual([{ index: 0, uuid: H200_UUID, name: 'NVIDIA H200', computeCapability: '9.0', memoryTotalMiB: 143771, migMode: 'Disabled' }]);
  });

  it('passes the H200 with its own UUID approved and named in CUDA_VISIBLE_DEVICES', () => {
    expect(evaluateStaticGate({ approved: [H200_UUID], cudaVisibleDevices: H200_UUID, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi: { ok: true, devices: h200 } })).toEqual({ ok: true, devices: h200 });
  });

  // cvd.txt: each value CUDA was given, and how many GPUs it then saw. Every value that left zero GPUs must fail the gate.
  it.each(capture.cudaVisibleDevices.map((o) => [o.value, o.deviceCount] as const))('CUDA_VISIBLE_DEVICES=%j (CUDA saw %i GPUs) passes only when CUDA saw the approved GPU by UUID', (value, count) => {
    const verdict = evaluateStaticGate({ approved: [H200_UUID], cudaVisibleDevices: value, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi: { ok: true, devices: h200 } });
    if (count === 0) expect(verdict).toMatchObject({ ok: false, stage: 'visible_devices' });
    // "0" saw the GPU, but numeric ids are refused: their order can differ between nvidia-smi and CUDA.
    else expect(verdict.ok).toBe(value === H200_UUID);
  });

  it('names the silent-CPU risk of a mistyped UUID', () => {
    const verdict = evaluateStaticGate({ approved: [H200_UUID, 'GPU-00000000-0000-0000-0000-000000000000'], cudaVisibleDevices: 'GPU-00000000-0000-0000-0000-000000000000', minimum: DEFAULT_GPU_CLASS_MINIMUM, smi: { ok: true, devices: h200 } });
    expect(verdict).toMatchObject({ ok: false, stage: 'visible_devices' });
    expect(!verdict.ok && verdict.reason).toContain('CUDA would silently see zero GPUs and Ollama would run on the CPU');
  });

  it('refuses an unset allowlist, a malformed UUID and an unset CUDA_VISIBLE_DEVICES', () => {
    const smi = { ok: true as const, devices: h200 };
    expect(evaluateStaticGate({ approved: [], cudaVisibleDevices: H200_UUID, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi })).toMatchObject({ ok: false, stage: 'config' });
    expect(evaluateStaticGate({ approved: ['GPU-nope'], cudaVisibleDevices: H200_UUID, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi })).toMatchObject({ ok: false, stage: 'config' });
    expect(evaluateStaticGate({ approved: [H200_UUID], cudaVisibleDevices: undefined, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi })).toMatchObject({ ok: false, stage: 'visible_devices' });
  });

  it('requires the model entirely in GPU memory after loading', () => {
    expect(evaluateModelPlacement('m:1', [{ name: 'm:1', size: 100, sizeVram: 100 }]).ok).toBe(true);
    expect(evaluateModelPlacement('m:1', [{ name: 'm:1', size: 100, sizeVram: 48 }])).toMatchObject({ ok: false, reason: expect.stringContaining('52% in CPU memory') });
    expect(evaluateModelPlacement('m:1', [{ name: 'm:1', size: 100, sizeVram: 0 }])).toMatchObject({ ok: false, reason: expect.stringContaining('100% in CPU memory') });
    expect(evaluateModelPlacement('m:1', [])).toMatchObject({ ok: false, stage: 'model_placement' });
  });
});

describe('runGpuGate against the fake nvidia-smi and the Ollama test server', () => {
  const fakes = new Map<FakeNvidiaSmiVariant, FakeNvidiaSmi>();
  let ollama: OllamaTestServer;
  beforeAll(async () => {
    for (const v of ['h200', 'other-uuid', 'old-gpu', 'two-gpus', 'mig-enabled', 'slow', 'failing', 'missing'] as const) fakes.set(v, await installFakeNvidiaSmi(v));
    ollama = await startOllamaTestServer({
      models: [
        { name: 'extract:7b', size: 5_000_000_000 },
        { name: 'split:7b', size: 5_000_000_000, sizeVram: 2_400_000_000 },
      ],
    });
  });
  afterAll(async () => {
    for (const f of fakes.values()) await f.cleanup();
    await ollama?.close();
  });

  const config = (variant: FakeNvidiaSmiVariant, over: Partial<GateConfig> = {}): GateConfig => ({
    approved: [H200_UUID],
    cudaVisibleDevices: H200_UUID,
    minimum: DEFAULT_GPU_CLASS_MINIMUM,
    nvidiaSmi: fakes.get(variant)!.path,
    nvidiaSmiTimeoutMs: 5_000,
    ollama: { host: ollama.url, model: 'extract:7b', timeoutMs: 5_000 },
    ...over,
  });

  it('passes on the H200 capture, loads the model without generating, and reports its digest', async () => {
    const result = await runGpuGate(config('h200'));
    expect(result).toMatchObject({ ok: true, gpuUuid: H200_UUID, model: { name: 'extract:7b', digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(ollama.calls).toEqual([]);
    expect(ollama.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/chat', 'GET /api/ps']);
  });

  it.each([
    ['other-uuid', {}, 'visible_devices', `which nvidia-smi does not list on this node (it lists ${OTHER_GPU_UUID})`],
    ['old-gpu', { approved: [V100_UUID], cudaVisibleDevices: V100_UUID }, 'class_minimum', 'compute capability 7.0 and 16.0 GiB; the minimum is 8.0 and 40 GiB'],
    ['mig-enabled', {}, 'mig', 'MIG mode enabled'],
    ['failing', {}, 'nvidia_smi', "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"],
    ['missing', {}, 'nvidia_smi', 'nvidia-smi not found at'],
    ['slow', { nvidiaSmiTimeoutMs: 300 }, 'nvidia_smi', 'nvidia-smi did not answer within 300 ms'],
    ['two-gpus', { cudaVisibleDevices: `${H200_UUID},${SECOND_H200_UUID}` }, 'visible_devices', `names ${SECOND_H200_UUID}, not on the approved list`],
    ['h200', { cudaVisibleDevices: '' }, 'visible_devices', 'is empty: CUDA then sees zero GPUs'],
    ['h200', { ollama: { host: 'http://127.0.0.1:1', model: 'extract:7b', timeoutMs: 2_000 } }, 'model_placement', 'loading extract:7b failed: the extraction model could not be reached (check that Ollama runs at OLLAMA_HOST)'],
  ] as const)('%s %j fails at %s: %s', async (variant, over, stage, reason) => {
    const result = await runGpuGate(config(variant, over as Partial<GateConfig>));
    expect(result).toMatchObject({ ok: false, stage });
    expect(!result.ok && result.reason).toContain(reason);
    // The reason reaches /readyz: no address, no driver message.
    expect(!result.ok && result.reason).not.toMatch(/127\.0\.0\.1|fetch failed|ECONNREFUSED/);
  });

  it('passes two approved H200s when only the approved one is visible', async () => {
    expect(await runGpuGate(config('two-gpus'))).toMatchObject({ ok: true, gpuUuid: H200_UUID });
  });

  it('fails when Ollama holds the model partly on the CPU', async () => {
    const result = await runGpuGate(config('h200', { ollama: { host: ollama.url, model: 'split:7b', timeoutMs: 5_000 } }));
    expect(result).toMatchObject({ ok: false, stage: 'model_placement', reason: expect.stringContaining('52% in CPU memory') });
  });
});
