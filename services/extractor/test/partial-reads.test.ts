// Issue 19, item 6 (spec WO-05: "never mark a partial or capped tool result
// not_found"): an extract over a partial or capped read says the value is not
// in the part read and how to read the rest; a grep over such reads is
// partial and names them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, type Artifact, type DerivedExtract, type GrepResult, type MaterializeResult, type RequirementResult } from '@vouch/contracts';
import { qualifyForPartialSource, unreadRest, type SourceRead } from '../src/domain/partial-source.js';
import { QueueJobs, startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

const notFound: RequirementResult = { id: 'baudRate', status: 'unresolved', code: 'not_found', reason: 'no line of the source mentions baudRate', recovery: { readLines: [], search: ['baudRate\\s*[:=]'] } };
const source = (over: Partial<SourceRead>): SourceRead => ({ path: 'src/uart.ts', fidelity: 'full', range: null, lineCount: 50, byteSize: 2_000, endsWithNewline: true, ...over });

describe('the part a read holds, and the rest', () => {
  it('a full read is left as it is: its not_found is a real absence', () => {
    expect(unreadRest(source({}))).toBeUndefined();
    expect(qualifyForPartialSource([notFound], source({}))).toEqual([notFound]);
  });

  it('a line range: the rest is before and after it', () => {
    expect(unreadRest(source({ fidelity: 'partial', range: { unit: 'lines', start: 10, end: 59 } }))).toEqual({
      part: 'lines 10-59 of src/uart.ts',
      parts: [
        { unit: 'lines', start: 1, end: 9 },
        { unit: 'lines', start: 60, end: null },
      ],
      instruction: 'read lines 1-9 and lines from 60 to the end (artifact.read with range), or the whole file, then extract again',
    });
    expect(unreadRest(source({ fidelity: 'partial', range: { unit: 'lines', start: 1, end: 50 } }))?.parts).toEqual([{ unit: 'lines', start: 51, end: null }]);
  });

  it('a byte range: the rest is before and after it', () => {
    expect(unreadRest(source({ fidelity: 'partial', range: { unit: 'bytes', start: 4_096, end: 8_192 } }))?.parts).toEqual([
      { unit: 'bytes', start: 0, end: 4_096 },
      { unit: 'bytes', start: 8_192, end: null },
    ]);
  });

  it('a capped read: the rest follows it, from its last line again when the cut fell inside that line', () => {
    expect(unreadRest(source({ fidelity: 'capped', lineCount: 50, endsWithNewline: true }))).toMatchObject({ part: '50 line(s) of src/uart.ts from line 1, where the read was cut short', parts: [{ unit: 'lines', start: 51, end: null }] });
    expect(unreadRest(source({ fidelity: 'capped', lineCount: 50, endsWithNewline: false }))?.parts).toEqual([{ unit: 'lines', start: 50, end: null }]);
    expect(unreadRest(source({ fidelity: 'capped', range: { unit: 'lines', start: 101, end: 400 }, lineCount: 20, endsWithNewline: true }))?.parts).toEqual([
      { unit: 'lines', start: 1, end: 100 },
      { unit: 'lines', start: 121, end: null },
    ]);
    expect(unreadRest(source({ fidelity: 'capped', range: { unit: 'bytes', start: 0, end: 65_536 }, byteSize: 1_000 }))?.parts).toEqual([{ unit: 'bytes', start: 1_000, end: null }]);
  });

  it('turns not_found and model_unresolved into not_in_part_read, and leaves other results alone', () => {
    const modelUnresolved: RequirementResult = { id: 'channel', status: 'unresolved', code: 'model_unresolved', reason: 'the model found no definition of channel in 1 candidate window(s)', recovery: { readLines: [{ start: 3, end: 7 }], search: [] } };
    const ambiguous: RequirementResult = { id: 'parity', status: 'unresolved', code: 'ambiguous', reason: 'parity is defined 2 times', recovery: { readLines: [], search: [] } };
    const satisfied: RequirementResult = { id: 'x', status: 'satisfied', value: '1', anchor: { startLine: 1, endLine: 1, quote: 'x: 1' }, confidence: 1 };
    const out = qualifyForPartialSource([notFound, modelUnresolved, ambiguous, satisfied], source({ fidelity: 'capped' }));
    expect(out[0]).toEqual({
      id: 'baudRate',
      status: 'unresolved',
      code: 'not_in_part_read',
      reason: 'baudRate is not in the part read (50 line(s) of src/uart.ts from line 1, where the read was cut short): read lines from 51 to the end (artifact.read with range), or the whole file, then extract again',
      recovery: { readLines: [], search: ['baudRate\\s*[:=]'], readRest: { path: 'src/uart.ts', parts: [{ unit: 'lines', start: 51, end: null }] } },
    });
    expect(out[1]).toMatchObject({ code: 'not_in_part_read', recovery: { readLines: [{ start: 3, end: 7 }] } });
    expect(out.slice(2)).toEqual([ambiguous, satisfied]);
    expect(out.map((r) => (r.status === 'unresolved' ? r.code : 'ok'))).not.toContain('not_found');
  });
});

describe('partial and capped reads through the queue', () => {
  let svc: ExtractorUnderTest;
  let jobs: QueueJobs;
  const T = 'acme';
  const whole = Array.from({ length: 200 }, (_, i) => (i === 149 ? '  baudRate: 57600,' : `  reg_${i}: 0x${i.toString(16)},`)).join('\n') + '\n';
  const firstLines = (n: number) => `${whole.split('\n').slice(0, n).join('\n')}\n`;

  beforeAll(async () => {
    svc = await startExtractorUnderTest('extractor_partial_reads');
    jobs = new QueueJobs(svc.prefix, QUEUES.extractor);
    await jobs.ready();
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
  });

  const read = (input: Record<string, unknown>) => jobs.run<Artifact>('artifact.read', T, { workspace: 'fw', ...input });

  it('an extract over a capped read says the value is not in the part read, and how to read the rest', async () => {
    const capped = await read({ path: 'src/capped.ts', content: firstLines(100), capped: true });
    expect(capped.fidelity).toBe('capped');
    const x = await jobs.run<DerivedExtract>('artifact.extractDeterministic', T, { artifactId: capped.artifactId, requirements: [{ id: 'baudRate' }, { id: 'reg_3' }] });
    expect(x.requirements[0]).toEqual({
      id: 'baudRate',
      status: 'unresolved',
      code: 'not_in_part_read',
      reason: 'baudRate is not in the part read (100 line(s) of src/capped.ts from line 1, where the read was cut short): read lines from 101 to the end (artifact.read with range), or the whole file, then extract again',
      recovery: { readLines: [], search: ['baudRate\\s*[:=]'], readRest: { path: 'src/capped.ts', parts: [{ unit: 'lines', start: 101, end: null }] } },
    });
    expect(x.requirements[1]).toMatchObject({ id: 'reg_3', status: 'satisfied', value: '0x3' });
    expect(x.coverage).toEqual({ total: 2, satisfied: 1, unresolved: 1, complete: false });
    expect(x.evidence).toContain('baudRate: UNRESOLVED (not_in_part_read) baudRate is not in the part read');
    expect(x.source).toMatchObject({ fidelity: 'capped', range: null });
  });

  it('an extract over a line range says which lines were read and which were not', async () => {
    const part = whole.split('\n').slice(9, 60).join('\n');
    const partial = await read({ path: 'src/range.ts', content: part, range: { unit: 'lines', start: 10, end: 60 } });
    const x = await jobs.run<DerivedExtract>('artifact.extractDeterministic', T, { artifactId: partial.artifactId, requirements: [{ id: 'baudRate' }] });
    expect(x.requirements[0]).toMatchObject({
      code: 'not_in_part_read',
      reason: expect.stringContaining('baudRate is not in the part read (lines 10-60 of src/range.ts): read lines 1-9 and lines from 61 to the end'),
      recovery: { readRest: { path: 'src/range.ts', parts: [{ unit: 'lines', start: 1, end: 9 }, { unit: 'lines', start: 61, end: null }] } },
    });
    // A branch extract through materialize comes from the same code.
    const m = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: partial.artifactId, expectedHash: partial.hash, budgetChars: 10, requirements: [{ id: 'baudRate' }] });
    expect(m).toMatchObject({ decision: 'branch_extract', extract: { requirements: [{ id: 'baudRate', code: 'not_in_part_read' }] } });
  });

  it('the whole file read: the same absence is not_found', async () => {
    const full = await read({ path: 'src/full.ts', content: firstLines(100) });
    const x = await jobs.run<DerivedExtract>('artifact.extractDeterministic', T, { artifactId: full.artifactId, requirements: [{ id: 'baudRate' }] });
    expect(x.requirements[0]).toMatchObject({ code: 'not_found' });
  });

  it('a grep whose targets include capped or partial reads is partial, naming them, found or not', async () => {
    await read({ workspace: 'g', path: 'src/a.ts', content: 'const channel = 3;\n' });
    const capped = await read({ workspace: 'g', path: 'src/big.ts', content: firstLines(100), capped: true });
    const missing = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'g', pattern: 'baudRate' });
    expect(missing).toMatchObject({
      status: 'partial',
      found: false,
      matches: [],
      provenance: {
        filesTotal: 2,
        filesScanned: 2,
        truncated: true,
        truncatedBy: ['partial_reads'],
        partialReads: [{ artifactId: capped.artifactId, path: 'src/big.ts', fidelity: 'capped', range: null }],
        partialReadsTotal: 1,
      },
      narrowing: { pathPrefix: null, tighterPatterns: [] },
    });
    expect(missing.narrowing?.instruction).toBe(
      'partial reads: 1 of the 2 files searched was recorded only from partial or capped reads (src/big.ts); a match may be in what was not read, so this is not the absence of matches. Read it whole (artifact.read without range) and search again.',
    );
    const hit = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'g', pattern: 'reg_3\\b' });
    expect(hit).toMatchObject({ status: 'partial', found: true, provenance: { truncatedBy: ['partial_reads'] } });

    // Once the file is read whole, its full read is what grep searches: complete.
    await read({ workspace: 'g', path: 'src/big.ts', content: whole });
    const complete = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'g', pattern: 'baudRate' });
    expect(complete).toMatchObject({ status: 'complete', found: true, narrowing: null, provenance: { truncatedBy: [], partialReads: [], partialReadsTotal: 0 } });
  });
});
