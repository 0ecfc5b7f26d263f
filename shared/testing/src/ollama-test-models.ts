import { createHash } from 'node:crypto';

/** Capabilities Ollama reports in `/api/show` (types/model/capability.go). */
export type OllamaCapability = 'completion' | 'tools' | 'insert' | 'vision' | 'embedding' | 'thinking' | 'image' | 'audio';

/** `details` of a model in /api/tags, /api/show and /api/ps. */
export interface OllamaModelDetails {
  parent_model: string;
  format: string;
  family: string;
  families: string[] | null;
  parameter_size: string;
  quantization_level: string;
}

/** A model the Ollama test server has "pulled". */
export interface OllamaTestModel {
  /** `name[:tag]`; without a tag it is `name:latest`, as in Ollama. */
  name: string;
  /** Default `['completion']`. Add `'vision'` for a model that takes images. */
  capabilities?: OllamaCapability[];
  /** Bytes on disk and loaded (`size` in /api/tags and /api/ps). Default 4 GB. */
  size?: number;
  /** Bytes in GPU memory while loaded (/api/ps). Default `size` (100% GPU); 0 means CPU only. */
  sizeVram?: number;
  /**
   * Bytes in GPU memory once the model is loaded again after an unload or an
   * expired keep-alive (a reload the scheduler placed partly or wholly on the
   * CPU, e.g. because something else took the GPU's memory meanwhile). Default:
   * `sizeVram`, every load alike.
   */
  reloadSizeVram?: number;
  /**
   * Tokens per second generation runs at, as Ollama reports it
   * (`eval_count / eval_duration`). Default: GPU speed (50) while the model is
   * wholly in GPU memory, CPU speed (4) otherwise. Set it low with `size_vram ==
   * size` for a server whose /api/ps says 100% GPU while it computes on the CPU.
   */
  evalTokensPerSecond?: number;
  /** Context length while loaded (/api/ps). Default 4096. */
  contextLength?: number;
  /** Listed by /api/ps before any request loads it. Default false. */
  loaded?: boolean;
  /** sha256 hex; default derived from the name. */
  digest?: string;
  details?: Partial<OllamaModelDetails>;
  /** RFC 3339; default 2025-01-01. */
  modifiedAt?: string;
}

/**
 * The models a test server has when none are given: one vision model, one
 * text model with tools, one embedding-only model (which cannot chat).
 */
export const DEFAULT_OLLAMA_TEST_MODELS: readonly OllamaTestModel[] = [
  {
    name: 'llava:7b',
    capabilities: ['completion', 'vision'],
    size: 5_600_000_000,
    details: { family: 'llama', families: ['llama', 'clip'], parameter_size: '7B', quantization_level: 'Q4_0' },
  },
  {
    name: 'llama3.2:3b',
    capabilities: ['completion', 'tools'],
    size: 2_000_000_000,
    details: { family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
  },
  {
    name: 'nomic-embed-text:latest',
    capabilities: ['embedding'],
    size: 274_000_000,
    details: { family: 'nomic-bert', families: ['nomic-bert'], parameter_size: '137M', quantization_level: 'F16' },
  },
];

/**
 * Canonical `name:tag`, lower-cased, without the default registry and
 * namespace: Ollama resolves `LLaVA`, `llava` and
 * `registry.ollama.ai/library/llava:latest` to the same model.
 */
export function canonicalModelName(name: string): string {
  let n = name.trim().toLowerCase();
  n = n.replace(/^registry\.ollama\.ai\//, '').replace(/^library\//, '');
  const lastSlash = n.lastIndexOf('/');
  return n.indexOf(':', lastSlash + 1) === -1 ? `${n}:latest` : n;
}

/** The fully qualified name Ollama prints in scheduler errors. */
export function qualifiedModelName(name: string): string {
  const canonical = canonicalModelName(name);
  const slashes = canonical.split('/').length - 1;
  if (slashes === 0) return `registry.ollama.ai/library/${canonical}`;
  if (slashes === 1) return `registry.ollama.ai/${canonical}`;
  return canonical;
}

/** A model with every default filled in. */
export interface ResolvedOllamaModel {
  name: string;
  capabilities: OllamaCapability[];
  size: number;
  sizeVram: number;
  reloadSizeVram: number;
  evalTokensPerSecond: number | undefined;
  contextLength: number;
  digest: string;
  details: OllamaModelDetails;
  modifiedAt: string;
}

/** Fills in the defaults of an OllamaTestModel. */
export function resolveOllamaModel(model: OllamaTestModel): ResolvedOllamaModel {
  const name = canonicalModelName(model.name);
  const size = model.size ?? 4_000_000_000;
  return {
    name,
    capabilities: model.capabilities ?? ['completion'],
    size,
    sizeVram: model.sizeVram ?? size,
    reloadSizeVram: model.reloadSizeVram ?? model.sizeVram ?? size,
    evalTokensPerSecond: model.evalTokensPerSecond,
    contextLength: model.contextLength ?? 4096,
    digest: model.digest ?? createHash('sha256').update(name).digest('hex'),
    details: {
      parent_model: '',
      format: 'gguf',
      family: 'llama',
      families: ['llama'],
      parameter_size: '7B',
      quantization_level: 'Q4_K_M',
      ...model.details,
    },
    modifiedAt: model.modifiedAt ?? '2025-01-01T00:00:00Z',
  };
}

/** One entry of `GET /api/tags`, field order as Ollama's ListModelResponse. */
export function tagsEntry(m: ResolvedOllamaModel): Record<string, unknown> {
  return { name: m.name, model: m.name, modified_at: m.modifiedAt, size: m.size, digest: m.digest, details: m.details };
}

/** One entry of `GET /api/ps` (ProcessModelResponse); `sizeVram` is where this load placed the model. */
export function psEntry(m: ResolvedOllamaModel, expiresAt: string, sizeVram: number = m.sizeVram): Record<string, unknown> {
  return {
    name: m.name,
    model: m.name,
    size: m.size,
    digest: m.digest,
    details: m.details,
    expires_at: expiresAt,
    size_vram: sizeVram,
    context_length: m.contextLength,
  };
}

/** The `POST /api/show` body (ShowResponse) for a model. */
export function showResponse(m: ResolvedOllamaModel): Record<string, unknown> {
  const arch = m.details.family;
  const response: Record<string, unknown> = {
    license: 'test model: no license',
    modelfile: `# Modelfile generated by "ollama show"\n# To build a new Modelfile based on this, replace FROM with:\n# FROM ${m.name}\n\nFROM /models/blobs/sha256-${m.digest}\nTEMPLATE "{{ .Prompt }}"\n`,
    parameters: 'stop                           "<|eot_id|>"',
    template: '{{ .Prompt }}',
    details: m.details,
    model_info: {
      'general.architecture': arch,
      'general.parameter_count': parameterCount(m.details.parameter_size),
      [`${arch}.context_length`]: 131072,
      [`${arch}.embedding_length`]: 4096,
    },
  };
  if (m.capabilities.includes('vision')) {
    response.projector_info = { 'clip.has_vision_encoder': true, 'clip.vision.image_size': 336, 'clip.vision.patch_size': 14 };
  }
  response.capabilities = m.capabilities;
  response.modified_at = m.modifiedAt;
  return response;
}

function parameterCount(size: string): number {
  const match = /^([\d.]+)([KMB])$/i.exec(size);
  if (!match) return 0;
  const scale = { K: 1e3, M: 1e6, B: 1e9 }[(match[2] ?? 'B').toUpperCase() as 'K' | 'M' | 'B'];
  return Math.round(Number(match[1]) * scale);
}
