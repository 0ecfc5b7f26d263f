/**
 * Which GPUs count as "A100-class" (spec WO-05): decided by product first,
 * then checked against what nvidia-smi reports for that product. Numbers
 * alone cannot decide it: an RTX A6000 (workstation, compute 8.6, 48 GB)
 * clears "compute ≥ 8.0 and ≥ 40 GiB", while an A100-PCIE-40GB reports
 * 40536 MiB (39.6 GiB) and fails it.
 */

export type GpuArchitecture = 'Ampere' | 'Hopper' | 'Blackwell';

/** An accepted data-centre product. */
export interface GpuProduct {
  /** How this table and the gate's reasons name it. */
  product: string;
  /** nvidia-smi's `name` for the part, compared whole and case-insensitively; older drivers leave out the `NVIDIA ` prefix. */
  names: readonly string[];
  architecture: GpuArchitecture;
  /** The compute capability the part reports (`compute_cap`); anything else means the name is not what it seems. */
  computeCapability: string;
  /** The marketed memory size in GB (binary, as HBM is sold): 40 for an A100 40GB. */
  memoryGB: number;
}

/**
 * The smallest share of its marketed size a part may report as
 * `memory.total`. The driver reports less than the marketed size: 40536 of
 * 40960 MiB (99.0 %) on an A100-PCIE-40GB, 81559 of 81920 MiB (99.6 %) on an
 * H100. A part reporting much less is partitioned (a vGPU profile), or is
 * not the part its name says.
 */
export const MEMORY_REPORTED_SHARE = 0.97;

/**
 * The accepted products: the A100 family in its PCIe and SXM, 40 and 80 GB
 * forms (and the A800, the same silicon with a slower interconnect), and the
 * data-centre parts judged equivalent or better for single-GPU inference:
 * more HBM bandwidth and at least as much memory (H100, H800, H200, GH200,
 * B200). Workstation and consumer cards (RTX A6000, L40S, GeForce) are not
 * here whatever their numbers: less memory bandwidth, no ECC HBM, no MIG.
 */
export const ACCEPTED_GPU_PRODUCTS: readonly GpuProduct[] = [
  { product: 'A100 PCIe 40GB', names: ['NVIDIA A100-PCIE-40GB'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 40 },
  { product: 'A100 SXM4 40GB', names: ['NVIDIA A100-SXM4-40GB'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 40 },
  { product: 'A100 PCIe 80GB', names: ['NVIDIA A100 80GB PCIe', 'NVIDIA A100-PCIE-80GB'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 80 },
  { product: 'A100 SXM4 80GB', names: ['NVIDIA A100-SXM4-80GB'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 80 },
  { product: 'A800 PCIe 80GB', names: ['NVIDIA A800 80GB PCIe'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 80 },
  { product: 'A800 SXM4 80GB', names: ['NVIDIA A800-SXM4-80GB'], architecture: 'Ampere', computeCapability: '8.0', memoryGB: 80 },
  { product: 'H100 PCIe', names: ['NVIDIA H100 PCIe'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 80 },
  { product: 'H100 SXM5 80GB', names: ['NVIDIA H100 80GB HBM3'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 80 },
  { product: 'H100 NVL', names: ['NVIDIA H100 NVL'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 94 },
  { product: 'H800', names: ['NVIDIA H800', 'NVIDIA H800 PCIe'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 80 },
  { product: 'H200', names: ['NVIDIA H200'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 141 },
  { product: 'H200 NVL', names: ['NVIDIA H200 NVL'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 141 },
  { product: 'GH200 96GB', names: ['NVIDIA GH200 480GB'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 96 },
  { product: 'GH200 144GB', names: ['NVIDIA GH200 144G HBM3e'], architecture: 'Hopper', computeCapability: '9.0', memoryGB: 144 },
  { product: 'B200', names: ['NVIDIA B200'], architecture: 'Blackwell', computeCapability: '10.0', memoryGB: 180 },
];

/**
 * The least generation speed, in tokens per second as Ollama reports it
 * (`eval_count / eval_duration`), a model on a GPU of each architecture may
 * show; below it the generation is taken for a CPU fallback. Judged for models
 * of up to about 35B parameters at 4-bit quantization, which run at 35 tokens/s
 * or more on an A100 and 60 or more on Hopper, while a CPU gives a 7B model
 * 5 to 25 tokens/s and a 35B model under 10. A larger model needs a lower
 * floor: set EXTRACTOR_MIN_TOKENS_PER_SECOND.
 */
export const MIN_TOKENS_PER_SECOND: Readonly<Record<GpuArchitecture, number>> = { Ampere: 25, Hopper: 35, Blackwell: 45 };

const strip = (name: string) => name.trim().toLowerCase().replace(/^nvidia\s+/, '');

/** The accepted product nvidia-smi's `name` names, if any. */
export function gpuProductOf(name: string): GpuProduct | undefined {
  const wanted = strip(name);
  return ACCEPTED_GPU_PRODUCTS.find((p) => p.names.some((n) => strip(n) === wanted));
}

/** Operator minimums applied on top of the table (EXTRACTOR_GPU_MIN_COMPUTE, EXTRACTOR_GPU_MIN_MEMORY_GIB). */
export interface GpuClassMinimum {
  computeCapability: number;
  /** Compared with the product's marketed size, not with what the driver reports. */
  memoryGiB: number;
}

export const DEFAULT_GPU_CLASS_MINIMUM: GpuClassMinimum = { computeCapability: 8.0, memoryGiB: 40 };

/** What the gate knows of a device for the class check. */
export interface ClassifiedDevice {
  uuid: string;
  name: string;
  computeCapability: string;
  memoryTotalMiB: number;
}

export type GpuClassVerdict = { ok: true; product: GpuProduct } | { ok: false; reason: string };

/**
 * Whether a device is an accepted product, reporting what that product
 * reports: its compute capability exactly, and at least
 * MEMORY_REPORTED_SHARE of its marketed memory; and whether it meets the
 * operator's minimums.
 */
export function classifyGpu(device: ClassifiedDevice, minimum: GpuClassMinimum = DEFAULT_GPU_CLASS_MINIMUM): GpuClassVerdict {
  const product = gpuProductOf(device.name);
  const who = `${device.uuid} (${device.name})`;
  if (!product) {
    const families = [...new Set(ACCEPTED_GPU_PRODUCTS.map((p) => p.product.split(' ')[0]))].join(', ');
    return { ok: false, reason: `${who} is not an accepted data-centre GPU (accepted: ${families}): extraction runs only on A100-class parts, whatever another card's compute capability and memory` };
  }
  const cc = Number(device.computeCapability);
  if (!(cc === Number(product.computeCapability))) {
    return { ok: false, reason: `${who} reports compute capability ${device.computeCapability || 'none'}, but the ${product.product} has ${product.computeCapability}: the device is not what its name says` };
  }
  const leastMiB = Math.floor(product.memoryGB * 1024 * MEMORY_REPORTED_SHARE);
  if (!(device.memoryTotalMiB >= leastMiB)) {
    return { ok: false, reason: `${who} reports ${device.memoryTotalMiB} MiB; a whole ${product.product} reports at least ${leastMiB} MiB: the device is partitioned or not the part its name says` };
  }
  if (!(cc >= minimum.computeCapability) || !(product.memoryGB >= minimum.memoryGiB)) {
    return {
      ok: false,
      reason: `${who} is a ${product.product} (compute capability ${product.computeCapability}, ${product.memoryGB} GB); this node requires at least compute capability ${minimum.computeCapability.toFixed(1)} and ${minimum.memoryGiB} GB (EXTRACTOR_GPU_MIN_COMPUTE, EXTRACTOR_GPU_MIN_MEMORY_GIB)`,
    };
  }
  return { ok: true, product };
}

/** MIG as `mig.mode.current` and `mig.mode.pending` report it. */
export type MigVerdict = { ok: true } | { ok: false; reason: string };

/**
 * MIG must be off now and after the next GPU reset. Every accepted product
 * supports MIG, so `[N/A]` (or any other value) does not mean "off": the
 * driver did not say, or the device is a MIG instance or a vGPU, and the gate
 * refuses it rather than guess.
 */
export function checkMig(device: { uuid: string; name: string; index: number }, current: string, pending: string): MigVerdict {
  const who = `${device.uuid} (${device.name})`;
  const known = (mode: string) => mode === 'Enabled' || mode === 'Disabled';
  if (!known(current) || !known(pending)) {
    const odd = !known(current) ? `current ${current || 'empty'}` : `pending ${pending || 'empty'}`;
    return { ok: false, reason: `${who} reports MIG mode ${odd}: the gate needs MIG reported Disabled, now and pending; an accepted GPU always reports it, so check the driver (nvidia-smi -q -i ${device.index})` };
  }
  if (current === 'Enabled') {
    return { ok: false, reason: `${who} has MIG mode enabled: CUDA then exposes only MIG instances, not the GPU by its UUID; disable MIG (nvidia-smi -i ${device.index} -mig 0) or run on another approved GPU` };
  }
  if (pending === 'Enabled') {
    return { ok: false, reason: `${who} has MIG mode pending Enabled: the next GPU reset turns MIG on; cancel it (nvidia-smi -i ${device.index} -mig 0) or run on another approved GPU` };
  }
  return { ok: true };
}
