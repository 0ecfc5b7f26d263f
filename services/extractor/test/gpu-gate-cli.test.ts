import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H200_UUID, OTHER_GPU_UUID, installFakeNvidiaSmi, type FakeNvidiaSmi } from '@vouch/testing';

const CLI = fileURLToPath(new URL('../src/cli/gpu-gate.ts', import.meta.url));

describe('the gate CLI (what an operator runs on a node)', () => {
  let smi: FakeNvidiaSmi;
  beforeAll(async () => {
    smi = await installFakeNvidiaSmi('h200');
  });
  afterAll(async () => {
    await smi?.cleanup();
  });
  const run = (uuid: string) => {
    const r = spawnSync(process.execPath, ['--conditions=@vouch/source', '--import', 'tsx', CLI], {
      env: { PATH: process.env.PATH ?? '', NVIDIA_SMI: smi.path, EXTRACTOR_APPROVED_GPU_UUIDS: uuid, OLLAMA_CUDA_VISIBLE_DEVICES: uuid },
      encoding: 'utf8',
    });
    return { status: r.status, out: JSON.parse(r.stdout) as Record<string, unknown> };
  };

  it("accepts the node's own UUID and rejects another, saying why", () => {
    // Without OLLAMA_HOST no model is loaded, so no runner is observed: the answer lists the devices that passed.
    const own = run(H200_UUID);
    expect(own).toMatchObject({ status: 0, out: { ok: true, modelChecked: false, gpuUuids: [], devices: [{ uuid: H200_UUID, product: { product: 'H200' } }], minTokensPerSecond: 35 } });
    expect(own.out).not.toHaveProperty('gpuUuid');
    const other = run(OTHER_GPU_UUID);
    expect(other).toMatchObject({ status: 1, out: { ok: false, stage: 'visible_devices' } });
    expect(String(other.out.reason)).toContain(`names ${OTHER_GPU_UUID}, which nvidia-smi does not list on this node`);
  });
});
