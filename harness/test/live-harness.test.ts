// The live branch-extract harness in CI: the Ollama test server stands in for
// the model and the fake nvidia-smi prints the real H200 capture, with
// Ollama's runner listed on the H200. On a GPU node the same runLiveHarness
// runs unchanged against a real Ollama and the real nvidia-smi
// (harness/README.md).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H200_UUID, OTHER_GPU_UUID, TEST_DATABASE_URL, TEST_REDIS_URL, installFakeNvidiaSmi, ollamaComputeApp, scriptedExtractionModel, startOllamaTestServer, type FakeNvidiaSmi, type OllamaTestServer } from '@vouch/testing';
import { harnessFiles } from '../src/harness-files.js';
import { runLiveHarness } from '../src/live-branch-extract.js';

const MODEL = 'extract:7b';

describe('live branch-extract harness (CI: Ollama test server + fake nvidia-smi)', () => {
  let ollama: OllamaTestServer;
  let smi: FakeNvidiaSmi;
  let dir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, size: 6_000_000_000 }], reply: scriptedExtractionModel() });
    smi = await installFakeNvidiaSmi('h200', { computeApps: [ollamaComputeApp(H200_UUID)] });
    dir = await mkdtemp(join(tmpdir(), 'vouch-harness-'));
  });
  afterAll(async () => {
    await ollama?.close();
    await smi?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const env = (over: Record<string, string | undefined>) => ({
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    OLLAMA_HOST: ollama.url,
    HARNESS_MODEL: MODEL,
    NVIDIA_SMI: smi.path,
    OLLAMA_CUDA_VISIBLE_DEVICES: H200_UUID,
    HARNESS_APPROVED_GPU_UUID: H200_UUID,
    HARNESS_LOG_LEVEL: 'silent',
    ...over,
  });

  it('extracts both exact values from each of twenty oversized files in isolation, within the prompt and evidence targets', async () => {
    const reportFile = join(dir, 'accepted.jsonl');
    const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: reportFile }), (l) => logs.push(l));
    expect(outcome.problems).toEqual([]);
    expect(outcome).toMatchObject({ accepted: true, passed: 20 });
    expect(outcome.largestPromptChars).toBeGreaterThan(0);
    expect(outcome.largestPromptChars).toBeLessThanOrEqual(3_000);
    expect(outcome.maxParentEvidenceChars).toBeGreaterThan(0);
    expect(outcome.maxParentEvidenceChars).toBeLessThanOrEqual(800);
    console.log(`live harness (CI): largest isolated prompt ${outcome.largestPromptChars} chars, most parent evidence ${outcome.maxParentEvidenceChars} chars`);

    const entries = (await readFile(reportFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const checkpoints = entries.filter((e) => e.type === 'checkpoint');
    expect(checkpoints).toHaveLength(20);
    // Each artifact records the GPU the service's gate observed Ollama's runner on for its generations.
    for (const c of checkpoints) expect(c).toMatchObject({ passed: true, gpuUuidObserved: H200_UUID, extractor: { kind: 'llm', gpuUuid: H200_UUID } });
    expect(entries.at(-1)).toMatchObject({ type: 'terminal', accepted: true, requiredArtifacts: 20, artifacts: 20, checkpoints: 20, passed: 20, gate: { ok: true, gpuUuid: H200_UUID } });
    expect(logs.at(-1)).toMatch(/^harness: ACCEPTED 20\/20;/);
    // No source text in the report: not a value, not a quote, not a line of any file.
    const text = await readFile(reportFile, 'utf8');
    for (const f of harnessFiles()) {
      for (const line of f.text.split('\n').filter((l) => l.trim().length > 6)) if (text.includes(line.trim())) throw new Error(`report holds source text: ${line}`);
      expect(text).not.toContain(`baudRate: ${f.expected.baudRate}`);
    }
    expect(text).not.toMatch(/"value"|"quote"/);
    // Every file is oversized next to the largest prompt: isolation, not the whole file.
    for (const f of harnessFiles()) expect(f.text.length).toBeGreaterThan(30 * outcome.largestPromptChars);
  });

  it('stops before any generation when the approved UUID is not the node GPU, and is not accepted', async () => {
    ollama.reset();
    const reportFile = join(dir, 'rejected.jsonl');
    const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: reportFile, HARNESS_APPROVED_GPU_UUID: OTHER_GPU_UUID, OLLAMA_CUDA_VISIBLE_DEVICES: OTHER_GPU_UUID }), (l) => logs.push(l));
    expect(outcome.accepted).toBe(false);
    expect(outcome.problems[0]).toContain('GPU gate failed at visible_devices');
    expect(ollama.calls).toEqual([]);
    const entries = (await readFile(reportFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries).toEqual([expect.objectContaining({ type: 'terminal', accepted: false, artifacts: 0, gate: expect.objectContaining({ ok: false, stage: 'visible_devices' }) })]);
  });

  it('HARNESS_FILES=3 runs three files that all pass, and is REJECTED: acceptance needs twenty', async () => {
    ollama.reset();
    const reportFile = join(dir, 'three.jsonl');
    const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: reportFile, HARNESS_FILES: '3' }), (l) => logs.push(l));
    expect(outcome).toMatchObject({ accepted: false, passed: 3, problems: ['HARNESS_FILES=3: acceptance needs exactly 20 files; this is a smoke run and is not accepted'] });
    expect(logs.at(-1)).toMatch(/^harness: REJECTED 3\/3;/);
    const entries = (await readFile(reportFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.at(-1)).toMatchObject({ type: 'terminal', accepted: false, requiredArtifacts: 20, artifacts: 3, checkpoints: 3, passed: 3 });
  });

  it.each(['0', 'abc', '-2'])('HARNESS_FILES=%j is refused before any generation, and is not accepted', async (count) => {
    ollama.reset();
    const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: join(dir, `count-${count}.jsonl`), HARNESS_FILES: count }), (l) => logs.push(l));
    expect(outcome).toMatchObject({ accepted: false, passed: 0, problems: [expect.stringContaining(`HARNESS_FILES=${JSON.stringify(count)} is not a number of files`)] });
    expect(logs.at(-1)).toMatch(/^harness: REJECTED 0\/0;/);
    expect(ollama.requests).toEqual([]);
  });

  it('its judge fails a run whose model hallucinates an anchor: unresolved, REJECTED, the problem named', async () => {
    ollama.reset();
    ollama.reply(scriptedExtractionModel({ lie: ['channel'] }));
    try {
      const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: join(dir, 'lie.jsonl'), HARNESS_FILES: '2' }), (l) => logs.push(l));
      expect(outcome.accepted).toBe(false);
      expect(outcome.passed).toBe(0);
      expect(outcome.problems).toContain(`${harnessFiles(2)[0]!.path}: channel: unresolved (anchor_failed)`);
    } finally {
      ollama.reply(scriptedExtractionModel());
    }
  });

  it('stops with the service gate\'s reason when generation runs at CPU speed, never accepting the run', async () => {
    ollama.reset();
    const model = ollama.models.find((m) => m.name === MODEL)!;
    model.evalTokensPerSecond = 4;
    try {
      const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: join(dir, 'cpu.jsonl') }), (l) => logs.push(l));
      expect(outcome).toMatchObject({ accepted: false, passed: 0 });
      expect(outcome.problems).toEqual([expect.stringContaining("the extractor's GPU gate failed during the run: GPU gate failed at token_rate: the generation ran at 4.0 tokens/s")]);
    } finally {
      delete model.evalTokensPerSecond;
    }
  });

  it('refuses to run without HARNESS_APPROVED_GPU_UUID', async () => {
    const outcome = await runLiveHarness(env({ HARNESS_REPORT_FILE: join(dir, 'none.jsonl'), HARNESS_APPROVED_GPU_UUID: undefined }), (l) => logs.push(l));
    expect(outcome).toMatchObject({ accepted: false, problems: [expect.stringContaining('HARNESS_APPROVED_GPU_UUID is not set')] });
  });
});
