import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * HARNESS_REPORT_FILE: one JSON object per line. A checkpoint after each
 * artifact and one terminal report. Nothing in it is source text: hashes,
 * sizes, line numbers, statuses and whether each value matched, never the
 * values or quotes themselves.
 */
export interface CheckpointRequirement {
  id: string;
  status: 'satisfied' | 'unresolved' | 'omitted';
  /** The anchor's lines, when satisfied. */
  anchorLines: [number, number] | null;
  /** Whether the extracted value equals the exact value planted in the file. */
  exact: boolean;
  code: string | null;
}

export interface Checkpoint {
  type: 'checkpoint';
  index: number;
  artifactId: string;
  sourceHash: string;
  sourceBytes: number;
  sourceLines: number;
  extractId: string;
  requirements: CheckpointRequirement[];
  coverage: { total: number; satisfied: number; unresolved: number; complete: boolean };
  promptWindows: number;
  largestPromptChars: number;
  parentEvidenceChars: number;
  extractor: { kind: string; model: string | null; digest: string | null; gpuUuid: string | null; node: string };
  /** The GPU(s) the service's gate saw Ollama's runner on for this artifact's generations, as the extract records it. */
  gpuUuidObserved: string | null;
  passed: boolean;
  problems: string[];
  at: string;
}

export interface TerminalReport {
  type: 'terminal';
  accepted: boolean;
  /** Files acceptance needs (20): a run of any other count is never accepted. */
  requiredArtifacts: number;
  artifacts: number;
  /** Checkpoints written: one per artifact judged. */
  checkpoints: number;
  passed: number;
  failed: number;
  largestPromptChars: number;
  maxParentEvidenceChars: number;
  gate: { ok: boolean; stage?: string; reason?: string; gpuUuid?: string };
  model: string;
  problems: string[];
  startedAt: string;
  finishedAt: string;
}

export class ReportFile {
  constructor(readonly path: string) {}

  async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await writeFile(this.path, '');
  }

  async write(entry: Checkpoint | TerminalReport): Promise<void> {
    await appendFile(this.path, `${JSON.stringify(entry)}\n`);
  }
}
