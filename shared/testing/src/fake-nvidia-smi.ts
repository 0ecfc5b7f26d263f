import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_NVIDIA_SMI_PROGRAM } from './fake-nvidia-smi-program.js';
import {
  H200_CAPTURED_COMMANDS,
  H200_COMPUTE_CAP,
  H200_CUDA_VERSION,
  H200_DRIVER_VERSION,
  H200_MEMORY_TOTAL_MIB,
  H200_NAME,
  H200_PCI_BUS_ID,
  H200_UUID,
  readH200Capture,
} from './h200-capture.js';

/**
 * A node the fake `nvidia-smi` pretends to be. All but `failing` and
 * `missing` are built from the real H200 capture:
 * - `h200`: the capture itself, byte for byte.
 * - `other-uuid`: the same GPU with another UUID (an allowlist must refuse it).
 * - `old-gpu`: a Tesla V100 (compute 7.0, 16384 MiB).
 * - `two-gpus`: the H200 plus a second H200 (index 1, another UUID and bus id).
 * - `mig-enabled`: the H200 with MIG mode on and no MIG instance created.
 * - `slow`: the H200 capture, answered only after a long stall (a hung driver);
 *   the stall is FAKE_NVIDIA_SMI_DELAY_MS from the caller's environment, default
 *   SLOW_NVIDIA_SMI_DELAY_MS.
 * - `failing`: the driver is not loaded (nvidia-smi's message, exit 9).
 * - `missing`: no executable at the returned path.
 */
export type FakeNvidiaSmiVariant = 'h200' | 'other-uuid' | 'old-gpu' | 'two-gpus' | 'mig-enabled' | 'slow' | 'failing' | 'missing';

/** Every variant, for tests that loop over them. */
export const FAKE_NVIDIA_SMI_VARIANTS: readonly FakeNvidiaSmiVariant[] = ['h200', 'other-uuid', 'old-gpu', 'two-gpus', 'mig-enabled', 'slow', 'failing', 'missing'];

/** How long the `slow` variant stalls before answering, unless FAKE_NVIDIA_SMI_DELAY_MS says otherwise. */
export const SLOW_NVIDIA_SMI_DELAY_MS = 60_000;

/** UUID of the `other-uuid` variant's GPU. */
export const OTHER_GPU_UUID = 'GPU-3b7d2e51-9c4a-4f08-8e6b-52a1c0d7e9f4';
/** UUID of the `old-gpu` variant's V100. */
export const V100_UUID = 'GPU-6a1c9e07-2f5b-3d84-b0e3-7c95d4a21f68';
/** UUID of the second H200 in the `two-gpus` variant. */
export const SECOND_H200_UUID = 'GPU-c41e8b2d-7a63-4e9f-91d0-3f5a6b8c2e17';
/** The line nvidia-smi prints (exit 9) when it cannot reach the driver. */
export const NVIDIA_SMI_DRIVER_FAILURE =
  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.";

/** One GPU in the fake's data model; `--query-gpu` output is generated from it. */
export interface FakeGpu {
  index: number;
  uuid: string;
  name: string;
  architecture: string;
  computeCap: string;
  memoryTotalMiB: number;
  memoryReservedMiB: number;
  memoryUsedMiB: number;
  /** As the driver reports it: not always total − reserved − used (rounding). */
  memoryFreeMiB: number;
  pciBusId: string;
  migMode: 'Enabled' | 'Disabled';
  serial: string;
}

/** What the generated script is given (JSON, prepended to the program). */
interface FakeNvidiaSmiModel {
  failing?: string;
  /** Milliseconds to stall before answering (the `slow` variant). */
  delayMs?: number;
  /** argv joined by NUL → exact stdout, for the captured command lines. */
  exact: Record<string, string>;
  xml: string;
  gpus: FakeGpu[];
  driverVersion: string;
  cudaVersion: string;
}

const CAPTURED_H200: FakeGpu = {
  index: 0,
  uuid: H200_UUID,
  name: H200_NAME,
  architecture: 'Hopper',
  computeCap: H200_COMPUTE_CAP,
  memoryTotalMiB: H200_MEMORY_TOTAL_MIB,
  memoryReservedMiB: 616,
  memoryUsedMiB: 0,
  memoryFreeMiB: 143156,
  pciBusId: H200_PCI_BUS_ID,
  migMode: 'Disabled',
  serial: '1654024075865',
};

/** The GPUs each variant reports (none for `failing` and `missing`). */
export function fakeGpus(variant: FakeNvidiaSmiVariant): FakeGpu[] {
  switch (variant) {
    case 'h200':
    case 'slow':
      return [{ ...CAPTURED_H200 }];
    case 'other-uuid':
      return [{ ...CAPTURED_H200, uuid: OTHER_GPU_UUID }];
    case 'old-gpu':
      return [
        {
          ...CAPTURED_H200,
          uuid: V100_UUID,
          name: 'Tesla V100-SXM2-16GB',
          architecture: 'Volta',
          computeCap: '7.0',
          memoryTotalMiB: 16384,
          memoryReservedMiB: 256,
          memoryFreeMiB: 16128,
          serial: '0323617004961',
        },
      ];
    case 'two-gpus':
      return [
        { ...CAPTURED_H200 },
        { ...CAPTURED_H200, index: 1, uuid: SECOND_H200_UUID, pciBusId: '00000000:00:07.0', serial: '1654024076012' },
      ];
    case 'mig-enabled':
      return [{ ...CAPTURED_H200, migMode: 'Enabled' }];
    case 'failing':
    case 'missing':
      return [];
  }
}

/** An installed fake; point `NVIDIA_SMI` at `path`. */
export interface FakeNvidiaSmi {
  /** The executable (for `missing`, a path where nothing exists). */
  readonly path: string;
  /** The temporary folder holding it. */
  readonly dir: string;
  readonly variant: FakeNvidiaSmiVariant;
  /** The GPUs it reports. */
  readonly gpus: readonly FakeGpu[];
  /** Removes the temporary folder; safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * Writes an executable `nvidia-smi` for the variant into a fresh temporary
 * folder. For `h200` the captured command lines print the captured bytes;
 * other `--query-gpu` field lists are generated from the GPU model (honouring
 * `noheader` and `nounits`); unknown arguments print nvidia-smi's
 * invalid-arguments line and exit 2.
 */
export async function installFakeNvidiaSmi(variant: FakeNvidiaSmiVariant): Promise<FakeNvidiaSmi> {
  const dir = await mkdtemp(join(tmpdir(), 'vouch-nvidia-smi-'));
  const path = join(dir, 'nvidia-smi');
  const gpus = fakeGpus(variant);
  if (variant !== 'missing') {
    await writeFile(path, fakeNvidiaSmiScript(variant));
    await chmod(path, 0o755);
  }
  let done: Promise<void> | undefined;
  return {
    path,
    dir,
    variant,
    gpus,
    cleanup() {
      done ??= rm(dir, { recursive: true, force: true });
      return done;
    },
  };
}

/** The script text installFakeNvidiaSmi writes, for callers that place it themselves. */
export function fakeNvidiaSmiScript(variant: Exclude<FakeNvidiaSmiVariant, 'missing'>): string {
  const capture = readH200Capture();
  const gpus = fakeGpus(variant);
  const model: FakeNvidiaSmiModel = {
    exact: {},
    xml: fakeSmiXml(capture.files['smi-q.xml'] ?? '', gpus),
    gpus,
    driverVersion: H200_DRIVER_VERSION,
    cudaVersion: H200_CUDA_VERSION,
  };
  if (variant === 'failing') model.failing = NVIDIA_SMI_DRIVER_FAILURE;
  if (variant === 'slow') model.delayMs = SLOW_NVIDIA_SMI_DELAY_MS;
  if (variant === 'h200' || variant === 'slow') {
    for (const { file, args } of H200_CAPTURED_COMMANDS) model.exact[args.join('\u0000')] = capture.files[file] ?? '';
  }
  // The absolute node path: services may spawn with a PATH that has no node.
  // A shebang cannot hold spaces, so fall back to env in that case.
  const shebang = /\s/.test(process.execPath) ? '#!/usr/bin/env node' : `#!${process.execPath}`;
  return `${shebang}\n// Fake nvidia-smi (${variant}) written by @vouch/testing.\nconst MODEL = ${JSON.stringify(model)};\n${FAKE_NVIDIA_SMI_PROGRAM}`;
}

/**
 * `nvidia-smi -q -x` for the given GPUs, made by editing the captured H200
 * document so every other element stays as the real driver printed it.
 */
export function fakeSmiXml(capturedXml: string, gpus: readonly FakeGpu[]): string {
  const block = /\t<gpu id="[^"]*">\n[\s\S]*?\n\t<\/gpu>\n/.exec(capturedXml);
  if (!block) throw new Error('the captured nvidia-smi -q -x has no <gpu> element');
  const before = capturedXml.slice(0, block.index).replace(/<attached_gpus>\d+<\/attached_gpus>/, `<attached_gpus>${gpus.length}</attached_gpus>`);
  const after = capturedXml.slice(block.index + block[0].length);
  return before + gpus.map((gpu) => gpuXml(block[0], gpu)).join('') + after;
}

function gpuXml(template: string, gpu: FakeGpu): string {
  const [, bus = '00', device = '00'] = /^[0-9A-Fa-f]+:([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\./.exec(gpu.pciBusId) ?? [];
  const tag = (xml: string, name: string, value: string): string => xml.replace(new RegExp(`<${name}>[^<]*</${name}>`), `<${name}>${value}</${name}>`);
  let xml = template.replace(/<gpu id="[^"]*">/, `<gpu id="${gpu.pciBusId}">`);
  xml = tag(xml, 'product_name', gpu.name);
  xml = tag(xml, 'product_architecture', gpu.architecture);
  xml = tag(xml, 'current_mig', gpu.migMode);
  xml = tag(xml, 'pending_mig', gpu.migMode);
  xml = tag(xml, 'serial', gpu.serial);
  xml = tag(xml, 'uuid', gpu.uuid);
  xml = tag(xml, 'minor_number', String(gpu.index));
  xml = tag(xml, 'pci_bus', bus);
  xml = tag(xml, 'pci_device', device);
  xml = tag(xml, 'pci_bus_id', gpu.pciBusId);
  // Only the framebuffer totals change; BAR1 and CC memory keep their capture.
  return xml.replace(/<fb_memory_usage>[\s\S]*?<\/fb_memory_usage>/, (fb) => {
    let out = tag(fb, 'total', `${gpu.memoryTotalMiB} MiB`);
    out = tag(out, 'reserved', `${gpu.memoryReservedMiB} MiB`);
    out = tag(out, 'used', `${gpu.memoryUsedMiB} MiB`);
    return tag(out, 'free', `${gpu.memoryFreeMiB} MiB`);
  });
}
