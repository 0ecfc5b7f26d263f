// The harness's judge, where it must fail: an extract that leaves a
// requirement unresolved, unanchored or omitted, or that ran on a GPU other
// than the approved one, is never passed; and HARNESS_FILES counts that are
// not a number of files are refused.
import { describe, expect, it } from 'vitest';
import type { DerivedExtract, RequirementResult } from '@vouch/contracts';
import { H200_UUID, OTHER_GPU_UUID, SECOND_H200_UUID } from '@vouch/testing';
import { harnessFile } from '../src/harness-files.js';
import { ACCEPTANCE_FILES, judge, parseFileCount } from '../src/harness-judge.js';

const file = harnessFile(4);
const lines = file.text.split('\n');
const lineOf = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix)) + 1;
const READ = { artifactId: 'art-0f3a9c2d4e5b6a7980112233', hash: 'a'.repeat(64) };

function satisfied(id: 'baudRate' | 'channel'): RequirementResult {
  const line = lineOf(`  ${id}:`);
  const value = file.expected[id];
  return { id, status: 'satisfied', value, anchor: { startLine: line, endLine: line, quote: `${id}: ${value}` }, confidence: 0.95 };
}

function extract(over: { requirements?: RequirementResult[]; gpuUuid?: string | null; kind?: 'llm' | 'deterministic'; evidence?: string; hash?: string } = {}): DerivedExtract {
  const requirements = over.requirements ?? [satisfied('baudRate'), satisfied('channel')];
  const done = requirements.filter((r) => r.status === 'satisfied').length;
  const evidence =
    over.evidence ??
    requirements.map((r) => (r.status === 'satisfied' ? `${r.id} = ${r.value} [L${r.anchor.startLine}: ${JSON.stringify(r.anchor.quote)}]` : `${r.id}: UNRESOLVED (${r.code}) ${r.reason}`)).join('\n');
  return {
    extractId: 'ext-1',
    source: { artifactId: READ.artifactId, hash: over.hash ?? READ.hash, revision: 1, range: null, fidelity: 'full' },
    requirements,
    coverage: { total: requirements.length || 1, satisfied: done, unresolved: requirements.length - done, complete: requirements.length > 0 && done === requirements.length },
    extractor: { kind: over.kind ?? 'llm', name: 'vouch-window-extract', version: '2', model: { name: 'extract:7b', digest: 'd'.repeat(64) }, node: 'gpu-node-1', gpuUuid: over.gpuUuid === undefined ? H200_UUID : over.gpuUuid },
    confidence: 0.95,
    evidence,
    evidenceChars: evidence.length,
    windows: { count: 2, largestPromptChars: 1_400 },
    createdAt: '2026-12-04T00:00:00.000Z',
  };
}

const run = (x: DerivedExtract, approved: readonly string[] = [H200_UUID]) => judge({ file, read: READ, extract: x, approved });

describe('the harness judge', () => {
  it('passes an extract with both exact values, anchored on the file as written, on the approved GPU', () => {
    expect(run(extract())).toEqual({
      requirements: [
        { id: 'baudRate', status: 'satisfied', anchorLines: [lineOf('  baudRate:'), lineOf('  baudRate:')], exact: true, code: null },
        { id: 'channel', status: 'satisfied', anchorLines: [lineOf('  channel:'), lineOf('  channel:')], exact: true, code: null },
      ],
      gpuUuidObserved: H200_UUID,
      problems: [],
    });
  });

  it('fails an unresolved requirement', () => {
    const open: RequirementResult = { id: 'channel', status: 'unresolved', code: 'anchor_failed', reason: 'the quoted text is not on lines', recovery: { readLines: [], search: [] } };
    const verdict = run(extract({ requirements: [satisfied('baudRate'), open] }));
    expect(verdict.problems).toEqual(['channel: unresolved (anchor_failed)']);
    expect(verdict.requirements[1]).toEqual({ id: 'channel', status: 'unresolved', anchorLines: null, exact: false, code: 'anchor_failed' });
  });

  it('fails an unanchored requirement: a quote not on its lines, outside the file, or without the value', () => {
    const baud = satisfied('baudRate') as Extract<RequirementResult, { status: 'satisfied' }>;
    const elsewhere = { ...baud, anchor: { ...baud.anchor, startLine: baud.anchor.startLine + 1, endLine: baud.anchor.endLine + 1 } };
    const outside = { ...baud, anchor: { startLine: lines.length + 5, endLine: lines.length + 5, quote: baud.anchor.quote } };
    const valueless = { ...baud, anchor: { ...baud.anchor, quote: 'baudRate:' } };
    const paraphrased = { ...baud, anchor: { ...baud.anchor, quote: `baudRate := ${baud.value}` } };
    for (const r of [elsewhere, outside, valueless, paraphrased]) {
      const verdict = run(extract({ requirements: [r, satisfied('channel')] }));
      expect(verdict.problems).toEqual([expect.stringMatching(/^baudRate: unanchored/)]);
    }
  });

  it('fails an omitted requirement: missing from the results, or from the evidence handed to the parent', () => {
    expect(run(extract({ requirements: [satisfied('baudRate')] })).problems).toEqual(['channel: omitted from the derived evidence']);
    const evidence = extract().evidence.split('\n')[0]!;
    expect(run(extract({ evidence })).problems).toEqual(['channel: omitted from the evidence handed to the parent']);
  });

  it('fails a wrong value', () => {
    const baud = satisfied('baudRate') as Extract<RequirementResult, { status: 'satisfied' }>;
    const wrong = { ...baud, value: baud.value.slice(0, -1), anchor: { ...baud.anchor, quote: `baudRate: ${baud.value.slice(0, -1)}` } };
    expect(run(extract({ requirements: [wrong, satisfied('channel')] })).problems).toContain('baudRate: wrong value');
  });

  it('fails the wrong GPU: another UUID, none, a second GPU beside the approved one, or no model at all', () => {
    expect(run(extract({ gpuUuid: OTHER_GPU_UUID })).problems).toEqual([`wrong GPU: generated on ${OTHER_GPU_UUID}, not an approved GPU (HARNESS_APPROVED_GPU_UUID)`]);
    expect(run(extract({ gpuUuid: OTHER_GPU_UUID })).gpuUuidObserved).toBe(OTHER_GPU_UUID);
    expect(run(extract({ gpuUuid: null })).problems).toEqual(['wrong GPU: the extract records no GPU for its generations']);
    expect(run(extract({ gpuUuid: `${H200_UUID},${SECOND_H200_UUID}` })).problems).toEqual([`wrong GPU: generated on ${SECOND_H200_UUID}, not an approved GPU (HARNESS_APPROVED_GPU_UUID)`]);
    expect(run(extract({ gpuUuid: `${H200_UUID},${SECOND_H200_UUID}` }), [H200_UUID, SECOND_H200_UUID]).problems).toEqual([]);
    expect(run(extract({ kind: 'deterministic', gpuUuid: null })).problems).toEqual(['wrong GPU: the extract came from the deterministic extractor, not the model']);
  });

  it('fails an extract that is not linked to the source read', () => {
    expect(run(extract({ hash: 'b'.repeat(64) })).problems).toEqual(['the extract is not linked to the source read (artifact id and hash)']);
  });
});

describe('HARNESS_FILES', () => {
  it('defaults to the twenty files acceptance needs', () => {
    expect(ACCEPTANCE_FILES).toBe(20);
    expect(parseFileCount(undefined)).toEqual({ ok: true, count: 20 });
    expect(parseFileCount('20')).toEqual({ ok: true, count: 20 });
  });

  it('runs another whole number as given (a smoke run, never accepted: see live-harness.test.ts)', () => {
    expect(parseFileCount('3')).toEqual({ ok: true, count: 3 });
  });

  it.each(['0', '-1', 'abc', '2.5', '1e1', 'NaN', '101', ' 3x'])('refuses %j', (raw) => {
    expect(parseFileCount(raw)).toMatchObject({ ok: false, problem: expect.stringContaining('is not a number of files from 1 to 100') });
  });
});
