import {
  ARTIFACT_LIMITS,
  BadInputError,
  ConflictError,
  NotFoundError,
  artifactExtract,
  artifactExtractDeterministic,
  artifactGrep,
  artifactMaterialize,
  artifactRead,
  normalizeArtifactPath,
  type ArtifactRange,
  type DerivedExtract,
  type GrepResult,
  type MaterializeResult,
  type OperationOutput,
  type RequirementInput,
} from '@vouch/contracts';
import { handle, runInSlices, withTransaction, type HandlerContext, type Logger, type OperationHandler, type Pool } from '@vouch/platform';
import type { z } from 'zod';
import {
  PathRaced,
  availableArtifacts,
  currentArtifact,
  findExtract,
  getArtifact,
  grepTargets,
  insertArtifact,
  lockPathHead,
  putBody,
  recordEdge,
  recordExtract,
  recordReread,
  retireArtifacts,
  toArtifact,
  writePathHead,
  type ArtifactRow,
  type PathKey,
} from './artifact-store.js';
import type { BodyCache, CachedBody } from './body-cache.js';
import { artifactIdFor, jobScopedId, sha256HexInSlices } from './domain/artifact-identity.js';
import { DIGEST_SLICE_BYTES, indexLines, indexLinesInSlices, rangeMatches, type BodyLines } from './domain/body-lines.js';
import { GrepPatternError, compileGrepPattern } from './domain/grep-pattern.js';
import { scanTargets, type ScanTarget } from './domain/grep-scan.js';
import { adviseNarrowing } from './domain/narrow-grep.js';
import { planMaterialize } from './domain/plan-materialize.js';
import { fidelityOf, planRead } from './domain/plan-read.js';
import { deriveExtract, type Extractor } from './extract-artifact.js';
import type { ExtractorMetrics } from './metrics.js';

type Input<Op extends { input: z.ZodType }> = z.output<Op['input']>;

/** Who asks: the job's tenant, and the job id that names this request across BullMQ re-runs. */
export interface ExtractorCaller {
  tenant: string;
  jobId: string;
}

export interface ExtractorCommandDeps {
  pool: Pool;
  metrics: ExtractorMetrics;
  bodies: BodyCache;
  deterministic: Extractor;
  grepScanCapBytes: number;
  logger?: Logger;
  now?: () => Date;
}

export interface ExtractorCommands {
  read(caller: ExtractorCaller, input: Input<typeof artifactRead>): Promise<OperationOutput<typeof artifactRead>>;
  materialize(caller: ExtractorCaller, input: Input<typeof artifactMaterialize>): Promise<MaterializeResult>;
  grep(caller: ExtractorCaller, input: Input<typeof artifactGrep>): Promise<GrepResult>;
  extract(caller: ExtractorCaller, input: Input<typeof artifactExtract>, extractor: Extractor): Promise<DerivedExtract>;
}

/** Returned lines are clipped: a minified file's one line must not fill a result. */
const GREP_LINE_CHARS = 2_000;
const READ_TRIES = 5;

function noArtifact(artifactId: string): NotFoundError {
  return new NotFoundError(`no artifact ${artifactId}: record the file with artifact.read first and use the artifactId it returns`, { artifactId });
}

/** Whether `part` (a read of `range`, or of the file's start when capped) agrees with `whole`. */
function agrees(whole: Buffer, part: Buffer, range: ArtifactRange | null): boolean {
  return range ? rangeMatches(whole, part, range) : whole.subarray(0, part.length).equals(part);
}

/**
 * Code points of `text`, given its UTF-8 bytes: its UTF-16 length less one
 * per surrogate pair, which UTF-8 writes as the only 4-byte sequences (a
 * lone surrogate is one code point either way). Equal lengths mean ASCII.
 * Iterating an 8 MB string by code point took about 90 ms of the event loop.
 */
export function countChars(text: string, utf8: Buffer): number {
  if (utf8.length === text.length) return text.length;
  let pairs = 0;
  for (let at = utf8.indexOf(0xf0); at !== -1; at = utf8.indexOf(0xf0, at + 1)) pairs += 1;
  for (let lead = 0xf1; lead <= 0xf4; lead++) for (let at = utf8.indexOf(lead); at !== -1; at = utf8.indexOf(lead, at + 1)) pairs += 1;
  return text.length - pairs;
}

/**
 * A body's bytes, hash and lines, a slice at a time: an 8 MB body is tens of
 * milliseconds of this loop, and every other tenant's job waits for the
 * stretch it is in (docs/architecture.md, "One tenant's backlog").
 */
function* digestBody(content: string): Generator<void, { body: Buffer; hash: string; lines: BodyLines }, void> {
  const body = Buffer.from(content, 'utf8');
  if (body.length > DIGEST_SLICE_BYTES) yield;
  const hash = yield* sha256HexInSlices(body, DIGEST_SLICE_BYTES);
  const lines = yield* indexLinesInSlices(body);
  return { body, hash, lines };
}

export function createExtractorCommands(deps: ExtractorCommandDeps): ExtractorCommands {
  const { pool, metrics, bodies } = deps;
  const now = () => (deps.now ? deps.now() : new Date());

  async function loadBody(tenant: string, hash: string): Promise<CachedBody | undefined> {
    return (await bodies.get(pool, tenant, [hash])).get(hash);
  }

  async function requireArtifact(tenant: string, artifactId: string): Promise<ArtifactRow> {
    const row = await getArtifact(pool, tenant, artifactId);
    if (!row) throw noArtifact(artifactId);
    return row;
  }

  async function recordGone(caller: ExtractorCaller, key: PathKey) {
    return withTransaction(pool, async (tx) => {
      const head = await lockPathHead(tx, key);
      if (!head) throw new NotFoundError(`no read of ${key.path} is recorded in workspace ${key.workspace}: nothing to mark gone`, { workspace: key.workspace, path: key.path });
      const unavailable = await retireArtifacts(tx, key, 'unavailable');
      await writePathHead(tx, key, { ...head, gone: true }, true);
      metrics.reads.inc({ fidelity: 'none', outcome: 'gone' });
      return { workspace: key.workspace, path: key.path, gone: true as const, unavailable };
    });
  }

  async function read(caller: ExtractorCaller, input: Input<typeof artifactRead>): Promise<OperationOutput<typeof artifactRead>> {
    const key: PathKey = { tenant: caller.tenant, workspace: input.workspace, path: normalizeArtifactPath(input.path) };
    if (input.gone) return recordGone(caller, key);
    const { body, hash, lines } = await runInSlices(digestBody(input.content ?? ''));
    const range = input.range ?? null;
    const fidelity = fidelityOf(input);
    if (range?.unit === 'bytes' && range.end - range.start !== body.length && !input.capped) {
      throw new BadInputError(`content is ${body.length} bytes but range bytes ${range.start}-${range.end} spans ${range.end - range.start}: send exactly the bytes of the range`, [{ path: 'range', message: 'does not match the content' }]);
    }
    if (range?.unit === 'lines' && lines.starts.length > range.end - range.start + 1) {
      throw new BadInputError(`content has ${lines.starts.length} lines but range lines ${range.start}-${range.end} holds ${range.end - range.start + 1}: send exactly the lines of the range`, [{ path: 'range', message: 'does not match the content' }]);
    }
    if (fidelity === 'full' && input.fileSha256 && input.fileSha256 !== hash) {
      throw new BadInputError('fileSha256 differs from the sha256 of content, which is the whole file: leave fileSha256 out or send the file as read', [{ path: 'fileSha256', message: 'does not match the content' }]);
    }
    const sourceHash = input.fileSha256 ?? (fidelity === 'full' ? hash : null);
    const chars = countChars(input.content ?? '', body);

    for (let tries = 1; ; tries++) {
      try {
        const outcome = await withTransaction(pool, async (tx) => {
          const head = await lockPathHead(tx, key);
          const current = head ? await availableArtifacts(tx, key) : [];
          const stored = await bodies.get(tx, caller.tenant, current.map((a) => a.hash));
          const consistent = (): boolean | undefined => {
            if (!head) return undefined;
            if (sourceHash !== null && head.sourceHash === null) {
              if (fidelity !== 'full') return undefined;
              return current.every((a) => {
                const b = stored.get(a.hash);
                return b !== undefined && agrees(body, b.body, a.range);
              });
            }
            if (sourceHash === null) {
              const full = current.find((a) => a.fidelity === 'full');
              const whole = full && stored.get(full.hash);
              return whole ? agrees(whole.body, body, range) : undefined;
            }
            return undefined;
          };
          const plan = planRead(head, { hash, range, fidelity, sourceHash }, consistent);
          await putBody(tx, caller.tenant, hash, body, { chars, lines: lines.starts.length });
          let superseded = 0;
          if (plan.reread) superseded = await retireArtifacts(tx, key, 'superseded', plan.revision);
          if (!head || plan.revision !== head.revision || plan.sourceHash !== head.sourceHash || head.gone) {
            await writePathHead(tx, key, { revision: plan.revision, sourceHash: plan.sourceHash, gone: false }, head !== undefined);
          }
          const artifactId = artifactIdFor({ ...key, revision: plan.revision, hash, range, fidelity });
          const { row, created } = await insertArtifact(tx, caller.tenant, {
            artifact_id: artifactId,
            workspace: key.workspace,
            path: key.path,
            revision: plan.revision,
            hash,
            range,
            fidelity,
            byte_size: body.length,
            char_count: chars,
            line_count: lines.starts.length,
          });
          if (plan.reread) {
            await recordReread(tx, key, {
              fromRevision: plan.reread.previousRevision,
              toRevision: plan.revision,
              fromHash: plan.reread.previousHash,
              toHash: plan.sourceHash,
              reason: plan.reread.reason,
              artifactId,
              superseded,
            });
          }
          return { row, created, reread: plan.reread ? { ...plan.reread, superseded, justified: true as const } : null };
        });
        bodies.put(caller.tenant, hash, body);
        metrics.reads.inc({ fidelity, outcome: outcome.reread ? 'reread' : outcome.created ? 'new' : 'repeat' });
        if (outcome.reread) metrics.rereads.inc({ reason: outcome.reread.reason });
        return { ...toArtifact(outcome.row), alreadyRecorded: !outcome.created, reread: outcome.reread };
      } catch (err) {
        if (!(err instanceof PathRaced) || tries >= READ_TRIES) throw err;
      }
    }
  }

  async function materialize(caller: ExtractorCaller, input: Input<typeof artifactMaterialize>): Promise<MaterializeResult> {
    const row = await requireArtifact(caller.tenant, input.artifactId);
    const artifact = toArtifact(row);
    const body = row.availability === 'unavailable' ? undefined : await loadBody(caller.tenant, row.hash);
    const plan = planMaterialize({
      availability: row.availability,
      hash: row.hash,
      expectedHash: input.expectedHash,
      bodyStored: body !== undefined,
      bodyChars: row.char_count,
      budgetChars: input.budgetChars,
      hasRequirements: (input.requirements?.length ?? 0) > 0,
      // JSON escaping can double a body's size; past the limit it cannot travel in one answer.
      overResultLimit: body !== undefined && row.byte_size * 2 > ARTIFACT_LIMITS.materializeMaxBodyBytes && Buffer.byteLength(JSON.stringify(body.body.toString('utf8'))) > ARTIFACT_LIMITS.materializeMaxBodyBytes,
    });
    const edgeId = jobScopedId('edge', caller.tenant, caller.jobId);
    const edge = (deliveredChars: number, extractId: string | null = null) =>
      recordEdge(pool, caller.tenant, {
        edgeId,
        sourceArtifactId: row.artifact_id,
        decision: plan.decision,
        reason: plan.reason,
        bodyChars: row.char_count,
        budgetChars: input.budgetChars ?? null,
        deliveredChars,
        extractId,
      }).then((created) => {
        if (created) {
          metrics.materializations.inc({ decision: plan.decision, reason: plan.reason });
          metrics.materializedChars.observe({ decision: plan.decision }, deliveredChars);
        }
      });

    if (plan.decision === 'reread_required') {
      const current = await currentArtifact(pool, { tenant: caller.tenant, workspace: row.workspace, path: row.path });
      const ref = current && current.artifact_id !== row.artifact_id ? { artifactId: current.artifact_id, hash: current.hash, revision: current.revision } : plan.rereadReason === 'hash_mismatch' ? { artifactId: row.artifact_id, hash: row.hash, revision: row.revision } : null;
      const instruction =
        plan.rereadReason === 'superseded'
          ? `${row.path} changed after this read (revision ${row.revision}${ref ? `, now revision ${ref.revision}` : ''}): read the file again with artifact.read before editing; do not edit from this body`
          : plan.rereadReason === 'hash_mismatch'
            ? `this artifact holds ${row.hash.slice(0, 12)}…, not the ${input.expectedHash.slice(0, 12)}… you expected: read ${row.path} again with artifact.read and edit from that body`
            : `the body of this read of ${row.path} is no longer available: read the file again with artifact.read`;
      await edge(0);
      return { decision: 'reread_required', edgeId, artifact, reason: plan.rereadReason!, current: ref, instruction };
    }
    if (plan.decision === 'full_body') {
      await edge(row.char_count);
      return { decision: 'full_body', edgeId, artifact, body: body!.body.toString('utf8'), bodyChars: row.char_count };
    }
    if (plan.decision === 'over_budget') {
      await edge(0);
      return {
        decision: 'over_budget',
        edgeId,
        artifact,
        bodyChars: row.char_count,
        budgetChars: input.budgetChars ?? null,
        instruction:
          plan.reason === 'over_result_limit'
            ? `the body is ${row.byte_size} bytes, more than one answer carries (${ARTIFACT_LIMITS.materializeMaxBodyBytes}): pass requirements (the facts you need) for a branch extract, or record and materialize line ranges of the file`
            : `the body is ${row.char_count} characters, over your budget of ${input.budgetChars}: pass requirements (the facts you need) for a branch extract, or record and materialize a line range of the file`,
      };
    }
    const extract = await extractOnce(caller, row, body!, input.requirements as RequirementInput[], deps.deterministic, 'edge');
    await edge(extract.evidenceChars, extract.extractId);
    return { decision: 'branch_extract', edgeId, artifact, bodyChars: row.char_count, budgetChars: input.budgetChars ?? null, extract };
  }

  async function extractOnce(caller: ExtractorCaller, row: ArtifactRow, body: CachedBody, requirements: readonly RequirementInput[], extractor: Extractor, salt: string): Promise<DerivedExtract> {
    const extractId = jobScopedId('ext', caller.tenant, caller.jobId, salt);
    const prior = await findExtract(pool, caller.tenant, extractId);
    if (prior !== undefined) return prior as DerivedExtract;
    const derived = await deriveExtract({ extractId, source: row, body, requirements, extractor, now: now() });
    const recorded = (await recordExtract(pool, caller.tenant, {
      extractId,
      sourceArtifactId: row.artifact_id,
      sourceHash: row.hash,
      kind: derived.extractor.kind,
      complete: derived.coverage.complete,
      result: derived,
    })) as DerivedExtract;
    const kind = derived.extractor.kind;
    metrics.extracts.inc({ kind, coverage: derived.coverage.complete ? 'complete' : 'incomplete' });
    for (const r of derived.requirements) metrics.requirements.inc({ kind, status: r.status });
    metrics.evidenceChars.observe({ kind }, derived.evidenceChars);
    return recorded;
  }

  async function extract(caller: ExtractorCaller, input: Input<typeof artifactExtract>, extractor: Extractor): Promise<DerivedExtract> {
    const row = await requireArtifact(caller.tenant, input.artifactId);
    if (input.expectedHash !== undefined && (row.hash !== input.expectedHash || row.availability !== 'available')) {
      throw new ConflictError(
        row.availability === 'available'
          ? `artifact ${row.artifact_id} holds ${row.hash.slice(0, 12)}…, not the ${input.expectedHash.slice(0, 12)}… you expected: read the file again`
          : `artifact ${row.artifact_id} is ${row.availability}: read ${row.path} again and extract from the new artifact`,
        { artifactId: row.artifact_id, hash: row.hash, availability: row.availability },
      );
    }
    const body = row.availability === 'unavailable' ? undefined : await loadBody(caller.tenant, row.hash);
    if (!body) throw new ConflictError(`the body of artifact ${row.artifact_id} is unavailable: read ${row.path} again`, { artifactId: row.artifact_id, availability: 'unavailable' });
    return extractOnce(caller, row, body, input.requirements, extractor, '');
  }

  async function grep(caller: ExtractorCaller, input: Input<typeof artifactGrep>): Promise<GrepResult> {
    let pattern;
    try {
      pattern = compileGrepPattern(input.pattern, input.ignoreCase);
    } catch (err) {
      if (err instanceof GrepPatternError) throw new BadInputError(err.message, [{ path: 'pattern', message: err.message }]);
      throw err;
    }
    const rows = await grepTargets(pool, caller.tenant, input.workspace, input.pathPrefix);
    // Load only what the scan cap lets the scan reach.
    const reachable: typeof rows = [];
    let planned = 0;
    for (const r of rows) {
      if (reachable.length > 0 && planned + r.byte_size > deps.grepScanCapBytes) break;
      reachable.push(r);
      planned += r.byte_size;
    }
    const loaded = await bodies.get(pool, caller.tenant, reachable.map((r) => r.hash));
    const targets: ScanTarget[] = [];
    for (const r of rows) {
      const b = loaded.get(r.hash);
      // Unreachable files keep their place so the scan reports the scan cap for them.
      targets.push({ artifactId: r.artifact_id, path: r.path, body: b?.body, lines: b ? b.lines : () => indexLines(Buffer.alloc(0)) });
    }
    // In slices: a scan of many megabytes must not hold the event loop other tenants' jobs share.
    const out = await runInSlices(scanTargets(targets, pattern, { capBytes: input.capBytes, scanCapBytes: deps.grepScanCapBytes, lineChars: GREP_LINE_CHARS }));
    // A file known only from partial or capped reads was searched in part: its absence of matches proves nothing.
    const partialReads = rows.filter((r) => r.fidelity !== 'full');
    const truncatedBy: GrepResult['provenance']['truncatedBy'] = [...out.truncatedBy, ...(partialReads.length > 0 ? (['partial_reads'] as const) : [])];
    const capped = out.truncatedBy.length > 0;
    const truncated = truncatedBy.length > 0;
    metrics.greps.inc({ status: truncated ? 'partial' : 'complete' });
    metrics.grepScannedBytes.inc(out.scannedBytes);
    return {
      status: truncated ? 'partial' : 'complete',
      found: out.matchesCounted > 0,
      matches: out.matches,
      provenance: {
        capBytes: input.capBytes,
        returnedBytes: out.returnedBytes,
        scanCapBytes: deps.grepScanCapBytes,
        scannedBytes: out.scannedBytes,
        filesTotal: rows.length,
        filesScanned: out.filesScanned,
        matchesReturned: out.matches.length,
        matchesCounted: out.matchesCounted,
        truncated,
        truncatedBy,
        partialReads: partialReads.slice(0, ARTIFACT_LIMITS.grepPartialReadsListed).map((r) => ({ artifactId: r.artifact_id, path: r.path, fidelity: r.fidelity as 'partial' | 'capped', range: r.range })),
        partialReadsTotal: partialReads.length,
      },
      narrowing: truncated
        ? adviseNarrowing({
            pattern: input.pattern,
            ignoreCase: input.ignoreCase,
            pathPrefix: input.pathPrefix,
            perPath: out.perPath,
            counts: { returned: out.matches.length, counted: out.matchesCounted, filesScanned: out.filesScanned, filesTotal: rows.length, capBytes: input.capBytes },
            capped,
            partialReads: { total: partialReads.length, paths: [...new Set(partialReads.map((r) => r.path))] },
          })
        : null,
    };
  }

  return { read, materialize, grep, extract };
}

/** The handlers of the CPU queue (`extractor`): read, materialize, grep, deterministic extract. */
export function cpuHandlers(commands: ExtractorCommands, deterministic: Extractor): OperationHandler[] {
  const caller = (ctx: HandlerContext) => ({ tenant: ctx.tenant, jobId: ctx.jobId });
  return [
    handle(artifactRead, (input, ctx) => commands.read(caller(ctx), input)),
    handle(artifactMaterialize, (input, ctx) => commands.materialize(caller(ctx), input)),
    handle(artifactGrep, (input, ctx) => commands.grep(caller(ctx), input)),
    handle(artifactExtractDeterministic, (input, ctx) => commands.extract(caller(ctx), input, deterministic)),
  ] as OperationHandler[];
}

/** The handler of the GPU queue (`extractor-gpu`): model extraction, served only by gated workers. */
export function gpuHandlers(commands: ExtractorCommands, model: Extractor): OperationHandler[] {
  return [handle(artifactExtract, (input, ctx) => commands.extract({ tenant: ctx.tenant, jobId: ctx.jobId }, input, model))] as OperationHandler[];
}
