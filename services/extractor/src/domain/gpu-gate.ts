/**
 * The GPU gate, as pure functions over what nvidia-smi, the configuration and
 * Ollama report. LLM extraction runs only when every check passes; any miss
 * is a hard failure with a precise reason, never a fallback to the CPU or to
 * another GPU.
 */

export interface GpuClassMinimum {
  computeCapability: number;
  memoryGiB: number;
}

export const DEFAULT_GPU_CLASS_MINIMUM: GpuClassMinimum = { computeCapability: 8.0, memoryGiB: 40 };

export interface GpuDevice {
  index: number;
  uuid: string;
  name: string;
  computeCapability: string;
  memoryTotalMiB: number;
  migMode: string;
}

export type GateStage = 'config' | 'nvidia_smi' | 'visible_devices' | 'class_minimum' | 'mig' | 'model_placement';

export type GateVerdict = { ok: true; devices: GpuDevice[] } | { ok: false; stage: GateStage; reason: string };

const UUID = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The allowlist from its variable: comma- or space-separated GPU UUIDs. */
export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Parses `nvidia-smi --query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current --format=csv`
 * (the command the H200 capture holds): a header, then one row per GPU, memory as "143771 MiB".
 */
export function parseGpuQuery(csv: string): GpuDevice[] {
  const rows = csv.split('\n').map((l) => l.trim()).filter(Boolean);
  const header = rows.shift()?.split(',').map((h) => h.trim().replace(/\s*\[.*\]$/, '')) ?? [];
  const col = (name: string) => header.indexOf(name);
  const need = ['index', 'uuid', 'name', 'compute_cap', 'memory.total', 'mig.mode.current'];
  const missing = need.filter((n) => col(n) === -1);
  if (missing.length) throw new Error(`nvidia-smi printed no ${missing.join(', ')} column (header: ${header.join(', ') || 'none'})`);
  return rows.map((row) => {
    const cells = row.split(',').map((c) => c.trim());
    const cell = (name: string) => cells[col(name)] ?? '';
    return {
      index: Number(cell('index')),
      uuid: cell('uuid'),
      name: cell('name'),
      computeCapability: cell('compute_cap'),
      memoryTotalMiB: Number(cell('memory.total').replace(/\s*MiB$/i, '')),
      migMode: cell('mig.mode.current'),
    };
  });
}

export interface StaticGateInput {
  approved: readonly string[];
  /** The value the Ollama service runs with; undefined when not set. */
  cudaVisibleDevices: string | undefined;
  minimum: GpuClassMinimum;
  /** nvidia-smi's devices, or why it could not be read. */
  smi: { ok: true; devices: GpuDevice[] } | { ok: false; reason: string };
}

/**
 * Everything that can be checked before the model loads: the allowlist is
 * set and well formed; nvidia-smi answered; CUDA_VISIBLE_DEVICES names
 * devices explicitly, by UUID, each approved and each present on this node
 * (a mistyped UUID is not an error to CUDA: it silently leaves zero GPUs and
 * Ollama runs on the CPU); every visible device meets the class minimum and
 * has MIG off.
 */
export function evaluateStaticGate(input: StaticGateInput): GateVerdict {
  const fail = (stage: GateStage, reason: string): GateVerdict => ({ ok: false, stage, reason });
  if (input.approved.length === 0) return fail('config', 'no approved GPU: set EXTRACTOR_APPROVED_GPU_UUIDS to the UUIDs (nvidia-smi -L) of the GPUs approved for extraction');
  const malformed = input.approved.filter((u) => !UUID.test(u));
  if (malformed.length) return fail('config', `EXTRACTOR_APPROVED_GPU_UUIDS holds ${malformed.map((m) => JSON.stringify(m)).join(', ')}, which ${malformed.length === 1 ? 'is not a GPU UUID' : 'are not GPU UUIDs'} (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`);
  if (!input.smi.ok) return fail('nvidia_smi', input.smi.reason);
  const devices = input.smi.devices;
  if (devices.length === 0) return fail('nvidia_smi', 'nvidia-smi lists no GPU on this node');

  const cvd = input.cudaVisibleDevices;
  if (cvd === undefined) return fail('visible_devices', "CUDA_VISIBLE_DEVICES of the Ollama service is not set (OLLAMA_CUDA_VISIBLE_DEVICES): set it explicitly to the approved GPU's UUID so Ollama cannot pick another device");
  const named = cvd.split(',').map((s) => s.trim());
  if (cvd.trim() === '' || named.every((n) => n === '')) return fail('visible_devices', 'CUDA_VISIBLE_DEVICES of the Ollama service is empty: CUDA then sees zero GPUs and Ollama silently runs on the CPU');
  const notUuid = named.filter((n) => !UUID.test(n));
  if (notUuid.length) {
    return fail(
      'visible_devices',
      `CUDA_VISIBLE_DEVICES names ${notUuid.map((n) => JSON.stringify(n)).join(', ')}: name devices by UUID (numeric order can differ between nvidia-smi and CUDA, and an unknown value leaves zero GPUs)`,
    );
  }
  const unapproved = named.filter((n) => !input.approved.some((a) => a.toLowerCase() === n.toLowerCase()));
  if (unapproved.length) return fail('visible_devices', `CUDA_VISIBLE_DEVICES names ${unapproved.join(', ')}, not on the approved list (EXTRACTOR_APPROVED_GPU_UUIDS)`);
  const visible: GpuDevice[] = [];
  for (const n of named) {
    const device = devices.find((d) => d.uuid.toLowerCase() === n.toLowerCase());
    if (!device) {
      return fail(
        'visible_devices',
        `CUDA_VISIBLE_DEVICES names ${n}, which nvidia-smi does not list on this node (it lists ${devices.map((d) => d.uuid).join(', ')}): CUDA would silently see zero GPUs and Ollama would run on the CPU`,
      );
    }
    visible.push(device);
  }
  for (const d of visible) {
    const cc = Number(d.computeCapability);
    const gib = d.memoryTotalMiB / 1024;
    if (!(cc >= input.minimum.computeCapability) || !(gib >= input.minimum.memoryGiB)) {
      return fail(
        'class_minimum',
        `${d.uuid} (${d.name}) has compute capability ${d.computeCapability} and ${gib.toFixed(1)} GiB; the minimum is ${input.minimum.computeCapability.toFixed(1)} and ${input.minimum.memoryGiB} GiB`,
      );
    }
    if (d.migMode.toLowerCase() === 'enabled') {
      return fail('mig', `${d.uuid} (${d.name}) has MIG mode enabled: CUDA then exposes only MIG instances, not the GPU by its UUID; disable MIG (nvidia-smi -i ${d.index} -mig 0) or run on another approved GPU`);
    }
  }
  return { ok: true, devices: visible };
}

/** One model as /api/ps lists it. */
export interface LoadedModel {
  name: string;
  size: number;
  sizeVram: number;
}

/** After the warm-up load: the model must be listed and held entirely in GPU memory. */
export function evaluateModelPlacement(model: string, loaded: readonly LoadedModel[]): GateVerdict | { ok: true; devices: [] } {
  const canonical = (n: string) => (n.includes(':') ? n : `${n}:latest`).toLowerCase();
  const entry = loaded.find((m) => canonical(m.name) === canonical(model));
  if (!entry) return { ok: false, stage: 'model_placement', reason: `after loading, Ollama's /api/ps does not list ${model}: the model is not resident` };
  if (entry.size <= 0 || entry.sizeVram < entry.size) {
    const pct = entry.size > 0 ? Math.round((100 * (entry.size - entry.sizeVram)) / entry.size) : 100;
    return {
      ok: false,
      stage: 'model_placement',
      reason: `Ollama holds ${model} ${pct}% in CPU memory (size_vram ${entry.sizeVram} of ${entry.size} bytes): it would run on the CPU; check the Ollama service's GPU and CUDA_VISIBLE_DEVICES`,
    };
  }
  return { ok: true, devices: [] };
}
