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
 * A node the fake `nvidia-smi` pretends to be. Built from the real H200
 * capture:
 * - `h200`: the capture itself, byte for byte.
 * - `other-uuid`: the same GPU with another UUID (an allowlist must refuse it).
 * - `old-gpu`: a Tesla V100 (compute 7.0, 16384 MiB).
 * - `two-gpus`: the H200 plus a second H200 (index 1, another UUID and bus id).
 * - `mig-enabled`: the H200 with MIG mode on and no MIG instance created.
 * - `mig-pending`: the H200 with MIG off now and on after the next GPU reset.
 * - `mig-na`: the H200 reporting its MIG modes as `[N/A]`.
 * - `slow`: the H200 capture, answered only after a long stall (a hung driver);
 *   the stall is FAKE_NVIDIA_SMI_DELAY_MS from the caller's environment, default
 *   SLOW_NVIDIA_SMI_DELAY_MS.
 * - `failing`: the driver is not loaded (nvidia-smi's message, exit 9).
 * - `missing`: no executable at the returned path.
 *
 * Constructed from nvidia-smi's documented output format, not captured
 * (shared/testing/fixtures/gpu/constructed, where their expected outputs are
 * kept): the A100 family (`a100-pcie-40gb`, `a100-sxm4-40gb`,
 * `a100-sxm4-80gb`, `a100-pcie-80gb`), the H100 (`h100-sxm5-80gb`,
 * `h100-pcie`), a workstation card (`rtx-a6000`) and a consumer card
 * (`rtx-4090`).
 */
export type FakeNvidiaSmiVariant = (typeof FAKE_NVIDIA_SMI_VARIANTS)[number];

/** The constructed single-GPU products (fixtures/gpu/constructed/<variant>). */
export const CONSTRUCTED_GPU_VARIANTS = ['a100-pcie-40gb', 'a100-sxm4-40gb', 'a100-sxm4-80gb', 'a100-pcie-80gb', 'h100-sxm5-80gb', 'h100-pcie', 'rtx-a6000', 'rtx-4090'] as const;
export type ConstructedGpuVariant = (typeof CONSTRUCTED_GPU_VARIANTS)[number];

/** Every variant, for tests that loop over them. */
export const FAKE_NVIDIA_SMI_VARIANTS = [
  'h200',
  'other-uuid',
  'old-gpu',
  'two-gpus',
  'mig-enabled',
  'mig-pending',
  'mig-na',
  'slow',
  'failing',
  'missing',
  ...CONSTRUCTED_GPU_VARIANTS,
] as const;

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

/** A MIG mode as `--query-gpu=mig.mode.*` prints it; `[N/A]` where the driver reports none. */
export type FakeMigMode = 'Enabled' | 'Disabled' | '[N/A]';

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
  migMode: FakeMigMode;
  /** The MIG mode after the next GPU reset (`mig.mode.pending`). */
  migPending: FakeMigMode;
  serial: string;
}

/** One process using a GPU, as `--query-compute-apps` lists it. */
export interface FakeComputeApp {
  pid: number;
  /** The executable's path, as nvidia-smi prints `process_name`. */
  processName: string;
  /** The GPU it runs on (any UUID: a GPU of another node is how a wrong placement looks). */
  gpuUuid: string;
  /** `used_memory` in MiB; null prints `[N/A]` (what some containers and drivers report). */
  usedMemoryMiB: number | null;
}

/** The pid the Ollama runner gets in the tests' compute-apps listings. */
export const OLLAMA_RUNNER_PID = 48213;

/** Ollama's runner process holding a model on the GPU `gpuUuid`, as nvidia-smi lists it. */
export function ollamaComputeApp(gpuUuid: string, opts: { pid?: number; usedMemoryMiB?: number | null } = {}): FakeComputeApp {
  return { pid: opts.pid ?? OLLAMA_RUNNER_PID, processName: '/usr/local/bin/ollama', gpuUuid, usedMemoryMiB: opts.usedMemoryMiB === undefined ? 5_386 : opts.usedMemoryMiB };
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
  /** The processes on the GPUs when no compute-apps.json lies beside the script. */
  apps: FakeComputeApp[];
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
  migPending: 'Disabled',
  serial: '1654024075865',
};

/**
 * The constructed products: names, compute capabilities and memory totals as
 * nvidia-smi reports them for these parts (fixtures/gpu/constructed/README.md
 * gives the sources). UUIDs, serials and bus ids are made up.
 */
export const CONSTRUCTED_GPUS: Readonly<Record<ConstructedGpuVariant, FakeGpu>> = {
  'a100-pcie-40gb': {
    ...CAPTURED_H200,
    uuid: 'GPU-2f6d8a41-93c7-4e15-b0a8-7d1c5e9f3a62',
    name: 'NVIDIA A100-PCIE-40GB',
    architecture: 'Ampere',
    computeCap: '8.0',
    memoryTotalMiB: 40536,
    memoryReservedMiB: 421,
    memoryFreeMiB: 40114,
    pciBusId: '00000000:3B:00.0',
    serial: '1321020022541',
  },
  'a100-sxm4-40gb': {
    ...CAPTURED_H200,
    uuid: 'GPU-8c1b4e72-05da-4f39-a6e3-91f2d7c840b5',
    name: 'NVIDIA A100-SXM4-40GB',
    architecture: 'Ampere',
    computeCap: '8.0',
    memoryTotalMiB: 40960,
    memoryReservedMiB: 426,
    memoryFreeMiB: 40533,
    pciBusId: '00000000:07:00.0',
    serial: '1560220013775',
  },
  'a100-sxm4-80gb': {
    ...CAPTURED_H200,
    uuid: 'GPU-5e93c0d4-7b21-4a86-8f4e-0c6a2b19d7e3',
    name: 'NVIDIA A100-SXM4-80GB',
    architecture: 'Ampere',
    computeCap: '8.0',
    memoryTotalMiB: 81920,
    memoryReservedMiB: 571,
    memoryFreeMiB: 81348,
    pciBusId: '00000000:07:00.0',
    serial: '1563221005412',
  },
  'a100-pcie-80gb': {
    ...CAPTURED_H200,
    uuid: 'GPU-b47e2a19-6c3d-4f80-9d15-e8a0c2f6b351',
    name: 'NVIDIA A100 80GB PCIe',
    architecture: 'Ampere',
    computeCap: '8.0',
    memoryTotalMiB: 81920,
    memoryReservedMiB: 571,
    memoryFreeMiB: 81348,
    pciBusId: '00000000:CA:00.0',
    serial: '1322521037804',
  },
  'h100-sxm5-80gb': {
    ...CAPTURED_H200,
    uuid: 'GPU-d0a5f3e8-1b4c-4d27-8a96-5f7e3c2b10a4',
    name: 'NVIDIA H100 80GB HBM3',
    architecture: 'Hopper',
    computeCap: '9.0',
    memoryTotalMiB: 81559,
    memoryReservedMiB: 570,
    memoryFreeMiB: 80988,
    pciBusId: '00000000:18:00.0',
    serial: '1652223015238',
  },
  'h100-pcie': {
    ...CAPTURED_H200,
    uuid: 'GPU-71c8e0b3-4a5f-4e92-b63d-2d9f8a1e6c07',
    name: 'NVIDIA H100 PCIe',
    architecture: 'Hopper',
    computeCap: '9.0',
    memoryTotalMiB: 81559,
    memoryReservedMiB: 570,
    memoryFreeMiB: 80988,
    pciBusId: '00000000:41:00.0',
    serial: '1650523008816',
  },
  'rtx-a6000': {
    ...CAPTURED_H200,
    uuid: 'GPU-4a2e9c61-f08b-4d73-95c2-6b1e0d8a7f39',
    name: 'NVIDIA RTX A6000',
    architecture: 'Ampere',
    computeCap: '8.6',
    memoryTotalMiB: 49140,
    memoryReservedMiB: 373,
    memoryFreeMiB: 48766,
    pciBusId: '00000000:65:00.0',
    migMode: '[N/A]',
    migPending: '[N/A]',
    serial: '1320921048893',
  },
  'rtx-4090': {
    ...CAPTURED_H200,
    uuid: 'GPU-9f3b7d25-c6e1-4a08-b2f4-83d0e5c1a96b',
    name: 'NVIDIA GeForce RTX 4090',
    architecture: 'Ada Lovelace',
    computeCap: '8.9',
    memoryTotalMiB: 24564,
    memoryReservedMiB: 346,
    memoryFreeMiB: 24217,
    pciBusId: '00000000:01:00.0',
    migMode: '[N/A]',
    migPending: '[N/A]',
    serial: '[N/A]',
  },
};

function isConstructed(variant: FakeNvidiaSmiVariant): variant is ConstructedGpuVariant {
  return (CONSTRUCTED_GPU_VARIANTS as readonly string[]).includes(variant);
}

/** The GPUs each variant reports (none for `failing` and `missing`). */
export function fakeGpus(variant: FakeNvidiaSmiVariant): FakeGpu[] {
  if (isConstructed(variant)) return [{ ...CONSTRUCTED_GPUS[variant] }];
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
          migMode: '[N/A]',
          migPending: '[N/A]',
          serial: '0323617004961',
        },
      ];
    case 'two-gpus':
      return [
        { ...CAPTURED_H200 },
        { ...CAPTURED_H200, index: 1, uuid: SECOND_H200_UUID, pciBusId: '00000000:00:07.0', serial: '1654024076012' },
      ];
    case 'mig-enabled':
      return [{ ...CAPTURED_H200, migMode: 'Enabled', migPending: 'Enabled' }];
    case 'mig-pending':
      return [{ ...CAPTURED_H200, migPending: 'Enabled' }];
    case 'mig-na':
      return [{ ...CAPTURED_H200, migMode: '[N/A]', migPending: '[N/A]' }];
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
  /**
   * Replaces the processes `--query-compute-apps` lists from the next call
   * on (a model loaded, unloaded, or placed on another GPU meanwhile).
   */
  setComputeApps(apps: readonly FakeComputeApp[]): Promise<void>;
  /** Removes the temporary folder; safe to call twice. */
  cleanup(): Promise<void>;
}

/** The file beside the script that holds its compute apps (read at every call). */
const COMPUTE_APPS_FILE = 'compute-apps.json';

/**
 * Writes an executable `nvidia-smi` for the variant into a fresh temporary
 * folder. For `h200` the captured command lines print the captured bytes
 * (the compute-apps capture only while no process is listed: the node was idle
 * when it was taken); other `--query-gpu` and `--query-compute-apps` field
 * lists are generated from the model (honouring `noheader` and `nounits`);
 * unknown arguments print nvidia-smi's invalid-arguments line and exit 2.
 * `computeApps` are the processes on the GPUs (none by default, as captured).
 */
export async function installFakeNvidiaSmi(variant: FakeNvidiaSmiVariant, opts: { computeApps?: readonly FakeComputeApp[] } = {}): Promise<FakeNvidiaSmi> {
  const dir = await mkdtemp(join(tmpdir(), 'vouch-nvidia-smi-'));
  const path = join(dir, 'nvidia-smi');
  const gpus = fakeGpus(variant);
  const writeApps = (apps: readonly FakeComputeApp[]) => writeFile(join(dir, COMPUTE_APPS_FILE), JSON.stringify(apps));
  if (variant !== 'missing') {
    await writeFile(path, fakeNvidiaSmiScript(variant));
    await chmod(path, 0o755);
    await writeApps(opts.computeApps ?? []);
  }
  let done: Promise<void> | undefined;
  return {
    path,
    dir,
    variant,
    gpus,
    setComputeApps: (apps) => writeApps(apps),
    cleanup() {
      done ??= rm(dir, { recursive: true, force: true });
      return done;
    },
  };
}

/** The script text installFakeNvidiaSmi writes, for callers that place it themselves. */
export function fakeNvidiaSmiScript(variant: Exclude<FakeNvidiaSmiVariant, 'missing'>, computeApps: readonly FakeComputeApp[] = []): string {
  const capture = readH200Capture();
  const gpus = fakeGpus(variant);
  const model: FakeNvidiaSmiModel = {
    exact: {},
    xml: fakeSmiXml(capture.files['smi-q.xml'] ?? '', gpus),
    gpus,
    apps: [...computeApps],
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
  // The XML writes N/A without the brackets the CSV puts around it.
  const xmlMig = (mode: FakeMigMode): string => (mode === '[N/A]' ? 'N/A' : mode);
  xml = tag(xml, 'current_mig', xmlMig(gpu.migMode));
  xml = tag(xml, 'pending_mig', xmlMig(gpu.migPending));
  xml = tag(xml, 'serial', gpu.serial === '[N/A]' ? 'N/A' : gpu.serial);
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
