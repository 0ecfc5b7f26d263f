import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from './repo-paths.js';

// What the real H200 node reported (shared/testing/fixtures/gpu/nvidia-h200, 2026-11-30).
// Kept as literals so a test can name the value it expects; a test checks
// them against the capture files.

/** UUID of the captured H200 (`nvidia-smi -L`). */
export const H200_UUID = 'GPU-fd98cbf0-8504-327d-9ea0-19c74603436a';
/** Product name of the captured GPU. */
export const H200_NAME = 'NVIDIA H200';
/** CUDA compute capability of the H200 (Hopper). */
export const H200_COMPUTE_CAP = '9.0';
/** Framebuffer memory nvidia-smi reports for the H200, in MiB. */
export const H200_MEMORY_TOTAL_MIB = 143771;
/** Driver version on the captured node. */
export const H200_DRIVER_VERSION = '580.159.04';
/** CUDA version the driver reports. */
export const H200_CUDA_VERSION = '13.0';
/** PCI bus id of the captured GPU. */
export const H200_PCI_BUS_ID = '00000000:00:06.0';

/** The real command line behind each capture file (fixtures README). */
export const H200_CAPTURED_COMMANDS: ReadonlyArray<{ readonly file: string; readonly args: readonly string[] }> = [
  { file: 'smi-L.txt', args: ['-L'] },
  {
    file: 'smi-query.csv',
    args: ['--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current', '--format=csv'],
  },
  { file: 'smi-query-noheader.csv', args: ['--query-gpu=index,uuid,name,compute_cap,memory.total', '--format=csv,noheader,nounits'] },
  { file: 'smi-q.xml', args: ['-q', '-x'] },
  { file: 'smi-apps.csv', args: ['--query-compute-apps=pid,gpu_uuid,used_memory', '--format=csv'] },
];

/** How many GPUs a CUDA program saw for one value of `CUDA_VISIBLE_DEVICES` (cvd.txt). */
export interface CudaVisibleDevicesObservation {
  /** The variable's value; `''` when set empty. */
  value: string;
  deviceCount: number;
  deviceNames: string[];
}

/** The H200 capture files, read from the repository's fixtures. */
export interface H200Capture {
  /** The folder the files were read from. */
  dir: string;
  /** Capture file name → exact text (`smi-L.txt`, `smi-query.csv`, …). */
  files: Readonly<Record<string, string>>;
  /** env.txt as a map (`CUDA_VERSION`, `NVIDIA_VISIBLE_DEVICES`, …). */
  env: Readonly<Record<string, string>>;
  /** cvd.txt, one entry per line. */
  cudaVisibleDevices: CudaVisibleDevicesObservation[];
}

/** The capture folder: `shared/testing/fixtures/gpu/nvidia-h200` in the repository. */
export function h200CaptureDir(): string {
  return join(fixturesDir(), 'gpu', 'nvidia-h200');
}

let cached: H200Capture | undefined;

/** Reads (once per process) and parses the H200 capture files. */
export function readH200Capture(): H200Capture {
  if (cached) return cached;
  const dir = h200CaptureDir();
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (error) {
      throw new Error(`cannot read GPU capture ${join(dir, file)}: ${String(error)}`, { cause: error });
    }
  };
  const files: Record<string, string> = {};
  for (const { file } of H200_CAPTURED_COMMANDS) files[file] = read(file);

  const env: Record<string, string> = {};
  for (const line of read('env.txt').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }

  const cudaVisibleDevices: CudaVisibleDevicesObservation[] = [];
  for (const line of read('cvd.txt').split('\n')) {
    // CUDA_VISIBLE_DEVICES=<value> -> <count> ['<name>', …]
    const match = /^CUDA_VISIBLE_DEVICES=(.*) -> (\d+) \[(.*)\]$/.exec(line);
    if (!match) continue;
    const [, value = '', count = '0', names = ''] = match;
    cudaVisibleDevices.push({
      value,
      deviceCount: Number(count),
      deviceNames: [...names.matchAll(/'([^']*)'/g)].map((m) => m[1] ?? ''),
    });
  }

  cached = { dir, files, env, cudaVisibleDevices };
  return cached;
}
