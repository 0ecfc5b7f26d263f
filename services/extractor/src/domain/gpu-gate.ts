/**
 * The GPU gate, as pure functions over what nvidia-smi, the configuration and
 * Ollama report. LLM extraction runs only when every check passes; any miss
 * is a hard failure with a precise reason, never a fallback to the CPU or to
 * another GPU. The static checks run when the GPU worker starts; the model's
 * placement, the GPU of Ollama's process and the generation speed are checked
 * again at every extraction job (generation-gate in gpu-gate-runner.ts).
 */
import { MIN_TOKENS_PER_SECOND, checkMig, classifyGpu, type GpuClassMinimum, type GpuProduct } from './gpu-class.js';

export interface GpuDevice {
  index: number;
  uuid: string;
  name: string;
  computeCapability: string;
  memoryTotalMiB: number;
  /** `mig.mode.current`: Enabled, Disabled, or `[N/A]` where the driver reports none. */
  migMode: string;
  /** `mig.mode.pending`: the mode after the next GPU reset. */
  migPending: string;
}

/** A device CUDA_VISIBLE_DEVICES names that passed the static checks, with its product. */
export interface VisibleGpu extends GpuDevice {
  product: GpuProduct;
}

export type GateStage = 'config' | 'nvidia_smi' | 'visible_devices' | 'gpu_class' | 'mig' | 'model_placement' | 'gpu_process' | 'token_rate';

export type GateFailure = { ok: false; stage: GateStage; reason: string };
export type GateVerdict = { ok: true; devices: VisibleGpu[] } | GateFailure;

const UUID = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The allowlist from its variable: comma- or space-separated GPU UUIDs. */
export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * One `nvidia-smi --query-* --format=csv` answer as rows keyed by field:
 * a header naming the fields (a unit in brackets after some, `memory.total
 * [MiB]`), then `, `-separated values. Throws naming the missing fields.
 */
export function parseSmiCsv(csv: string, need: readonly string[]): Array<Record<string, string>> {
  const rows = csv.split('\n').map((l) => l.trim()).filter(Boolean);
  const header = rows.shift()?.split(',').map((h) => h.trim().replace(/\s*\[.*\]$/, '')) ?? [];
  const missing = need.filter((n) => !header.includes(n));
  if (missing.length) throw new Error(`nvidia-smi printed no ${missing.join(', ')} column (header: ${header.join(', ') || 'none'})`);
  return rows.map((row) => {
    const cells = row.split(',').map((c) => c.trim());
    return Object.fromEntries(header.map((h, i) => [h, cells[i] ?? '']));
  });
}

const mib = (value: string | undefined): number => Number((value ?? '').replace(/\s*MiB$/i, ''));

/**
 * The devices from the two queries the gate runs: the captured device query
 * (`--query-gpu=index,uuid,name,compute_cap,memory.total,driver_version,pci.bus_id,mig.mode.current`)
 * and the MIG query (`--query-gpu=index,uuid,mig.mode.current,mig.mode.pending`).
 * A device missing from the MIG answer gets an empty pending mode, which the
 * gate refuses.
 */
export function parseGpuQuery(deviceCsv: string, migCsv?: string): GpuDevice[] {
  const pending = new Map((migCsv === undefined ? [] : parseSmiCsv(migCsv, ['uuid', 'mig.mode.pending'])).map((r) => [r.uuid, r['mig.mode.pending'] ?? '']));
  return parseSmiCsv(deviceCsv, ['index', 'uuid', 'name', 'compute_cap', 'memory.total', 'mig.mode.current']).map((r) => ({
    index: Number(r.index),
    uuid: r.uuid ?? '',
    name: r.name ?? '',
    computeCapability: r.compute_cap ?? '',
    memoryTotalMiB: mib(r['memory.total']),
    migMode: r['mig.mode.current'] ?? '',
    migPending: pending.get(r.uuid ?? '') ?? '',
  }));
}

/** One process on a GPU, from `nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv`. */
export interface ComputeApp {
  pid: number;
  gpuUuid: string;
  /** null when nvidia-smi prints `[N/A]`. */
  usedMemoryMiB: number | null;
}

export function parseComputeApps(csv: string): ComputeApp[] {
  // The header says used_gpu_memory whichever alias was asked for.
  const rows = parseSmiCsv(csv, ['pid', 'gpu_uuid']);
  return rows.map((r) => {
    const used = r.used_gpu_memory ?? r.used_memory;
    const n = mib(used);
    return { pid: Number(r.pid), gpuUuid: r.gpu_uuid ?? '', usedMemoryMiB: used === undefined || Number.isNaN(n) ? null : n };
  });
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** CUDA_VISIBLE_DEVICES as the list of names it holds. */
export function declaredDevices(cvd: string): string[] {
  return cvd.split(',').map((s) => s.trim());
}

export interface StaticGateInput {
  approved: readonly string[];
  /** The value the Ollama service runs with; undefined when not set. */
  cudaVisibleDevices: string | undefined;
  minimum: GpuClassMinimum;
  /** nvidia-smi's devices, or why they could not be read. */
  smi: { ok: true; devices: GpuDevice[] } | { ok: false; reason: string };
}

/**
 * Everything that can be checked before the model loads: the allowlist is
 * set and well formed; nvidia-smi answered; CUDA_VISIBLE_DEVICES names
 * devices explicitly, by UUID, each approved and each present on this node
 * (a mistyped UUID is not an error to CUDA: it silently leaves zero GPUs and
 * Ollama runs on the CPU); every visible device is an accepted product
 * reporting what that product reports (gpu-class.ts), with MIG off now and
 * pending.
 */
export function evaluateStaticGate(input: StaticGateInput): GateVerdict {
  const fail = (stage: GateStage, reason: string): GateFailure => ({ ok: false, stage, reason });
  if (input.approved.length === 0) return fail('config', 'no approved GPU: set EXTRACTOR_APPROVED_GPU_UUIDS to the UUIDs (nvidia-smi -L) of the GPUs approved for extraction');
  const malformed = input.approved.filter((u) => !UUID.test(u));
  if (malformed.length) return fail('config', `EXTRACTOR_APPROVED_GPU_UUIDS holds ${malformed.map((m) => JSON.stringify(m)).join(', ')}, which ${malformed.length === 1 ? 'is not a GPU UUID' : 'are not GPU UUIDs'} (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`);
  if (!input.smi.ok) return fail('nvidia_smi', input.smi.reason);
  const devices = input.smi.devices;
  if (devices.length === 0) return fail('nvidia_smi', 'nvidia-smi lists no GPU on this node');

  const cvd = input.cudaVisibleDevices;
  if (cvd === undefined) return fail('visible_devices', "CUDA_VISIBLE_DEVICES of the Ollama service is not set (OLLAMA_CUDA_VISIBLE_DEVICES): set it explicitly to the approved GPU's UUID so Ollama cannot pick another device");
  const named = declaredDevices(cvd);
  if (cvd.trim() === '' || named.every((n) => n === '')) return fail('visible_devices', 'CUDA_VISIBLE_DEVICES of the Ollama service is empty: CUDA then sees zero GPUs and Ollama silently runs on the CPU');
  const notUuid = named.filter((n) => !UUID.test(n));
  if (notUuid.length) {
    return fail(
      'visible_devices',
      `CUDA_VISIBLE_DEVICES names ${notUuid.map((n) => JSON.stringify(n)).join(', ')}: name devices by UUID (numeric order can differ between nvidia-smi and CUDA, and an unknown value leaves zero GPUs)`,
    );
  }
  const unapproved = named.filter((n) => !input.approved.some((a) => same(a, n)));
  if (unapproved.length) return fail('visible_devices', `CUDA_VISIBLE_DEVICES names ${unapproved.join(', ')}, not on the approved list (EXTRACTOR_APPROVED_GPU_UUIDS)`);
  const visible: VisibleGpu[] = [];
  for (const n of named) {
    const device = devices.find((d) => same(d.uuid, n));
    if (!device) {
      return fail(
        'visible_devices',
        `CUDA_VISIBLE_DEVICES names ${n}, which nvidia-smi does not list on this node (it lists ${devices.map((d) => d.uuid).join(', ')}): CUDA would silently see zero GPUs and Ollama would run on the CPU`,
      );
    }
    const verdict = classifyGpu(device, input.minimum);
    if (!verdict.ok) return fail('gpu_class', verdict.reason);
    const mig = checkMig(device, device.migMode, device.migPending);
    if (!mig.ok) return fail('mig', mig.reason);
    visible.push({ ...device, product: verdict.product });
  }
  return { ok: true, devices: visible };
}

/** One model as /api/ps lists it. */
export interface LoadedModel {
  name: string;
  size: number;
  sizeVram: number;
}

const canonical = (n: string) => (n.includes(':') ? n : `${n}:latest`).toLowerCase();

/** The /api/ps entry of `model`, whatever tag spelling either side uses. */
export function findLoaded<T extends { name: string }>(model: string, loaded: readonly T[]): T | undefined {
  return loaded.find((m) => canonical(m.name) === canonical(model));
}

/** After a load: the model must be listed and held entirely in GPU memory. */
export function evaluateModelPlacement(model: string, loaded: readonly LoadedModel[]): { ok: true } | GateFailure {
  const entry = findLoaded(model, loaded);
  if (!entry) return { ok: false, stage: 'model_placement', reason: `after loading, Ollama's /api/ps does not list ${model}: the model is not resident` };
  if (entry.size <= 0 || entry.sizeVram < entry.size) {
    const pct = entry.size > 0 ? Math.round((100 * (entry.size - entry.sizeVram)) / entry.size) : 100;
    return {
      ok: false,
      stage: 'model_placement',
      reason: `Ollama holds ${model} ${pct}% in CPU memory (size_vram ${entry.sizeVram} of ${entry.size} bytes): it would run on the CPU; check the Ollama service's GPU and CUDA_VISIBLE_DEVICES`,
    };
  }
  return { ok: true };
}

/**
 * Which GPU Ollama's runner actually uses, from nvidia-smi's compute apps,
 * while the model is resident. Every process nvidia-smi lists counts: on a GPU
 * node given to the extractor, Ollama's runner is the one compute process (the
 * query holds no process name to tell another apart, and another process on
 * these GPUs would compete with it anyway). There must be one, and each must
 * run on a GPU that the declared CUDA_VISIBLE_DEVICES names and the allowlist
 * approves. The GPUs found are what the extract records.
 */
export function evaluateComputeApps(model: string, apps: readonly ComputeApp[], gate: { approved: readonly string[]; declared: readonly string[] }): { ok: true; gpuUuids: string[] } | GateFailure {
  const fail = (reason: string): GateFailure => ({ ok: false, stage: 'gpu_process', reason });
  if (apps.length === 0) {
    return fail(
      `Ollama reports ${model} loaded, yet nvidia-smi lists no process on any GPU: the model is not computing on a GPU (or nvidia-smi here cannot see Ollama's processes: run the extractor where it does)`,
    );
  }
  for (const app of apps) {
    const declared = gate.declared.some((d) => same(d, app.gpuUuid));
    const approved = gate.approved.some((a) => same(a, app.gpuUuid));
    if (!declared || !approved) {
      const why = [!declared ? `CUDA_VISIBLE_DEVICES of the Ollama service names only ${gate.declared.join(', ')}` : '', !approved ? 'it is not on the approved list' : ''].filter(Boolean).join(', and ');
      return fail(`nvidia-smi shows process ${app.pid} on ${app.gpuUuid || 'an unnamed device'}: ${why}; the Ollama service does not run where it was declared`);
    }
  }
  const gpuUuids: string[] = [];
  for (const app of apps) if (!gpuUuids.some((u) => same(u, app.gpuUuid))) gpuUuids.push(app.gpuUuid);
  return { ok: true, gpuUuids };
}

/** The floor of generation speed for the visible devices: the slowest architecture's, unless the operator set one. */
export function tokenRateFloor(devices: readonly VisibleGpu[], override?: number): number {
  if (override !== undefined) return override;
  return Math.min(...devices.map((d) => MIN_TOKENS_PER_SECOND[d.product.architecture]));
}

/**
 * After a generation: tokens per second from Ollama's own counters
 * (`eval_count / eval_duration`, nanoseconds) must reach the floor. A model
 * that /api/ps shows in GPU memory can still compute on the CPU (Ollama issue
 * #9068); its speed gives it away. A generation without the counters cannot
 * be checked, so it does not pass.
 */
export function evaluateTokenRate(counters: { evalCount?: number | undefined; evalDurationNs?: number | undefined }, floor: number, where: string): { ok: true; tokensPerSecond: number } | GateFailure {
  const { evalCount, evalDurationNs } = counters;
  if (!evalCount || !evalDurationNs || !(evalCount > 0) || !(evalDurationNs > 0)) {
    return { ok: false, stage: 'token_rate', reason: `Ollama reported no eval_count and eval_duration for the generation: its speed cannot be checked against the ${floor} tokens/s floor for ${where}` };
  }
  const tokensPerSecond = (evalCount / evalDurationNs) * 1e9;
  if (!(tokensPerSecond >= floor)) {
    return {
      ok: false,
      stage: 'token_rate',
      reason: `the generation ran at ${tokensPerSecond.toFixed(1)} tokens/s, below the ${floor} tokens/s floor for ${where}: Ollama is computing on the CPU (or sharing the GPU); its answer was not used`,
    };
  }
  return { ok: true, tokensPerSecond };
}
