import { artifactExtract, artifactGrep, boardReviewCard, ledgerProposeCompletion, visionAnalyze, visionEvidence, type OperationDef } from '@vouch/contracts';

/**
 * What each operation costs its tenant, in cost units, estimated from the
 * validated input before the operation is queued (docs/architecture.md,
 * "Costs and budgets"). The one place the cost model lives: a new operation
 * costs its input's bytes and the call until it gets an entry here.
 *
 * A cost unit is meant as roughly a millisecond of a service's work, so that
 * bytes, pixels and tokens can share one budget. The weights come from the
 * figures measured in issue 17 on the 2-core development machine: OCR of
 * twelve 40-megapixel PNGs took about 43 s (about 90 ms a megapixel); six
 * greps over 64 MB took about 8.4 s (about 22 ms a MiB). They are estimates,
 * to keep one tenant's share honest, not a bill.
 */

/** The measures an operation's cost is made of. */
export interface CostMeasures {
  /** The validated input as JSON, in bytes: what the gateway parses and validates, Redis carries and a service reads. */
  inputBytes: number;
  /** Pixels an image stage decodes (observation, OCR): one frame of the image the request names. */
  pixels: number;
  /** Bytes a search reads: known only once the search has answered (artifact.grep's `provenance.scannedBytes`). */
  scanBytes: number;
  /** Tokens a model reads and writes, where the service runs one (extraction, the critic, the verifier, auxiliary vision). */
  llmTokens: number;
}

/** How many of each measure make one cost unit; every call costs `call` units besides. */
export const COST_WEIGHTS = {
  call: 1,
  inputBytesPerUnit: 16 * 1024,
  /** 100 units a megapixel: about OCR's 90 ms. */
  pixelsPerUnit: 10_000,
  /** 16 units a MiB: about grep's 22 ms. */
  scanBytesPerUnit: 64 * 1024,
  /** A 7B model on one GPU reads a few thousand tokens a second and writes tens: about a millisecond a token, taken together. */
  llmTokensPerUnit: 1,
} as const;

/**
 * Token estimates of the model stages, from their prompt bounds: about four
 * characters a token for English text (Llama and Qwen tokenizers).
 */
export const LLM_TOKEN_ESTIMATES = {
  /** One extraction window: a prompt of at most EXTRACTOR_MAX_PROMPT_CHARS (3,000 characters) and an answer of about 200 tokens. */
  extractWindow: 3_000 / 4 + 200,
  /** Windows an extraction reads at most (EXTRACTOR_MAX_WINDOWS); a window may serve several requirements. */
  extractMaxWindows: 8,
  /** The critic's packet beside the proposal itself: claims and up to 200 evidence summaries, typically a few thousand tokens. */
  criticPacket: 4_000,
  /** The built-in verifier's look at one card and its evidence. */
  verifierCard: 1_500,
  /** Auxiliary vision: the image's tokens (moondream encodes about 730), the prompt and a short answer. */
  auxiliaryVision: 1_000,
} as const;

/** What the gateway looked up about a request before estimating its cost. */
export interface CostFacts {
  /** Pixels of one frame of the image a vision request names, when it names one the gateway can find. */
  imagePixels?: number | undefined;
}

/** An operation's cost model. Each function is pure: the facts are looked up before. */
export interface CostModel {
  /** Whether the estimate needs the pixels of the image the request names (looked up by media/image-pixels.ts). */
  needsImage?: boolean;
  /** Measures beyond the input's bytes, from the validated input. */
  estimate?(input: Record<string, unknown>, facts: CostFacts): Partial<CostMeasures>;
  /** Measures only the answer tells, charged once an rpc has answered (the budget may go past its limit then; the next call waits). */
  actual?(output: unknown): Partial<CostMeasures>;
}

const approxTokens = (text: string): number => Math.ceil(text.length / 4);

/** Vision: the image is decoded (observation, OCR) unless it cannot be found; a model looks at it unless the caller asked for `low` or `text`. */
const visionCost: CostModel = {
  needsImage: true,
  estimate(input, facts) {
    const detail = input.requestedDetail as string | undefined;
    const auxiliary = detail === 'low' || detail === 'text' ? 0 : LLM_TOKEN_ESTIMATES.auxiliaryVision + approxTokens(String(input.prompt ?? ''));
    return { pixels: facts.imagePixels ?? 0, llmTokens: auxiliary };
  },
};

/** The cost models by operation name. */
export const OPERATION_COSTS: Readonly<Record<string, CostModel>> = {
  [visionAnalyze.name]: visionCost,
  [visionEvidence.name]: visionCost,
  [artifactGrep.name]: {
    // The extractor alone knows how many bytes a workspace holds: the scan is charged when the grep answers.
    actual(output) {
      const scanned = (output as { provenance?: { scannedBytes?: unknown } } | null)?.provenance?.scannedBytes;
      return { scanBytes: typeof scanned === 'number' && Number.isFinite(scanned) && scanned > 0 ? scanned : 0 };
    },
  },
  [artifactExtract.name]: {
    estimate(input) {
      const requirements = Array.isArray(input.requirements) ? input.requirements.length : 1;
      return { llmTokens: Math.min(requirements, LLM_TOKEN_ESTIMATES.extractMaxWindows) * LLM_TOKEN_ESTIMATES.extractWindow };
    },
  },
  [ledgerProposeCompletion.name]: {
    // The critic reads the proposal's texts and the ledger's packet (when OLLAMA_HOST is set; the estimate does not know).
    estimate(input) {
      return { llmTokens: LLM_TOKEN_ESTIMATES.criticPacket + Math.ceil(jsonBytes(input) / 4) };
    },
  },
  [boardReviewCard.name]: {
    // Only `auto` asks the built-in verifier; a person's decision is a write like any other.
    estimate(input) {
      return { llmTokens: input.decision === 'auto' ? LLM_TOKEN_ESTIMATES.verifierCard : 0 };
    },
  },
};

/** The cost model of an operation: its entry, or the input's bytes alone. */
export function costModelOf(op: Pick<OperationDef, 'name'>): CostModel {
  return OPERATION_COSTS[op.name] ?? {};
}

/** Cost units of a set of measures: the call, plus each measure by its weight, rounded up. */
export function costUnits(measures: Partial<CostMeasures>): number {
  // A measure that is not a finite positive number counts nothing: a cost is always a whole number the limiter takes.
  const part = (value: number | undefined, per: number) => (value !== undefined && Number.isFinite(value) && value > 0 ? Math.ceil(value / per) : 0);
  return (
    COST_WEIGHTS.call +
    part(measures.inputBytes, COST_WEIGHTS.inputBytesPerUnit) +
    part(measures.pixels, COST_WEIGHTS.pixelsPerUnit) +
    part(measures.scanBytes, COST_WEIGHTS.scanBytesPerUnit) +
    part(measures.llmTokens, COST_WEIGHTS.llmTokensPerUnit)
  );
}

/**
 * The UTF-8 bytes of `value` as JSON, without serializing it: the bytes
 * JSON.stringify would write, less the backslashes of escaped characters.
 * Serializing an 8 MB input only to count it took about 25 ms of the
 * gateway's event loop per call.
 */
export function jsonBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value) + 2;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null || typeof value !== 'object') return 4;
  if (Array.isArray(value)) {
    let n = 2 + Math.max(0, value.length - 1);
    for (const item of value) n += item === undefined || typeof item === 'function' ? 4 : jsonBytes(item);
    return n;
  }
  let n = 2;
  let fields = 0;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function') continue;
    n += Buffer.byteLength(key) + 3 + jsonBytes(item);
    fields += 1;
  }
  return n + Math.max(0, fields - 1);
}

/** The estimated cost of one call, in units: its input's bytes, the call, and what its model adds. */
export function estimateCost(op: Pick<OperationDef, 'name'>, input: Record<string, unknown>, facts: CostFacts = {}): number {
  return costUnits({ inputBytes: jsonBytes(input), ...costModelOf(op).estimate?.(input, facts) });
}

/** Units an answer adds to its estimate (a grep's scan), or 0. Not a whole call: the call was charged with the estimate. */
export function actualExtraCost(op: Pick<OperationDef, 'name'>, output: unknown): number {
  const measures = costModelOf(op).actual?.(output);
  return measures ? costUnits(measures) - COST_WEIGHTS.call : 0;
}
