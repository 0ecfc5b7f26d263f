import type { AuxiliaryOutput, EvidencePlan, ObservationOutput, OcrOutput, PlannedStage, StageRecord, VisionStageKind } from '@vouch/contracts';
import { VouchError } from '@vouch/contracts';
import { assessCoverage, textLikely, TEXT_LIKELY, type Coverage, type LadderEvidence } from './assess-coverage.js';

/** What a stage runner answers: its output, or why it could not produce one. */
export type StageResult<O> =
  | { ok: true; output: O; tool: string; confidence: number | null; note?: string }
  | { ok: false; tool: string | null; reason: string; recovery: string | null };

/** The stage implementations, given the evidence gathered before them. */
export interface StageRunners {
  observation(evidence: LadderEvidence): Promise<StageResult<ObservationOutput>>;
  ocr(evidence: LadderEvidence): Promise<StageResult<OcrOutput>>;
  auxiliary(evidence: LadderEvidence): Promise<StageResult<AuxiliaryOutput> & { model?: string }>;
}

export interface StageFailure {
  kind: VisionStageKind;
  reason: string;
  recovery: string | null;
}

export interface LadderOutcome {
  stages: StageRecord[];
  evidence: LadderEvidence;
  coverage: Coverage;
  failures: StageFailure[];
}

/** Hooks for metrics; the ladder itself stays free of them. */
export interface LadderObserver {
  stageDone?(record: StageRecord, role: PlannedStage['role']): void;
}

const ALL_KINDS: readonly VisionStageKind[] = ['observation', 'ocr', 'auxiliary_vision'];

function skipped(kind: VisionStageKind, reason: string, note: string): StageRecord {
  return { kind, reason, status: 'skipped', note, durationMs: 0, tool: null, confidence: null, output: null } as StageRecord;
}

function metBy(coverage: Coverage): string {
  return `need met: ${coverage.notes.join('; ')}`;
}

/**
 * Runs the planned stages in order and stops early only once the evidence
 * meets the need (unless the plan runs all). A stage that fails leaves an
 * unresolved record and the ladder goes on; a typed error (a bad image)
 * ends it, since no stage can read such an image. Stages the plan did not
 * choose are recorded as skipped with the plan's reason.
 */
export async function runLadder(plan: EvidencePlan, runners: StageRunners, observer: LadderObserver = {}, now: () => number = () => performance.now()): Promise<LadderOutcome> {
  const evidence: LadderEvidence = {};
  const records: StageRecord[] = [];
  const failures: StageFailure[] = [];
  for (const planned of plan.stages) {
    const before = assessCoverage(plan.need, evidence);
    let record: StageRecord | undefined;
    if (!plan.runAll && before.met) record = skipped(planned.kind, planned.reason, metBy(before));
    else if (planned.onlyIfTextLikely && !textLikely(evidence)) {
      record = skipped(planned.kind, planned.reason, `observation estimates text is unlikely (${evidence.observation!.textLikelihood.toFixed(2)} < ${TEXT_LIKELY})`);
    }
    if (!record) {
      const started = now();
      let result: StageResult<unknown> & { model?: string };
      try {
        result = planned.kind === 'observation' ? await runners.observation(evidence) : planned.kind === 'ocr' ? await runners.ocr(evidence) : await runners.auxiliary(evidence);
      } catch (err) {
        if (err instanceof VouchError) throw err;
        result = { ok: false, tool: null, reason: `the stage failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`, recovery: 'retry the request' };
      }
      const durationMs = Math.round((now() - started) * 10) / 10;
      if (result.ok) {
        if (planned.kind === 'observation') evidence.observation = result.output as ObservationOutput;
        else if (planned.kind === 'ocr') evidence.ocr = result.output as OcrOutput;
        else {
          evidence.auxiliary = result.output as AuxiliaryOutput;
          if (result.model) evidence.auxiliaryModel = result.model;
        }
        record = { kind: planned.kind, reason: planned.reason, status: 'ran', note: result.note ?? null, durationMs, tool: result.tool, confidence: result.confidence, output: result.output } as StageRecord;
      } else {
        failures.push({ kind: planned.kind, reason: result.reason, recovery: result.recovery });
        record = { kind: planned.kind, reason: planned.reason, status: 'unresolved', note: result.reason, durationMs, tool: result.tool, confidence: null, output: null } as StageRecord;
      }
    }
    records.push(record);
    observer.stageDone?.(record, planned.role);
  }
  for (const kind of ALL_KINDS) {
    if (!plan.stages.some((s) => s.kind === kind)) {
      const record = skipped(kind, 'not planned', notPlannedNote(plan, kind));
      records.push(record);
      observer.stageDone?.(record, 'escalation');
    }
  }
  records.sort((a, b) => ALL_KINDS.indexOf(a.kind) - ALL_KINDS.indexOf(b.kind));
  return { stages: records, evidence, coverage: assessCoverage(plan.need, evidence), failures };
}

function notPlannedNote(plan: EvidencePlan, kind: VisionStageKind): string {
  if (plan.requestedDetail === 'low') return 'requestedDetail low: only observation runs';
  if (kind === 'ocr') return 'the request needs no exact text';
  return 'the request needs neither a description nor an identification that only a vision model could give';
}
