import type { DerivedExtract } from '@vouch/contracts';
import type { HarnessFile } from './harness-files.js';
import type { CheckpointRequirement } from './harness-report.js';

/** The two requirements asked of every file (spec WO-05). */
export const HARNESS_REQUIREMENTS = [
  { id: 'baudRate', description: 'the exact UART baudRate the bridge is configured with' },
  { id: 'channel', description: 'the exact radio channel the bridge uses' },
] as const;

/** Acceptance is twenty files, no more and no fewer (spec WO-05). */
export const ACCEPTANCE_FILES = 20;

export interface JudgeInput {
  file: HarnessFile;
  /** What artifact.read recorded for the file. */
  read: { artifactId: string; hash: string };
  extract: DerivedExtract;
  /** HARNESS_APPROVED_GPU_UUID, as a list. */
  approved: readonly string[];
}

export interface Verdict {
  requirements: CheckpointRequirement[];
  /** The GPU(s) the extract says its generations ran on, as observed by the service's gate; null when it names none. */
  gpuUuidObserved: string | null;
  problems: string[];
}

/**
 * Checks one extract against the file the harness planted, independently of
 * the service: each requirement satisfied with the exact value, its anchor's
 * quote on the anchored lines of the file as written and holding the value,
 * its line in the evidence handed to the parent; coverage agreeing with the
 * results; the extract linked to the source's hash; and made by the model on
 * an approved GPU, by the GPU the service observed for it. No source text
 * leaves this function: problems name requirements and UUIDs, never values.
 */
export function judge(input: JudgeInput): Verdict {
  const { file, extract } = input;
  const problems: string[] = [];
  const fileLines = file.text.split('\n');
  const requirements = HARNESS_REQUIREMENTS.map(({ id }): CheckpointRequirement => {
    const r = extract.requirements.find((x) => x.id === id);
    if (!r) {
      problems.push(`${id}: omitted from the derived evidence`);
      return { id, status: 'omitted', anchorLines: null, exact: false, code: null };
    }
    if (r.status === 'unresolved') {
      problems.push(`${id}: unresolved (${r.code})`);
      return { id, status: 'unresolved', anchorLines: null, exact: false, code: r.code };
    }
    const exact = r.value === file.expected[id];
    if (!exact) problems.push(`${id}: wrong value`);
    const { startLine, endLine, quote } = r.anchor;
    const anchored = startLine >= 1 && endLine >= startLine && endLine <= fileLines.length && quote.length > 0 && quote.includes(r.value) && fileLines.slice(startLine - 1, endLine).join('\n').includes(quote);
    if (!anchored) problems.push(`${id}: unanchored (the quote is not on lines ${startLine}-${endLine} of the file, or does not hold the value)`);
    if (!extract.evidence.split('\n').some((line) => line.startsWith(`${id} = ${r.value} `))) problems.push(`${id}: omitted from the evidence handed to the parent`);
    return { id, status: 'satisfied', anchorLines: [startLine, endLine], exact, code: null };
  });
  if (!extract.coverage.complete && problems.length === 0) problems.push('coverage is not complete');
  if (extract.coverage.complete && extract.requirements.some((r) => r.status !== 'satisfied')) problems.push('coverage says complete with an open requirement');
  if (extract.source.hash !== input.read.hash || extract.source.artifactId !== input.read.artifactId) problems.push('the extract is not linked to the source read (artifact id and hash)');

  const gpuUuidObserved = extract.extractor.gpuUuid;
  if (extract.extractor.kind !== 'llm') problems.push(`wrong GPU: the extract came from the ${extract.extractor.kind} extractor, not the model`);
  else if (!gpuUuidObserved) problems.push('wrong GPU: the extract records no GPU for its generations');
  else {
    const foreign = gpuUuidObserved.split(',').filter((u) => !input.approved.some((a) => a.toLowerCase() === u.trim().toLowerCase()));
    if (foreign.length) problems.push(`wrong GPU: generated on ${foreign.join(', ')}, not an approved GPU (HARNESS_APPROVED_GPU_UUID)`);
  }
  return { requirements, gpuUuidObserved, problems };
}

/**
 * HARNESS_FILES as a count. Unset means the twenty acceptance needs; another
 * whole number from 1 to 100 runs that many files as a smoke run, which is
 * never accepted; anything else (0, a negative, a fraction, text) is refused.
 */
export function parseFileCount(raw: string | undefined): { ok: true; count: number } | { ok: false; problem: string } {
  if (raw === undefined || raw.trim() === '') return { ok: true, count: ACCEPTANCE_FILES };
  const text = raw.trim();
  const count = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(count) || count < 1 || count > 100) {
    return { ok: false, problem: `HARNESS_FILES=${JSON.stringify(raw)} is not a number of files from 1 to 100: leave it unset for the acceptance run (${ACCEPTANCE_FILES} files)` };
  }
  return { ok: true, count };
}
