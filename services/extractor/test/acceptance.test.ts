// The spec's four acceptance tests (WO-05), through the extractor's queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '@vouch/testing';
import { QUEUES, type Artifact, type DerivedExtract, type GrepResult, type MaterializeResult } from '@vouch/contracts';
import { listEdges, listRereads } from '../src/artifact-store.js';
import { sha256Hex } from '../src/domain/artifact-identity.js';
import { QueueJobs, oversizedSource, startExtractorUnderTest, type ExtractorUnderTest } from './extractor-test-env.js';

type ReadResult = Artifact & { alreadyRecorded: boolean; reread: null | { reason: string; previousRevision: number; previousHash: string | null; superseded: number; justified: true } };

describe('artifact fidelity acceptance, through the queue', () => {
  let svc: ExtractorUnderTest;
  let jobs: QueueJobs;
  const T = 'acme';

  beforeAll(async () => {
    svc = await startExtractorUnderTest('extractor_acceptance');
    jobs = new QueueJobs(svc.prefix, QUEUES.extractor);
    await jobs.ready();
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
  });

  const read = (input: Record<string, unknown>, tenant = T) => jobs.run<ReadResult>('artifact.read', tenant, { workspace: 'firmware', ...input });

  it('twenty oversized files keep their source hashes and explicit coverage; none is complete with an open requirement', async () => {
    const files = Array.from({ length: 20 }, (_, i) => ({ path: `drivers/uart-${i}.ts`, ...oversizedSource(i, { channel: i % 5 === 4 ? null : undefined }) }));
    for (const f of files) expect(f.text.length).toBeGreaterThan(100_000);
    const reads = await Promise.all(files.map((f) => read({ path: f.path, content: f.text })));
    const extracts = await Promise.all(
      reads.map((r) => jobs.run<DerivedExtract>('artifact.extractDeterministic', T, { artifactId: r.artifactId, expectedHash: r.hash, requirements: [{ id: 'baudRate' }, { id: 'channel' }] })),
    );
    for (const [i, x] of extracts.entries()) {
      const f = files[i]!;
      expect(reads[i]!.hash).toBe(sha256Hex(f.text));
      expect(x.source).toEqual({ artifactId: reads[i]!.artifactId, hash: sha256Hex(f.text), revision: 1, range: null, fidelity: 'full' });
      expect(x.extractor).toMatchObject({ kind: 'deterministic', model: null, gpuUuid: null });
      const baud = x.requirements.find((r) => r.id === 'baudRate');
      expect(baud).toMatchObject({ status: 'satisfied', value: f.baudRate });
      const channel = x.requirements.find((r) => r.id === 'channel')!;
      if (f.channel === null) {
        expect(channel).toMatchObject({ status: 'unresolved', code: 'not_found' });
        expect(x.coverage).toEqual({ total: 2, satisfied: 1, unresolved: 1, complete: false });
      } else {
        expect(channel).toMatchObject({ status: 'satisfied', value: f.channel });
        expect(x.coverage).toEqual({ total: 2, satisfied: 2, unresolved: 0, complete: true });
      }
      expect(x.coverage.complete).toBe(x.requirements.every((r) => r.status === 'satisfied'));
      expect(x.evidenceChars).toBeLessThanOrEqual(800);
    }
    expect(extracts.filter((x) => !x.coverage.complete)).toHaveLength(4);
    expect(await metricValue(svc.service.metrics.registry, 'vouch_extractor_extracts_total', { kind: 'deterministic', coverage: 'incomplete' })).toBe(4);
  });

  it('an edit gets the exact body, or a visible request to reread: never a wrapper', async () => {
    const v1 = 'export const uart = {\n  baudRate: 115200,\n  channel: 3,\n};\n';
    const first = await read({ path: 'src/uart.ts', content: v1 });
    const exact = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: first.artifactId, expectedHash: first.hash });
    expect(exact).toMatchObject({ decision: 'full_body', body: v1, bodyChars: v1.length });

    const wrongHash = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: first.artifactId, expectedHash: sha256Hex('something else') });
    expect(wrongHash).toMatchObject({ decision: 'reread_required', reason: 'hash_mismatch', current: { artifactId: first.artifactId } });
    expect(wrongHash).not.toHaveProperty('body');

    const second = await read({ path: 'src/uart.ts', content: v1.replace('115200', '57600') });
    const stale = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: first.artifactId, expectedHash: first.hash });
    expect(stale).toMatchObject({ decision: 'reread_required', reason: 'superseded', artifact: { availability: 'superseded' }, current: { artifactId: second.artifactId, hash: second.hash, revision: 2 } });
    expect((stale as { instruction: string }).instruction).toContain('read the file again with artifact.read before editing');

    const budgeted = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: second.artifactId, expectedHash: second.hash, budgetChars: 20, requirements: [{ id: 'baudRate' }] });
    expect(budgeted).toMatchObject({ decision: 'branch_extract', bodyChars: v1.length - 1, budgetChars: 20, extract: { coverage: { complete: true }, requirements: [{ id: 'baudRate', value: '57600' }] } });
    const refused = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: second.artifactId, expectedHash: second.hash, budgetChars: 20 });
    expect(refused).toMatchObject({ decision: 'over_budget', budgetChars: 20 });

    const huge = `${'  reg: 0x00000000, // filler filler filler filler filler\n'.repeat(20_000)}  baudRate: 921600,\n`;
    const big = await read({ path: 'src/huge.ts', content: huge });
    expect(await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: big.artifactId, expectedHash: big.hash })).toMatchObject({ decision: 'over_budget', budgetChars: null });
    expect(await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: big.artifactId, expectedHash: big.hash, requirements: [{ id: 'baudRate' }] })).toMatchObject({
      decision: 'branch_extract',
      extract: { coverage: { complete: true }, requirements: [{ value: '921600' }] },
    });

    const gone = await read({ path: 'src/uart.ts', gone: true });
    expect(gone).toMatchObject({ gone: true, unavailable: 1 });
    const unavailable = await jobs.run<MaterializeResult>('artifact.materialize', T, { artifactId: second.artifactId, expectedHash: second.hash });
    expect(unavailable).toMatchObject({ decision: 'reread_required', reason: 'unavailable' });

    const edges = await listEdges(svc.service.pool, T, second.artifactId);
    expect(edges.map((e) => [e.decision, e.reason, e.bodyChars, e.budgetChars])).toEqual([
      ['branch_extract', 'over_budget_extracted', v1.length - 1, 20],
      ['over_budget', 'over_budget_no_requirements', v1.length - 1, 20],
      ['reread_required', 'unavailable', v1.length - 1, null],
    ]);
    expect(edges[0]!.extractId).toMatch(/^ext-/);
    const registry = svc.service.metrics.registry;
    expect(await metricValue(registry, 'vouch_extractor_materializations_total', { decision: 'full_body', reason: 'no_budget' })).toBe(1);
    expect(await metricValue(registry, 'vouch_extractor_materializations_total', { decision: 'branch_extract' })).toBe(1);
    expect(await metricValue(registry, 'vouch_extractor_materializations_total', { decision: 'reread_required', reason: 'superseded' })).toBe(1);
  });

  it('a capped 1 MB grep is a partial success with narrowing, not discovery failure', async () => {
    const line = (i: number, j: number) => `  setting_${i}_${j}: value, // baudRate note ${'x'.repeat(60)}`;
    for (let i = 0; i < 12; i++) {
      const text = Array.from({ length: 1_500 }, (_, j) => line(i, j)).join('\n');
      await read({ workspace: 'big', path: `src/${i < 8 ? 'uart' : 'spi'}/file-${i}.ts`, content: text });
    }
    const result = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'big', pattern: 'baudRate note' });
    expect(result.status).toBe('partial');
    expect(result.found).toBe(true);
    expect(result.provenance).toMatchObject({ capBytes: 1_000_000, filesTotal: 12, filesScanned: 12, matchesCounted: 18_000, truncated: true, truncatedBy: ['result_cap'] });
    expect(result.provenance.returnedBytes).toBeLessThanOrEqual(1_000_000);
    expect(result.provenance.returnedBytes).toBeGreaterThan(990_000);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(1_048_576);
    expect(result.provenance.matchesReturned).toBe(result.matches.length);
    expect(result.provenance.matchesReturned).toBeLessThan(18_000);
    expect(result.narrowing?.topFiles).toHaveLength(5);
    expect(result.narrowing?.pathPrefix).toBe('src/');
    expect(result.narrowing?.instruction).toContain('not the absence of matches');

    const narrowed = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'big', pattern: 'setting_11_14\\d\\d:', pathPrefix: 'src/spi/' });
    expect(narrowed).toMatchObject({ status: 'complete', found: true, narrowing: null, provenance: { filesTotal: 4, matchesCounted: 100, truncated: false } });
    expect(narrowed.matches[0]).toMatchObject({ path: 'src/spi/file-11.ts', line: 1_401 });

    const nothing = await jobs.run<GrepResult>('artifact.grep', T, { workspace: 'big', pattern: 'no-such-text' });
    expect(nothing).toMatchObject({ status: 'complete', found: false, matches: [] });
  });

  it('a hash change permits and records a justified reread; the same hash again is the same revision', async () => {
    const a = await read({ path: 'src/radio.ts', content: 'channel: 11\n' });
    expect(a).toMatchObject({ revision: 1, alreadyRecorded: false, reread: null, fidelity: 'full', availability: 'available' });
    const again = await read({ path: './src//radio.ts', content: 'channel: 11\n' });
    expect(again).toMatchObject({ artifactId: a.artifactId, revision: 1, alreadyRecorded: true, reread: null });

    const b = await read({ path: 'src/radio.ts', content: 'channel: 12\n' });
    expect(b).toMatchObject({ revision: 2, alreadyRecorded: false, reread: { reason: 'hash_changed', previousRevision: 1, previousHash: a.hash, superseded: 1, justified: true } });
    const partial = await read({ path: 'src/radio.ts', content: 'channel: 12', range: { unit: 'lines', start: 1, end: 1 } });
    expect(partial).toMatchObject({ revision: 2, fidelity: 'partial', reread: null });
    const changedPartial = await read({ path: 'src/radio.ts', content: 'channel: 13', range: { unit: 'lines', start: 1, end: 1 } });
    expect(changedPartial).toMatchObject({ revision: 3, reread: { reason: 'content_changed', superseded: 2 } });

    const rereads = await listRereads(svc.service.pool, { tenant: T, workspace: 'firmware', path: 'src/radio.ts' });
    expect(rereads.map((r) => [r.from_revision, r.to_revision, r.reason, r.superseded])).toEqual([
      [1, 2, 'hash_changed', 1],
      [2, 3, 'content_changed', 2],
    ]);
    expect(await metricValue(svc.service.metrics.registry, 'vouch_extractor_rereads_total', { reason: 'hash_changed' })).toBeGreaterThanOrEqual(1);

    // Another tenant reading identical bytes gets its own artifact, revision 1, no reread.
    const other = await read({ path: 'src/radio.ts', content: 'channel: 11\n' }, 'globex');
    expect(other).toMatchObject({ revision: 1, reread: null, hash: a.hash });
    expect(other.artifactId).not.toBe(a.artifactId);
  });
});
