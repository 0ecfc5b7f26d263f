/**
 * The live branch-extract harness (spec WO-05, "Live-harness safety gate").
 *
 * Creates twenty oversized source files, each with an exact baudRate and
 * channel inside, records each through the extractor's queue (artifact.read)
 * and extracts both requirements from each in isolation (one artifact.extract
 * job per file on the GPU queue). Fails if a requirement is unresolved,
 * unanchored, wrong or omitted, or if an extract's generations ran on a GPU
 * other than the approved one (as the service's gate observed it). Requires
 * HARNESS_APPROVED_GPU_UUID and runs its own GPU gate before the first
 * generation; a gate failure stops it before anything is generated.
 * HARNESS_REPORT_FILE gets a checkpoint per artifact (no source text) and a
 * terminal report; the run is accepted only with the terminal report, and
 * only for exactly twenty files (HARNESS_FILES set otherwise is a smoke run).
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
import { DEFAULT_GPU_CLASS_MINIMUM, DEFAULT_KEEP_ALIVE, extractorEnvSchema, parseAllowlist, runGpuGate, startExtractor, type RunningExtractor } from '@vouch/extractor';
import { QUEUE_STREAMS, createLogger, parseConfig } from '@vouch/platform';
import { harnessFiles } from './harness-files.js';
import { ACCEPTANCE_FILES, HARNESS_REQUIREMENTS, judge, parseFileCount } from './harness-judge.js';
import { ReportFile, type Checkpoint } from './harness-report.js';

export interface HarnessOutcome {
  accepted: boolean;
  reportFile: string;
  largestPromptChars: number;
  maxParentEvidenceChars: number;
  passed: number;
  problems: string[];
}

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

/** The job's result, or the extractor's gate failure if its gate fails first (checked every 100 ms). */
async function untilGateFails<T>(extractor: RunningExtractor, job: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const gate = extractor.gate();
      if (gate.state === 'failed') reject(new Error(`the extractor's GPU gate failed during the run: ${gate.reason ?? gate.stage ?? 'failed'}`));
    }, 100);
  });
  try {
    return await Promise.race([job, failed]);
  } finally {
    clearInterval(timer);
  }
}

export async function runLiveHarness(env: Record<string, string | undefined> = process.env, log: (line: string) => void = console.log): Promise<HarnessOutcome> {
  const startedAt = new Date().toISOString();
  const reportPath = resolve(env.HARNESS_REPORT_FILE ?? `.run/harness/live-branch-extract-${Date.now()}.jsonl`);
  const report = new ReportFile(reportPath);
  await report.open();
  const model = env.HARNESS_MODEL ?? env.EXTRACTOR_MODEL ?? 'qwen2.5:7b-instruct';
  const problems: string[] = [];
  let checkpoints = 0;
  const finish = async (outcome: Omit<HarnessOutcome, 'reportFile'>, gate: { ok: boolean; stage?: string; reason?: string; gpuUuid?: string }, artifacts: number) => {
    await report.write({
      type: 'terminal',
      accepted: outcome.accepted,
      requiredArtifacts: ACCEPTANCE_FILES,
      artifacts,
      checkpoints,
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

  const fileCount = parseFileCount(env.HARNESS_FILES);
  if (!fileCount.ok) {
    return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: [fileCount.problem] }, { ok: false, stage: 'config', reason: 'HARNESS_FILES is not a number of files' }, 0);
  }
  const approved = env.HARNESS_APPROVED_GPU_UUID?.trim();
  if (!approved) {
    return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: ['HARNESS_APPROVED_GPU_UUID is not set: name the operator-approved GPU (nvidia-smi -L)'] }, { ok: false, stage: 'config', reason: 'HARNESS_APPROVED_GPU_UUID is not set' }, 0);
  }
  if (!env.OLLAMA_HOST) {
    return finish({ accepted: false, largestPromptChars: 0, maxParentEvidenceChars: 0, passed: 0, problems: ['OLLAMA_HOST is not set'] }, { ok: false, stage: 'config', reason: 'OLLAMA_HOST is not set' }, 0);
  }

  // The harness's own gate, before its first generation: independent of the service's.
  const approvedList = parseAllowlist(approved);
  const gate = await runGpuGate({
    approved: approvedList,
    cudaVisibleDevices: env.OLLAMA_CUDA_VISIBLE_DEVICES,
    minimum: { computeCapability: Number(env.EXTRACTOR_GPU_MIN_COMPUTE ?? DEFAULT_GPU_CLASS_MINIMUM.computeCapability), memoryGiB: Number(env.EXTRACTOR_GPU_MIN_MEMORY_GIB ?? DEFAULT_GPU_CLASS_MINIMUM.memoryGiB) },
    nvidiaSmi: env.NVIDIA_SMI ?? 'nvidia-smi',
    nvidiaSmiTimeoutMs: Number(env.NVIDIA_SMI_TIMEOUT_MS ?? 10_000),
    ...(env.EXTRACTOR_MIN_TOKENS_PER_SECOND ? { minTokensPerSecond: Number(env.EXTRACTOR_MIN_TOKENS_PER_SECOND) } : {}),
    ollama: { host: env.OLLAMA_HOST, model, timeoutMs: Number(env.EXTRACTOR_LLM_TIMEOUT_MS ?? 300_000), keepAlive: env.EXTRACTOR_KEEP_ALIVE ?? DEFAULT_KEEP_ALIVE },
  });
  log(`harness: GPU gate ${gate.ok ? `passed: Ollama's runner on ${gate.gpuUuids.join(', ')} (${gate.devices.map((d) => d.name).join(', ')})` : `FAILED at ${gate.stage}: ${gate.reason}`}`);
  const gateSummary = gate.ok ? { ok: true, ...(gate.gpuUuid ? { gpuUuid: gate.gpuUuid } : {}) } : { ok: false, stage: gate.stage, reason: gate.reason };
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
  const files = harnessFiles(fileCount.count);
  if (files.length !== ACCEPTANCE_FILES) problems.push(`HARNESS_FILES=${files.length}: acceptance needs exactly ${ACCEPTANCE_FILES} files; this is a smoke run and is not accepted`);
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
      // A job the service's generation gate stops waits for another GPU worker: the run stops at once instead, with the gate's reason.
      const extract = await untilGateFails(extractor, gpu.run<DerivedExtract>('artifact.extract', { artifactId: read.artifactId, expectedHash: read.hash, requirements: HARNESS_REQUIREMENTS }, Number(env.HARNESS_EXTRACT_TIMEOUT_MS ?? 600_000)));
      const verdict = judge({ file, read, extract, approved: approvedList });
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
        gpuUuidObserved: verdict.gpuUuidObserved,
        passed: ok,
        problems: verdict.problems,
        at: new Date().toISOString(),
      };
      await report.write(checkpoint);
      checkpoints += 1;
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
  // Accepted only for the twenty files acceptance names, each judged and passed.
  const accepted = problems.length === 0 && files.length === ACCEPTANCE_FILES && checkpoints === ACCEPTANCE_FILES && passed === ACCEPTANCE_FILES;
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
