/**
 * The live branch-extract harness (spec WO-05, "Live-harness safety gate").
 *
 * Creates twenty oversized source files, each with an exact baudRate and
 * channel inside, records each through the extractor's queue (artifact.read)
 * and extracts both requirements from each in isolation (one artifact.extract
 * job per file on the GPU queue). Fails if a requirement is unresolved,
 * unanchored, wrong or omitted. Requires HARNESS_APPROVED_GPU_UUID and runs
 * its own GPU gate before the first generation; a gate failure stops it
 * before anything is generated. HARNESS_REPORT_FILE gets a checkpoint per
 * artifact (no source text) and a terminal report; the run is accepted only
 * with the terminal report.
 *
 * It starts an extractor in this process on its own BullMQ prefix and
 * Postgres schema (removed afterwards), so it never touches a deployment's
 * queues. See harness/README.md.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue, QueueEvents, type Job } from 'bullmq';
import pg from 'pg';
import { QUEUES, decodeJobError, type Artifact, type DerivedExtract, type JobEnvelope, type QueueName } from '@vouch/contracts';
import { DEFAULT_GPU_CLASS_MINIMUM, extractorEnvSchema, parseAllowlist, runGpuGate, startExtractor, type RunningExtractor } from '@vouch/extractor';
import { QUEUE_STREAMS, createLogger, parseConfig } from '@vouch/platform';
import { harnessFiles, type HarnessFile } from './harness-files.js';
import { ReportFile, type Checkpoint, type CheckpointRequirement } from './harness-report.js';

export interface HarnessOutcome {
  accepted: boolean;
  reportFile: string;
  largestPromptChars: number;
  maxParentEvidenceChars: number;
  passed: number;
  problems: string[];
}

const REQUIREMENTS = [
  { id: 'baudRate', description: 'the exact UART baudRate the bridge is configured with' },
  { id: 'channel', description: 'the exact radio channel the bridge uses' },
];

class QueueClient {
  readonly queue: Queue<JobEnvelope>;
  readonly events: QueueEvents;
  constructor(name: QueueName, redisUrl: string, prefix: string) {
    this.queue = new Queue<JobEnvelope>(name, { connection: { url: redisUrl }, prefix, streams: QUEUE_STREAMS });
    this.events = new QueueEvents(name, { connection: { url: redisUrl }, prefix });
  }
  async run<T>(operation: string, input: unknown, timeoutMs: number): Promise<T> {
    await this.events.waitUntilReady();
    const job: Job<JobEnvelope> = await this.queue.add(operation, { tenant: 'harness', input }, { attempts: 2, backoff: { type: 'fixed', delay: 1_000 } });
    try {
      return (await job.waitUntilFinished(this.events, timeoutMs)) as T;
    } catch {
      const fresh = await this.queue.getJob(job.id!);
      if (fresh && (await fresh.isFailed())) {
        const e = decodeJobError(fresh.failedReason);
        throw new Error(`${operation} failed: ${e.code}: ${e.message}`);
      }
      throw new Error(`${operation} did not finish within ${timeoutMs} ms (${fresh ? await fresh.getState() : 'gone'})`);
    }
  }
  async close(): Promise<void> {
    await this.events.close();
    await this.queue.close();
  }
}

/** Checks one extract against the planted values; no source text leaves this function. */
export function judge(file: HarnessFile, extract: DerivedExtract): { requirements: CheckpointRequirement[]; problems: string[] } {
  const problems: string[] = [];
  const requirements = REQUIREMENTS.map(({ id }): CheckpointRequirement => {
    const r = extract.requirements.find((x) => x.id === id);
    if (!r) {
      problems.push(`${id}: omitted from the derived evidence`);
      return { id, status: 'omitted', anchorLines: null, exact: false, code: null };
    }
    if (r.status === 'unresolved') {
      problems.push(`${id}: unresolved (${r.code})`);
      return { id, status: 'unresolved', anchorLines: null, exact: false, code: r.code };
    }
    const exact = r.value === file.expected[id as 'baudRate' | 'channel'];
    if (!exact) problems.push(`${id}: wrong value`);
    if (!r.anchor.quote.includes(r.value) || r.anchor.startLine < 1) problems.push(`${id}: unanchored`);
    if (!extract.evidence.includes(`${id} = ${r.value}`)) problems.push(`${id}: missing from the evidence handed to the parent`);
    return { id, status: 'satisfied', anchorLines: [r.anchor.startLine, r.anchor.endLine], exact, code: null };
  });
  if (!extract.coverage.complete && problems.length === 0) problems.push('coverage is not complete');
  if (extract.coverage.complete && extract.requirements.some((r) => r.status !== 'satisfied')) problems.push('coverage says complete with an open requirement');
  return { requirements, problems };
}

export async function runLiveHarness(env: Record<string, string | undefined> = process.env, log: (line: string) => void = console.log): Promise<HarnessOutcome> {
  const startedAt = new Date().toISOString();
  const reportPath = resolve(env.HARNESS_REPORT_FILE ?? `.run/harness/live-branch-extract-${Date.now()}.jsonl`);
  const report = new ReportFile(reportPath);
  await report.open();
  const model = env.HARNESS_MODEL ?? env.EXTRACTOR_MODEL ?? 'qwen2.5:7b-instruct';
  const problems: string[] = [];
  const finish = async (outcome: Omit<HarnessOutcome, 'reportFile'>, gate: { ok: boolean; stage?: string; reason?: string; gpuUuid?: string }, artifacts: number) => {
    await report.write({
      type: 'terminal',
      accepted: outcome.accepted,
      artifacts,
      passed: outcome.passed,
      failed: artifacts - outcome.passed,
      largestPromptChars: outcome.largestPromptChars,
      maxParentEvidenceChars: outcome.maxParentEvidenceChars,
      gate,
      model,
      problems: outcome.problems,
      startedAt,
      finishedAt: new Date().toISOString(),
    });
    log(`harness: ${outcome.accepted ? 'ACCEPTED' : 'REJECTED'} ${outcome.passed}/${artifacts}; largest isolated prompt ${outcome.largestPromptChars} chars; most parent evidence ${outcome.maxParentEvidenceChars} chars; report ${reportPath}`);
    return { ...outcome, reportFile: reportPath };
  };

  const approved = env.HARNESS_APPROVED_GPU_UUID?.trim();
  if (!approved) {
    return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: ['HARNESS_APPROVED_GPU_UUID is not set: name the operator-approved GPU (nvidia-smi -L)'] }, { ok: false, stage: 'config', reason: 'HARNESS_APPROVED_GPU_UUID is not set' }, 0);
  }
  if (!env.OLLAMA_HOST) {
    return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: ['OLLAMA_HOST is not set'] }, { ok: false, stage: 'config', reason: 'OLLAMA_HOST is not set' }, 0);
  }

  // The harness's own gate, before its first generation: independent of the service's.
  const gate = await runGpuGate({
    approved: parseAllowlist(approved),
    cudaVisibleDevices: env.OLLAMA_CUDA_VISIBLE_DEVICES,
    minimum: { computeCapability: Number(env.EXTRACTOR_GPU_MIN_COMPUTE ?? DEFAULT_GPU_CLASS_MINIMUM.computeCapability), memoryGiB: Number(env.EXTRACTOR_GPU_MIN_MEMORY_GIB ?? DEFAULT_GPU_CLASS_MINIMUM.memoryGiB) },
    nvidiaSmi: env.NVIDIA_SMI ?? 'nvidia-smi',
    nvidiaSmiTimeoutMs: Number(env.NVIDIA_SMI_TIMEOUT_MS ?? 10_000),
    ollama: { host: env.OLLAMA_HOST, model, timeoutMs: Number(env.EXTRACTOR_LLM_TIMEOUT_MS ?? 300_000) },
  });
  log(`harness: GPU gate ${gate.ok ? `passed on ${gate.gpuUuid} (${gate.devices.map((d) => d.name).join(', ')})` : `FAILED at ${gate.stage}: ${gate.reason}`}`);
  const gateSummary = gate.ok ? { ok: true, gpuUuid: gate.gpuUuid } : { ok: false, stage: gate.stage, reason: gate.reason };
  if (!gate.ok) return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: [`GPU gate failed at ${gate.stage}: ${gate.reason}`] }, gateSummary, 0);

  const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const databaseUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const run = randomBytes(4).toString('hex');
  const prefix = `harness-${run}`;
  const schema = `harness_${run}`;
  let largestPrompt = 0;
  let extractor: RunningExtractor | undefined;
  const cpu = new QueueClient(QUEUES.extractor, redisUrl, prefix);
  const gpu = new QueueClient(QUEUES.extractorGpu, redisUrl, prefix);
  const files = harnessFiles(Number(env.HARNESS_FILES ?? 20));
  let passed = 0;
  let maxEvidence = 0;
  try {
    extractor = await startExtractor(
      parseConfig(extractorEnvSchema, {
        ...env,
        REDIS_URL: redisUrl,
        DATABASE_URL: databaseUrl,
        BULLMQ_PREFIX: prefix,
        DB_SCHEMA: schema,
        HTTP_PORT: env.HARNESS_HTTP_PORT ?? '0',
        LOG_LEVEL: env.HARNESS_LOG_LEVEL ?? 'warn',
        EXTRACTOR_LLM_ENABLED: 'true',
        EXTRACTOR_APPROVED_GPU_UUIDS: approved,
        EXTRACTOR_MODEL: model,
        EXTRACTOR_GATE_RETRY_MS: '3600000',
      }),
      { logger: createLogger({ service: 'extractor', level: (env.HARNESS_LOG_LEVEL as 'warn' | undefined) ?? 'warn' }), onPrompt: (chars) => (largestPrompt = Math.max(largestPrompt, chars)) },
    );
    const serviceGate = await extractor.gateSettled();
    if (serviceGate.state !== 'passed') throw new Error(`the extractor's own GPU gate did not pass: ${serviceGate.reason ?? serviceGate.state}`);

    for (const [index, file] of files.entries()) {
      const read = await cpu.run<Artifact>('artifact.read', { workspace: 'harness', path: file.path, content: file.text }, 60_000);
      const extract = await gpu.run<DerivedExtract>('artifact.extract', { artifactId: read.artifactId, expectedHash: read.hash, requirements: REQUIREMENTS }, Number(env.HARNESS_EXTRACT_TIMEOUT_MS ?? 600_000));
      const verdict = judge(file, extract);
      if (extract.source.hash !== read.hash) verdict.problems.push('the extract is not linked to the source hash');
      if (extract.extractor.kind !== 'llm' || extract.extractor.gpuUuid?.toLowerCase() !== approved.toLowerCase()) verdict.problems.push('the extract did not come from the model on the approved GPU');
      const ok = verdict.problems.length === 0;
      if (ok) passed += 1;
      else problems.push(...verdict.problems.map((p) => `${file.path}: ${p}`));
      maxEvidence = Math.max(maxEvidence, extract.evidenceChars);
      largestPrompt = Math.max(largestPrompt, extract.windows.largestPromptChars);
      const checkpoint: Checkpoint = {
        type: 'checkpoint',
        index,
        artifactId: read.artifactId,
        sourceHash: read.hash,
        sourceBytes: read.byteSize,
        sourceLines: read.lineCount,
        extractId: extract.extractId,
        requirements: verdict.requirements,
        coverage: extract.coverage,
        promptWindows: extract.windows.count,
        largestPromptChars: extract.windows.largestPromptChars,
        parentEvidenceChars: extract.evidenceChars,
        extractor: { kind: extract.extractor.kind, model: extract.extractor.model?.name ?? null, digest: extract.extractor.model?.digest ?? null, gpuUuid: extract.extractor.gpuUuid, node: extract.extractor.node },
        passed: ok,
        problems: verdict.problems,
        at: new Date().toISOString(),
      };
      await report.write(checkpoint);
      log(`harness: ${index + 1}/${files.length} ${ok ? 'ok' : 'FAIL'} ${read.byteSize} bytes, ${extract.windows.count} window(s), largest prompt ${extract.windows.largestPromptChars}, evidence ${extract.evidenceChars}${ok ? '' : `: ${verdict.problems.join('; ')}`}`);
    }
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  } finally {
    await cpu.close().catch(() => {});
    await gpu.close().catch(() => {});
    await extractor?.stop().catch(() => {});
    if (env.HARNESS_KEEP !== '1') await cleanUp(redisUrl, databaseUrl, prefix, schema).catch((err: unknown) => problems.push(`cleanup: ${String(err)}`));
  }
  const accepted = problems.length === 0 && passed === files.length;
  return finish({ accepted, largestPromptChars: largestPrompt, maxParentEvidenceChars: maxEvidence, passed, problems }, gateSummary, files.length);
}

async function cleanUp(redisUrl: string, databaseUrl: string, prefix: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
  for (const name of [QUEUES.extractor, QUEUES.extractorGpu]) {
    const q = new Queue(name, { connection: { url: redisUrl }, prefix });
    await q.obliterate({ force: true }).catch(() => {});
    await q.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outcome = await runLiveHarness();
  process.exit(outcome.accepted ? 0 : 1);
}
