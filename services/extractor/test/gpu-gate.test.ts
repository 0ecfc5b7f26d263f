import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSTRUCTED_GPUS,
  CONSTRUCTED_GPU_VARIANTS,
  H200_UUID,
  OLLAMA_RUNNER_PID,
  OTHER_GPU_UUID,
  SECOND_H200_UUID,
  V100_UUID,
  fixturesDir,
  installFakeNvidiaSmi,
  ollamaComputeApp,
  readH200Capture,
  startOllamaTestServer,
  type ConstructedGpuVariant,
  type FakeNvidiaSmi,
  type FakeNvidiaSmiVariant,
  type OllamaTestServer,
} from '@vouch/testing';
import { DEFAULT_GPU_CLASS_MINIMUM, MIN_TOKENS_PER_SECOND, classifyGpu, gpuProductOf } from '../src/domain/gpu-class.js';
import { evaluateComputeApps, evaluateModelPlacement, evaluateStaticGate, evaluateTokenRate, parseComputeApps, parseGpuQuery, tokenRateFloor, type GpuDevice } from '../src/domain/gpu-gate.js';
import { runGpuGate, type GateConfig } from '../src/gpu-gate-runner.js';

const capture = readH200Capture();
// The captured XML says what the captured CSV leaves out: MIG is off now and pending.
const h200Pending = /<pending_mig>(\w+)<\/pending_mig>/.exec(capture.files['smi-q.xml']!)![1]!;
const h200 = parseGpuQuery(capture.files['smi-query.csv']!, `index, uuid, mig.mode.current, mig.mode.pending\n0, ${H200_UUID}, Disabled, ${h200Pending}\n`);
const constructed = (variant: ConstructedGpuVariant): GpuDevice[] => {
  const dir = join(fixturesDir(), 'gpu', 'constructed', variant);
  return parseGpuQuery(readFileSync(join(dir, 'smi-query.csv'), 'utf8'), readFileSync(join(dir, 'smi-mig.csv'), 'utf8'));
};
const staticGate = (devices: GpuDevice[], over: { minimum?: typeof DEFAULT_GPU_CLASS_MINIMUM } = {}) =>
  evaluateStaticGate({ approved: devices.map((d) => d.uuid), cudaVisibleDevices: devices.map((d) => d.uuid).join(','), minimum: over.minimum ?? DEFAULT_GPU_CLASS_MINIMUM, smi: { ok: true, devices } });

describe('the gate over the real H200 capture', () => {
  it('reads the captured query exactly', () => {
    expect(h200).toEqual([{ index: 0, uuid: H200_UUID, name: 'NVIDIA H200', computeCapability: '9.0', memoryTotalMiB: 143771, migMode: 'Disabled', migPending: 'Disabled' }]);
  });

  it('passes the H200 with its own UUID approved and named in CUDA_VISIBLE_DEVICES', () => {
    expect(evaluateStaticGate({ approved: [H200_UUID], cudaVisibleDevices: H200_UUID, minimum: DEFAULT_GPU_CLASS_MINIMUM, smi: { ok: true, devices: h200 } })).toEqual({
      ok: true,
      devices: [{ ...h200[0], product: gpuProductOf('NVIDIA H200') }],
    });
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

  it('reads the captured compute apps of the idle node as no process, and a listing with the runner', () => {
    expect(parseComputeApps(capture.files['smi-apps.csv']!)).toEqual([]);
    const listed = readFileSync(join(fixturesDir(), 'gpu', 'constructed', 'h200-ollama', 'smi-apps.csv'), 'utf8');
    expect(parseComputeApps(listed)).toEqual([{ pid: OLLAMA_RUNNER_PID, gpuUuid: H200_UUID, usedMemoryMiB: 5386 }]);
    expect(parseComputeApps(`pid, gpu_uuid, used_gpu_memory [MiB]\n7, ${H200_UUID}, [N/A]\n`)).toEqual([{ pid: 7, gpuUuid: H200_UUID, usedMemoryMiB: null }]);
  });
});

describe('GPU class by product, as nvidia-smi reports each product (constructed fixtures)', () => {
  it.each(['a100-pcie-40gb', 'a100-sxm4-40gb', 'a100-sxm4-80gb', 'a100-pcie-80gb', 'h100-sxm5-80gb', 'h100-pcie'] as const)('%s is accepted', (variant) => {
    const devices = constructed(variant);
    expect(devices[0]).toMatchObject({ name: CONSTRUCTED_GPUS[variant].name, memoryTotalMiB: CONSTRUCTED_GPUS[variant].memoryTotalMiB, migPending: 'Disabled' });
    expect(staticGate(devices)).toMatchObject({ ok: true, devices: [{ uuid: CONSTRUCTED_GPUS[variant].uuid }] });
  });

  it('accepts the A100-PCIE-40GB at the 40536 MiB it reports, which a 40 GiB numeric minimum refused', () => {
    const [a100] = constructed('a100-pcie-40gb');
    expect(a100!.memoryTotalMiB).toBe(40536);
    expect(a100!.memoryTotalMiB / 1024).toBeLessThan(40);
    expect(classifyGpu(a100!)).toMatchObject({ ok: true, product: { product: 'A100 PCIe 40GB', memoryGB: 40 } });
  });

  it.each([
    ['rtx-a6000', 'NVIDIA RTX A6000'],
    ['rtx-4090', 'NVIDIA GeForce RTX 4090'],
  ] as const)('%s fails: not an accepted data-centre part whatever its numbers', (variant, name) => {
    const devices = constructed(variant);
    const verdict = staticGate(devices);
    expect(verdict).toMatchObject({ ok: false, stage: 'gpu_class' });
    expect(!verdict.ok && verdict.reason).toContain(`(${name}) is not an accepted data-centre GPU`);
  });

  it('the RTX A6000 would have passed the old numbers-only minimum (compute ≥ 8.0, ≥ 40 GiB)', () => {
    const [a6000] = constructed('rtx-a6000');
    expect(Number(a6000!.computeCapability)).toBeGreaterThanOrEqual(8.0);
    expect(a6000!.memoryTotalMiB / 1024).toBeGreaterThanOrEqual(40);
  });

  it('refuses a V100 and a part whose compute capability or memory is not what its name says', () => {
    const v100: GpuDevice = { index: 0, uuid: V100_UUID, name: 'Tesla V100-SXM2-16GB', computeCapability: '7.0', memoryTotalMiB: 16384, migMode: '[N/A]', migPending: '[N/A]' };
    expect(staticGate([v100])).toMatchObject({ ok: false, stage: 'gpu_class' });
    const [a100] = constructed('a100-pcie-40gb');
    expect(classifyGpu({ ...a100!, computeCapability: '8.6' })).toMatchObject({ ok: false, reason: expect.stringContaining('reports compute capability 8.6, but the A100 PCIe 40GB has 8.0') });
    // A 20 GB vGPU profile of an A100 keeps the name.
    expect(classifyGpu({ ...a100!, memoryTotalMiB: 20480 })).toMatchObject({ ok: false, reason: expect.stringContaining('reports 20480 MiB; a whole A100 PCIe 40GB reports at least 39731 MiB') });
    expect(classifyGpu({ ...a100!, name: 'A100-PCIE-40GB' }).ok).toBe(true);
    // The operator's minimums still apply on top of the table: 80 GB parts only.
    expect(classifyGpu(a100!, { computeCapability: 8.0, memoryGiB: 80 })).toMatchObject({ ok: false, reason: expect.stringContaining('EXTRACTOR_GPU_MIN_MEMORY_GIB') });
    expect(classifyGpu(constructed('a100-sxm4-80gb')[0]!, { computeCapability: 8.0, memoryGiB: 80 }).ok).toBe(true);
  });

  it('checks MIG now and pending, and refuses [N/A] on an accepted part explicitly', () => {
    const [gpu] = h200;
    expect(staticGate([{ ...gpu!, migMode: 'Enabled', migPending: 'Enabled' }])).toMatchObject({ ok: false, stage: 'mig', reason: expect.stringContaining('has MIG mode enabled') });
    expect(staticGate([{ ...gpu!, migPending: 'Enabled' }])).toMatchObject({ ok: false, stage: 'mig', reason: expect.stringContaining('has MIG mode pending Enabled: the next GPU reset turns MIG on') });
    expect(staticGate([{ ...gpu!, migMode: '[N/A]', migPending: '[N/A]' }])).toMatchObject({ ok: false, stage: 'mig', reason: expect.stringContaining('reports MIG mode current [N/A]') });
    expect(staticGate([{ ...gpu!, migPending: '[N/A]' }])).toMatchObject({ ok: false, stage: 'mig', reason: expect.stringContaining('reports MIG mode pending [N/A]') });
    // A device the MIG query did not list has no pending mode: refused, not taken for off.
    expect(staticGate(parseGpuQuery(capture.files['smi-query.csv']!))).toMatchObject({ ok: false, stage: 'mig', reason: expect.stringContaining('pending empty') });
    expect(staticGate([{ ...gpu!, migMode: 'Disabled', migPending: 'Disabled' }]).ok).toBe(true);
  });
});

describe('the checks of every generation (pure)', () => {
  const gate = { approved: [H200_UUID, SECOND_H200_UUID], declared: [H200_UUID] };

  it("finds Ollama's runner on a declared, approved GPU, and nothing else", () => {
    expect(evaluateComputeApps('m', [{ pid: 1, gpuUuid: H200_UUID, usedMemoryMiB: 5000 }], gate)).toEqual({ ok: true, gpuUuids: [H200_UUID] });
    expect(evaluateComputeApps('m', [], gate)).toMatchObject({ ok: false, stage: 'gpu_process', reason: expect.stringContaining('nvidia-smi lists no process on any GPU') });
    // Approved, but not where the Ollama service was declared to run.
    expect(evaluateComputeApps('m', [{ pid: 9, gpuUuid: SECOND_H200_UUID, usedMemoryMiB: 5000 }], gate)).toMatchObject({
      ok: false,
      stage: 'gpu_process',
      reason: `nvidia-smi shows process 9 on ${SECOND_H200_UUID}: CUDA_VISIBLE_DEVICES of the Ollama service names only ${H200_UUID}; the Ollama service does not run where it was declared`,
    });
    expect(evaluateComputeApps('m', [{ pid: 1, gpuUuid: H200_UUID, usedMemoryMiB: 1 }, { pid: 2, gpuUuid: OTHER_GPU_UUID, usedMemoryMiB: 1 }], gate)).toMatchObject({
      ok: false,
      reason: expect.stringContaining(`process 2 on ${OTHER_GPU_UUID}: CUDA_VISIBLE_DEVICES of the Ollama service names only ${H200_UUID}, and it is not on the approved list`),
    });
  });

  it('holds each generation to the floor of its GPU class, from Ollama’s own counters', () => {
    const hopper = staticGate(h200);
    if (!hopper.ok) throw new Error(hopper.reason);
    expect(tokenRateFloor(hopper.devices)).toBe(MIN_TOKENS_PER_SECOND.Hopper);
    expect(tokenRateFloor(hopper.devices, 12)).toBe(12);
    const ampere = staticGate(constructed('a100-pcie-40gb'));
    if (!ampere.ok) throw new Error(ampere.reason);
    expect(tokenRateFloor(ampere.devices)).toBe(MIN_TOKENS_PER_SECOND.Ampere);

    expect(evaluateTokenRate({ evalCount: 100, evalDurationNs: 2e9 }, 35, 'NVIDIA H200 (Hopper)')).toEqual({ ok: true, tokensPerSecond: 50 });
    expect(evaluateTokenRate({ evalCount: 20, evalDurationNs: 5e9 }, 35, 'NVIDIA H200 (Hopper)')).toEqual({
      ok: false,
      stage: 'token_rate',
      reason: 'the generation ran at 4.0 tokens/s, below the 35 tokens/s floor for NVIDIA H200 (Hopper): Ollama is computing on the CPU (or sharing the GPU); its answer was not used',
    });
    expect(evaluateTokenRate({ evalCount: undefined, evalDurationNs: 5e9 }, 35, 'x')).toMatchObject({ ok: false, stage: 'token_rate', reason: expect.stringContaining('no eval_count and eval_duration') });
    expect(evaluateTokenRate({ evalCount: 10, evalDurationNs: 0 }, 35, 'x')).toMatchObject({ ok: false, stage: 'token_rate' });
  });
});

describe('runGpuGate against the fake nvidia-smi and the Ollama test server', () => {
  const fakes = new Map<string, FakeNvidiaSmi>();
  let ollama: OllamaTestServer;
  const onGpu = (uuid: string) => ({ computeApps: [ollamaComputeApp(uuid)] });
  beforeAll(async () => {
    const variants: FakeNvidiaSmiVariant[] = ['h200', 'other-uuid', 'old-gpu', 'two-gpus', 'mig-enabled', 'mig-pending', 'mig-na', 'slow', 'failing', 'missing', 'rtx-a6000', 'rtx-4090'];
    for (const v of variants) fakes.set(v, await installFakeNvidiaSmi(v, onGpu(v === 'rtx-a6000' || v === 'rtx-4090' ? CONSTRUCTED_GPUS[v].uuid : H200_UUID)));
    for (const v of CONSTRUCTED_GPU_VARIANTS) if (!fakes.has(v)) fakes.set(v, await installFakeNvidiaSmi(v, onGpu(CONSTRUCTED_GPUS[v].uuid)));
    fakes.set('idle-h200', await installFakeNvidiaSmi('h200'));
    fakes.set('runner-on-second', await installFakeNvidiaSmi('two-gpus', onGpu(SECOND_H200_UUID)));
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

  const config = (fake: string, over: Partial<GateConfig> = {}): GateConfig => ({
    approved: [H200_UUID],
    cudaVisibleDevices: H200_UUID,
    minimum: DEFAULT_GPU_CLASS_MINIMUM,
    nvidiaSmi: fakes.get(fake)!.path,
    nvidiaSmiTimeoutMs: 5_000,
    ollama: { host: ollama.url, model: 'extract:7b', timeoutMs: 5_000, keepAlive: '30m' },
    ...over,
  });

  it("passes on the H200 capture, loads the model with an explicit keep_alive and without generating, and reports the GPU Ollama's runner is on", async () => {
    ollama.reset();
    const result = await runGpuGate(config('h200'));
    expect(result).toMatchObject({ ok: true, gpuUuid: H200_UUID, gpuUuids: [H200_UUID], minTokensPerSecond: 35, model: { name: 'extract:7b', digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(ollama.calls).toEqual([]);
    expect(ollama.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/chat', 'GET /api/ps']);
    expect(ollama.requests[0]!.body).toMatchObject({ model: 'extract:7b', messages: [], keep_alive: '30m' });
  });

  it.each([
    ['other-uuid', {}, 'visible_devices', `which nvidia-smi does not list on this node (it lists ${OTHER_GPU_UUID})`],
    ['old-gpu', { approved: [V100_UUID], cudaVisibleDevices: V100_UUID }, 'gpu_class', `${V100_UUID} (Tesla V100-SXM2-16GB) is not an accepted data-centre GPU`],
    ['rtx-a6000', { approved: [CONSTRUCTED_GPUS['rtx-a6000'].uuid], cudaVisibleDevices: CONSTRUCTED_GPUS['rtx-a6000'].uuid }, 'gpu_class', '(NVIDIA RTX A6000) is not an accepted data-centre GPU'],
    ['rtx-4090', { approved: [CONSTRUCTED_GPUS['rtx-4090'].uuid], cudaVisibleDevices: CONSTRUCTED_GPUS['rtx-4090'].uuid }, 'gpu_class', '(NVIDIA GeForce RTX 4090) is not an accepted data-centre GPU'],
    ['mig-enabled', {}, 'mig', 'MIG mode enabled'],
    ['mig-pending', {}, 'mig', 'MIG mode pending Enabled'],
    ['mig-na', {}, 'mig', 'reports MIG mode current [N/A]'],
    ['failing', {}, 'nvidia_smi', "nvidia-smi failed (exit 9): the NVIDIA driver is not loaded; its output is in the extractor's log"],
    ['missing', {}, 'nvidia_smi', 'nvidia-smi not found at the path NVIDIA_SMI names'],
    ['slow', { nvidiaSmiTimeoutMs: 300 }, 'nvidia_smi', 'nvidia-smi did not answer within 300 ms'],
    ['two-gpus', { cudaVisibleDevices: `${H200_UUID},${SECOND_H200_UUID}` }, 'visible_devices', `names ${SECOND_H200_UUID}, not on the approved list`],
    ['h200', { cudaVisibleDevices: '' }, 'visible_devices', 'is empty: CUDA then sees zero GPUs'],
    ['idle-h200', {}, 'gpu_process', 'Ollama reports extract:7b loaded, yet nvidia-smi lists no process on any GPU'],
    ['runner-on-second', { approved: [H200_UUID, SECOND_H200_UUID] }, 'gpu_process', `nvidia-smi shows process ${OLLAMA_RUNNER_PID} on ${SECOND_H200_UUID}: CUDA_VISIBLE_DEVICES of the Ollama service names only ${H200_UUID}`],
    ['h200', { ollama: { host: 'http://127.0.0.1:1', model: 'extract:7b', timeoutMs: 2_000, keepAlive: '30m' } }, 'model_placement', 'loading extract:7b failed: the extraction model could not be reached (check that Ollama runs at OLLAMA_HOST)'],
  ] as const)('%s %j fails at %s: %s', async (variant, over, stage, reason) => {
    const result = await runGpuGate(config(variant, over as Partial<GateConfig>));
    expect(result).toMatchObject({ ok: false, stage });
    expect(!result.ok && result.reason).toContain(reason);
    // The reason reaches /readyz: no address, no driver message.
    expect(!result.ok && result.reason).not.toMatch(/127\.0\.0\.1|fetch failed|ECONNREFUSED|couldn't communicate/);
  });

  it.each(['a100-pcie-40gb', 'a100-sxm4-40gb', 'a100-sxm4-80gb', 'a100-pcie-80gb', 'h100-sxm5-80gb', 'h100-pcie'] as const)('passes on %s with the runner on it', async (variant) => {
    const uuid = CONSTRUCTED_GPUS[variant].uuid;
    const result = await runGpuGate(config(variant, { approved: [uuid], cudaVisibleDevices: uuid }));
    expect(result).toMatchObject({ ok: true, gpuUuid: uuid, devices: [{ name: CONSTRUCTED_GPUS[variant].name }] });
  });

  it('passes two approved H200s when only the approved one is visible', async () => {
    expect(await runGpuGate(config('two-gpus'))).toMatchObject({ ok: true, gpuUuid: H200_UUID });
  });

  it('records the GPU the runner is on, not the first one configured', async () => {
    const result = await runGpuGate(config('runner-on-second', { approved: [H200_UUID, SECOND_H200_UUID], cudaVisibleDevices: `${H200_UUID},${SECOND_H200_UUID}` }));
    expect(result).toMatchObject({ ok: true, gpuUuid: SECOND_H200_UUID, gpuUuids: [SECOND_H200_UUID] });
  });

  it('fails when Ollama holds the model partly on the CPU', async () => {
    const result = await runGpuGate(config('h200', { ollama: { host: ollama.url, model: 'split:7b', timeoutMs: 5_000, keepAlive: '30m' } }));
    expect(result).toMatchObject({ ok: false, stage: 'model_placement', reason: expect.stringContaining('52% in CPU memory') });
  });
});
