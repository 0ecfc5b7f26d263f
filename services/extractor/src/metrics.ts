import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The extractor's metrics (DESIGN.md, "Metrics"); deploy/ queries these names. */
export interface ExtractorMetrics {
  reads: Counter<'fidelity' | 'outcome'>;
  rereads: Counter<'reason'>;
  materializations: Counter<'decision' | 'reason'>;
  materializedChars: Histogram<'decision'>;
  greps: Counter<'status'>;
  grepScannedBytes: Counter;
  extracts: Counter<'kind' | 'coverage'>;
  requirements: Counter<'kind' | 'status'>;
  promptChars: Histogram;
  evidenceChars: Histogram<'kind'>;
  /** 1 for the gate's current state (pending, passed, failed, off), 0 for the others. */
  gpuGate: Gauge<'state'>;
  gpuGateChecks: Counter<'outcome' | 'stage'>;
  /** Each generation's speed, as Ollama reports it (the generation gate's input). */
  generationTokensPerSecond: Histogram;
}

export const GATE_STATES = ['off', 'pending', 'passed', 'failed'] as const;

const CHAR_BUCKETS = [100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 51_200, 204_800, 1_048_576];

export function createExtractorMetrics(registry: Registry): ExtractorMetrics {
  const r = [registry];
  return {
    reads: new Counter({ name: 'vouch_extractor_reads_total', help: 'artifact.read calls by fidelity and outcome (new, repeat, reread, gone).', labelNames: ['fidelity', 'outcome'] as const, registers: r }),
    rereads: new Counter({ name: 'vouch_extractor_rereads_total', help: 'Justified rereads: reads that found a changed file and superseded its older evidence.', labelNames: ['reason'] as const, registers: r }),
    materializations: new Counter({
      name: 'vouch_extractor_materializations_total',
      help: 'Materialization decisions (full_body, branch_extract, over_budget, reread_required) by reason.',
      labelNames: ['decision', 'reason'] as const,
      registers: r,
    }),
    materializedChars: new Histogram({ name: 'vouch_extractor_materialized_chars', help: 'Characters delivered by a materialization, by decision.', labelNames: ['decision'] as const, buckets: CHAR_BUCKETS, registers: r }),
    greps: new Counter({ name: 'vouch_extractor_greps_total', help: 'artifact.grep calls by status (complete, partial).', labelNames: ['status'] as const, registers: r }),
    grepScannedBytes: new Counter({ name: 'vouch_extractor_grep_scanned_bytes_total', help: 'Bytes of artifact bodies scanned by artifact.grep.', registers: r }),
    extracts: new Counter({ name: 'vouch_extractor_extracts_total', help: 'Branch extracts by extractor kind and coverage (complete, incomplete).', labelNames: ['kind', 'coverage'] as const, registers: r }),
    requirements: new Counter({ name: 'vouch_extractor_requirements_total', help: 'Requirements of branch extracts by extractor kind and status (satisfied, unresolved).', labelNames: ['kind', 'status'] as const, registers: r }),
    promptChars: new Histogram({ name: 'vouch_extractor_prompt_chars', help: 'Characters of each isolated LLM extraction prompt (system + user).', buckets: [500, 1_000, 1_500, 2_000, 2_500, 3_000, 4_000, 8_000, 16_000], registers: r }),
    evidenceChars: new Histogram({ name: 'vouch_extractor_evidence_chars', help: 'Characters of evidence an extract hands to its parent, by extractor kind.', labelNames: ['kind'] as const, buckets: CHAR_BUCKETS, registers: r }),
    gpuGate: new Gauge({ name: 'vouch_extractor_gpu_gate', help: 'GPU gate state of this process: 1 on the current state (off, pending, passed, failed).', labelNames: ['state'] as const, registers: r }),
    gpuGateChecks: new Counter({
      name: 'vouch_extractor_gpu_gate_checks_total',
      help: 'GPU gate checks (at start-up and at every extraction job) by outcome (passed, failed) and the stage that failed (none when passed).',
      labelNames: ['outcome', 'stage'] as const,
      registers: r,
    }),
    generationTokensPerSecond: new Histogram({
      name: 'vouch_extractor_generation_tokens_per_second',
      help: 'Tokens per second of each extraction generation (Ollama eval_count / eval_duration); below the GPU class floor the job fails the GPU gate.',
      buckets: [2, 4, 8, 16, 25, 35, 50, 75, 100, 150, 200, 300],
      registers: r,
    }),
  };
}

export function setGateState(metrics: ExtractorMetrics, state: (typeof GATE_STATES)[number]): void {
  for (const s of GATE_STATES) metrics.gpuGate.set({ state: s }, s === state ? 1 : 0);
}
