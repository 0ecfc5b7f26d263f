import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSTRUCTED_GPUS,
  CONSTRUCTED_GPU_VARIANTS,
  FAKE_NVIDIA_SMI_VARIANTS,
  OLLAMA_RUNNER_PID,
  H200_CAPTURED_COMMANDS,
  H200_COMPUTE_CAP,
  H200_CUDA_VERSION,
  H200_DRIVER_VERSION,
  H200_MEMORY_TOTAL_MIB,
  H200_NAME,
  H200_PCI_BUS_ID,
  H200_UUID,
  NVIDIA_SMI_DRIVER_FAILURE,
  OTHER_GPU_UUID,
  SECOND_H200_UUID,
  V100_UUID,
  h200CaptureDir,
  fixturesDir,
  installFakeNvidiaSmi,
  ollamaComputeApp,
  readH200Capture,
  repoRoot,
} from '../src/index.js';
import type { FakeNvidiaSmi, FakeNvidiaSmiVariant } from '../src/index.js';

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

function run(path: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // A bare environment, as a service might spawn it with.
    execFile(path, [...args], { env, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ stdout, stderr, code });
    });
  });
}

const QUERY = '--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current';
const MIG_QUERY = '--query-gpu=index,uuid,mig.mode.current,mig.mode.pending';
const APPS_QUERY = '--query-compute-apps=pid,gpu_uuid,used_memory';
const constructedDir = (...parts: string[]) => join(fixturesDir(), 'gpu', 'constructed', ...parts);

describe('H200 capture', () => {
  it('lives in the repository, with a note of where it came from', () => {
    expect(h200CaptureDir()).toBe(join(repoRoot(), 'shared', 'testing', 'fixtures', 'gpu', 'nvidia-h200'));
    expect(existsSync(join(fixturesDir(), 'gpu', 'README.md'))).toBe(true);
  });

  it('matches the exported constants', () => {
    const capture = readH200Capture();
    expect(capture.files['smi-L.txt']).toBe(`GPU 0: ${H200_NAME} (UUID: ${H200_UUID})\n`);
    expect(capture.files['smi-query.csv']).toContain(
      `0, ${H200_UUID}, ${H200_NAME}, ${H200_COMPUTE_CAP}, ${H200_MEMORY_TOTAL_MIB} MiB, ${H200_DRIVER_VERSION}, ${H200_PCI_BUS_ID}, Disabled\n`,
    );
    expect(capture.files['smi-q.xml']).toContain(`<cuda_version>${H200_CUDA_VERSION}</cuda_version>`);
    expect(capture.env.CUDA_VERSION).toBe('13.0.2');
    expect(capture.cudaVisibleDevices).toContainEqual({ value: H200_UUID, deviceCount: 1, deviceNames: [H200_NAME] });
    expect(capture.cudaVisibleDevices).toContainEqual({ value: '', deviceCount: 0, deviceNames: [] });
  });
});

describe('installFakeNvidiaSmi', () => {
  const installed = new Map<FakeNvidiaSmiVariant, FakeNvidiaSmi>();
  beforeAll(async () => {
    for (const variant of FAKE_NVIDIA_SMI_VARIANTS) installed.set(variant, await installFakeNvidiaSmi(variant));
  });
  afterAll(async () => {
    for (const fake of installed.values()) await fake.cleanup();
    for (const fake of installed.values()) expect(existsSync(fake.dir)).toBe(false);
  });
  const smi = (variant: FakeNvidiaSmiVariant): string => installed.get(variant)?.path ?? '';

  it('h200 prints the captured bytes for every captured command line', async () => {
    for (const { file, args } of H200_CAPTURED_COMMANDS) {
      const expected = await readFile(join(h200CaptureDir(), file), 'utf8');
      const result = await run(smi('h200'), args);
      expect({ file, ...result }).toEqual({ file, stdout: expected, stderr: '', code: 0 });
    }
  });

  it('h200 generates the captured output from its model for reordered arguments', async () => {
    // Not the captured argv, so these go through the generator: it must agree with the capture.
    const capture = readH200Capture();
    expect((await run(smi('h200'), ['--format=csv', QUERY])).stdout).toBe(capture.files['smi-query.csv']);
    expect((await run(smi('h200'), ['--format=csv,nounits,noheader', '--query-gpu=index,uuid,name,compute_cap,memory.total'])).stdout).toBe(
      capture.files['smi-query-noheader.csv'],
    );
    expect((await run(smi('h200'), ['-x', '-q'])).stdout).toBe(capture.files['smi-q.xml']);
    expect((await run(smi('h200'), ['--list-gpus'])).stdout).toBe(capture.files['smi-L.txt']);
    expect((await run(smi('h200'), ['--format=csv', '--query-compute-apps=pid,gpu_uuid,used_memory'])).stdout).toBe(capture.files['smi-apps.csv']);
  });

  it('answers other field lists, honouring noheader and nounits', async () => {
    const withUnits = await run(smi('h200'), ['--query-gpu=uuid,memory.total,memory.used,memory.free', '--format=csv']);
    expect(withUnits).toEqual({
      stdout: `uuid, memory.total [MiB], memory.used [MiB], memory.free [MiB]\n${H200_UUID}, 143771 MiB, 0 MiB, 143156 MiB\n`,
      stderr: '',
      code: 0,
    });
    const bare = await run(smi('h200'), ['--query-gpu=name,compute_cap,memory.total', '--format=csv,nounits']);
    expect(bare.stdout).toBe('name, compute_cap, memory.total [MiB]\nNVIDIA H200, 9.0, 143771\n');
    const selected = await run(smi('two-gpus'), ['--query-gpu=index,uuid', '--format=csv,noheader', '-i', '1']);
    expect(selected.stdout).toBe(`1, ${SECOND_H200_UUID}\n`);
  });

  it('refuses unknown arguments and fields like nvidia-smi', async () => {
    const unknown = await run(smi('h200'), ['--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
    const field = await run(smi('h200'), ['--query-gpu=index,bogus.field', '--format=csv']);
    expect(field.code).toBe(2);
    expect(field.stdout).toContain('Field "bogus.field" is not a valid field to query.');
    const noFormat = await run(smi('h200'), ['--query-gpu=index']);
    expect(noFormat.code).toBe(2);
    const noDevice = await run(smi('h200'), ['-L', '-i', H200_UUID.replace('fd98', '0000')]);
    expect(noDevice).toMatchObject({ stdout: 'No devices were found\n', code: 6 });
  });

  it('other-uuid is the same GPU under another UUID', async () => {
    expect((await run(smi('other-uuid'), ['-L'])).stdout).toBe(`GPU 0: NVIDIA H200 (UUID: ${OTHER_GPU_UUID})\n`);
    const csv = await run(smi('other-uuid'), [QUERY, '--format=csv']);
    expect(csv.stdout).toBe(readH200Capture().files['smi-query.csv']?.replace(H200_UUID, OTHER_GPU_UUID));
    const xml = (await run(smi('other-uuid'), ['-q', '-x'])).stdout;
    expect(xml).toContain(`<uuid>${OTHER_GPU_UUID}</uuid>`);
    expect(xml).not.toContain(H200_UUID);
  });

  it('old-gpu is a V100 with compute capability 7.0 and 16 GiB', async () => {
    const csv = await run(smi('old-gpu'), ['--query-gpu=index,uuid,name,compute_cap,memory.total', '--format=csv,noheader,nounits']);
    expect(csv.stdout).toBe(`0, ${V100_UUID}, Tesla V100-SXM2-16GB, 7.0, 16384\n`);
    const xml = (await run(smi('old-gpu'), ['-q', '-x'])).stdout;
    expect(xml).toContain('<product_name>Tesla V100-SXM2-16GB</product_name>');
    expect(xml).toContain('<product_architecture>Volta</product_architecture>');
    expect(xml).toContain('<total>16384 MiB</total>');
  });

  it('two-gpus lists a second H200 with its own index, UUID and bus id', async () => {
    expect((await run(smi('two-gpus'), ['-L'])).stdout).toBe(
      `GPU 0: NVIDIA H200 (UUID: ${H200_UUID})\nGPU 1: NVIDIA H200 (UUID: ${SECOND_H200_UUID})\n`,
    );
    const csv = await run(smi('two-gpus'), [QUERY, '--format=csv,noheader']);
    expect(csv.stdout.split('\n')).toEqual([
      `0, ${H200_UUID}, NVIDIA H200, 9.0, 143771 MiB, 580.159.04, 00000000:00:06.0, Disabled`,
      `1, ${SECOND_H200_UUID}, NVIDIA H200, 9.0, 143771 MiB, 580.159.04, 00000000:00:07.0, Disabled`,
      '',
    ]);
    const xml = (await run(smi('two-gpus'), ['-q', '-x'])).stdout;
    expect(xml).toContain('<attached_gpus>2</attached_gpus>');
    expect(xml.match(/<gpu id="/g)).toHaveLength(2);
    expect(xml).toContain('<gpu id="00000000:00:07.0">');
    expect(xml.trimEnd().endsWith('</nvidia_smi_log>')).toBe(true);
  });

  it('mig-enabled reports MIG mode Enabled', async () => {
    const csv = await run(smi('mig-enabled'), ['--query-gpu=uuid,mig.mode.current', '--format=csv,noheader']);
    expect(csv.stdout).toBe(`${H200_UUID}, Enabled\n`);
    expect((await run(smi('mig-enabled'), ['-q', '-x'])).stdout).toContain('<current_mig>Enabled</current_mig>');
  });

  it('slow answers with the H200 capture only after its stall', async () => {
    const started = Date.now();
    const out = await run(smi('slow'), ['-L'], { FAKE_NVIDIA_SMI_DELAY_MS: '300' });
    expect(out.stdout).toBe(readH200Capture().files['smi-L.txt']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('failing prints the driver failure and exits 9 whatever it is asked', async () => {
    for (const args of [['-L'], [QUERY, '--format=csv'], ['-q', '-x']]) {
      expect(await run(smi('failing'), args)).toEqual({ stdout: `${NVIDIA_SMI_DRIVER_FAILURE}\n`, stderr: '', code: 9 });
    }
  });

  it('mig-pending reports MIG off now and on after the next reset; mig-na reports [N/A] for both', async () => {
    expect((await run(smi('mig-pending'), [MIG_QUERY, '--format=csv,noheader'])).stdout).toBe(`0, ${H200_UUID}, Disabled, Enabled\n`);
    const pendingXml = (await run(smi('mig-pending'), ['-q', '-x'])).stdout;
    expect(pendingXml).toContain('<current_mig>Disabled</current_mig>');
    expect(pendingXml).toContain('<pending_mig>Enabled</pending_mig>');
    expect((await run(smi('mig-na'), [MIG_QUERY, '--format=csv,noheader'])).stdout).toBe(`0, ${H200_UUID}, [N/A], [N/A]\n`);
    expect((await run(smi('mig-na'), ['-q', '-x'])).stdout).toContain('<current_mig>N/A</current_mig>');
    // The capture's own XML: MIG off, and no change pending.
    expect((await run(smi('h200'), [MIG_QUERY, '--format=csv'])).stdout).toBe(`index, uuid, mig.mode.current, mig.mode.pending\n0, ${H200_UUID}, Disabled, Disabled\n`);
  });

  it.each(CONSTRUCTED_GPU_VARIANTS)('%s prints its constructed fixtures byte for byte', async (variant) => {
    const commands: Array<[string, string[]]> = [
      ['smi-L.txt', ['-L']],
      ['smi-query.csv', [QUERY, '--format=csv']],
      ['smi-mig.csv', [MIG_QUERY, '--format=csv']],
    ];
    for (const [file, args] of commands) {
      const expected = await readFile(constructedDir(variant, file), 'utf8');
      expect({ file, ...(await run(smi(variant), args)) }).toEqual({ file, stdout: expected, stderr: '', code: 0 });
    }
    const xml = (await run(smi(variant), ['-q', '-x'])).stdout;
    expect(xml).toContain(`<product_name>${CONSTRUCTED_GPUS[variant].name}</product_name>`);
    expect(xml).toContain(`<total>${CONSTRUCTED_GPUS[variant].memoryTotalMiB} MiB</total>`);
  });

  it('marks the constructed fixtures as constructed, beside the real capture', async () => {
    const readme = await readFile(constructedDir('README.md'), 'utf8');
    expect(readme).toContain('Nothing in this folder was printed by a real `nvidia-smi`.');
    for (const variant of CONSTRUCTED_GPU_VARIANTS) expect(readme).toContain(`| ${variant} |`);
    expect(await readFile(join(fixturesDir(), 'gpu', 'README.md'), 'utf8')).toContain('written by hand, not captured');
  });

  it("lists compute apps: none on the idle capture, Ollama's runner once given, and a change at the next call", async () => {
    const fake = await installFakeNvidiaSmi('two-gpus', { computeApps: [ollamaComputeApp(H200_UUID)] });
    try {
      const idle = await run(smi('h200'), [APPS_QUERY, '--format=csv']);
      expect(idle.stdout).toBe(readH200Capture().files['smi-apps.csv']);
      expect((await run(fake.path, [APPS_QUERY, '--format=csv'])).stdout).toBe(await readFile(constructedDir('h200-ollama', 'smi-apps.csv'), 'utf8'));
      await fake.setComputeApps([ollamaComputeApp(SECOND_H200_UUID, { usedMemoryMiB: null }), { pid: 7, processName: '/usr/bin/python3', gpuUuid: H200_UUID, usedMemoryMiB: 812 }]);
      expect((await run(fake.path, [APPS_QUERY, '--format=csv,noheader,nounits'])).stdout).toBe(`${OLLAMA_RUNNER_PID}, ${SECOND_H200_UUID}, [N/A]\n7, ${H200_UUID}, 812\n`);
      expect((await run(fake.path, ['--query-compute-apps=pid,process_name,gpu_name', '--format=csv', '-i', '0'])).stdout).toBe('pid, process_name, gpu_name\n7, /usr/bin/python3, NVIDIA H200\n');
    } finally {
      await fake.cleanup();
    }
  });

  it('missing gives a path where nothing exists', async () => {
    const missing = installed.get('missing');
    expect(missing?.path).toMatch(/nvidia-smi$/);
    expect(existsSync(missing?.path ?? '')).toBe(false);
    const code = await new Promise((resolve) => execFile(missing?.path ?? '', ['-L'], (error) => resolve(error?.code)));
    expect(code).toBe('ENOENT');
  });
});
