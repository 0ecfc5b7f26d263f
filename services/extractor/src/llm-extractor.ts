import { DependencyError, type ExtractorIdentity, type RequirementInput } from '@vouch/contracts';
import { classifyOllamaFailure, describeOllamaFailure, ollamaCall, redactHost, type Logger, type OllamaFailure } from '@vouch/platform';
import { escapeRegExp, termsOf } from './domain/requirement-terms.js';
import { buildPrompts, modelAnswerJsonSchema, parseModelAnswer, planWindows, proposalFromAnswer, type WindowLimits } from './domain/extract-windows.js';
import { verifyAnchor, type ProposedResult } from './domain/finalize-extract.js';
import type { Extractor, Proposal } from './extract-artifact.js';
import { GpuGateFailure, type GenerationGate } from './generation-gate.js';
import { extractionStage } from './gpu-gate-runner.js';
import type { ExtractorMetrics } from './metrics.js';

export interface LlmExtractorOptions {
  host: string;
  model: string;
  node: string;
  timeoutMs: number;
  limits: WindowLimits;
  /** The gate at every generation: where the model runs is observed before each job, its speed after each generation. */
  gate: GenerationGate;
  metrics: Pick<ExtractorMetrics, 'promptChars'>;
  logger?: Logger;
  /** Called with each prompt's size; the harness keeps the largest. */
  onPrompt?: (chars: number) => void;
}

export const LLM_EXTRACTOR_VERSION = '2';

/**
 * Model extraction over small windows: each Ollama call sees one window of
 * numbered lines and answers through structured output (a JSON schema as
 * `format`). A requirement is settled by the first answer whose anchor holds
 * byte for byte against the stored body; the service re-verifies every anchor
 * and computes coverage afterwards, whatever the model said.
 *
 * Every job passes the generation gate first, and every answer only after
 * its generation's speed passed it: a job the gate stops fails whole (nothing
 * from it is kept), so no answer computed on the CPU reaches a caller. The
 * extract names the GPUs observed for the job, not the configured ones.
 */
export function createLlmExtractor(opts: LlmExtractorOptions): Extractor {
  const safeHost = redactHost(opts.host);
  const identity = (observed: { gpuUuids: string[]; digest: string } | null): ExtractorIdentity => ({
    kind: 'llm',
    name: 'vouch-window-extract',
    version: LLM_EXTRACTOR_VERSION,
    model: { name: opts.model, digest: observed?.digest ?? 'unknown' },
    node: opts.node,
    gpuUuid: observed ? observed.gpuUuids.join(',') : null,
  });
  const format = modelAnswerJsonSchema();
  const stage = extractionStage(opts.model, opts.timeoutMs);
  // The message reaches the caller's answer (503 DEPENDENCY_UNAVAILABLE): public words and the way out only.
  const unavailable = (failure: OllamaFailure, cause: unknown) =>
    new DependencyError(`${describeOllamaFailure(failure, stage)}: the model extraction stopped; run it again later, or use artifact.extractDeterministic (no model)`, cause);
  const callFailed = (err: unknown, deadline: { aborted: boolean }): Error => {
    if (err instanceof GpuGateFailure) return err;
    const failure = classifyOllamaFailure(err, { timedOut: deadline.aborted });
    opts.logger?.warn({ err, model: opts.model, ollama: safeHost, failure: failure.kind }, 'extraction model call failed');
    return unavailable(failure, err);
  };

  async function observe(): Promise<{ gpuUuids: string[]; digest: string }> {
    // The gate's own Ollama calls carry their deadlines; a slow /api/ps is a timeout like any other.
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    try {
      return await opts.gate.beforeJob();
    } catch (err) {
      throw callFailed(err, deadline);
    }
  }

  async function ask(system: string, user: string): Promise<string> {
    const { client, deadline } = ollamaCall(opts.host, opts.timeoutMs);
    let response: unknown;
    try {
      response = await client.chat({
        model: opts.model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        format,
        stream: false,
        keep_alive: opts.gate.keepAlive,
        options: { temperature: 0 },
      });
    } catch (err) {
      throw callFailed(err, deadline);
    }
    const answer = response as { message?: { content?: unknown }; eval_count?: number; eval_duration?: number } | undefined;
    // Before the answer is read: one computed below the GPU's speed is not used (GpuGateFailure).
    opts.gate.afterGeneration({ eval_count: answer?.eval_count, eval_duration: answer?.eval_duration });
    const content = answer?.message?.content;
    if (typeof content !== 'string') {
      opts.logger?.warn({ model: opts.model, ollama: safeHost }, 'extraction answer has no message content');
      throw unavailable({ kind: 'malformed' }, undefined);
    }
    return content;
  }

  return {
    identity: () => identity(null),
    async propose({ lines, body, requirements }): Promise<Proposal> {
      const observed = await observe();
      const settled = new Map<string, ProposedResult>();
      const failures = new Map<string, string>();
      /** Per requirement, the candidate windows a prompt naming it was sent for. */
      const examined = new Map<string, number>();
      const windows = planWindows(lines, requirements, opts.limits);
      let generations = 0;
      let largest = 0;
      for (const window of windows) {
        if (generations >= opts.limits.maxWindows) break;
        const open = window.requirementIds.filter((id) => !settled.has(id));
        if (open.length === 0) continue;
        for (const prompt of buildPrompts(lines, { ...window, requirementIds: open }, requirements, opts.limits)) {
          if (generations >= opts.limits.maxWindows) break;
          generations += 1;
          largest = Math.max(largest, prompt.chars);
          opts.metrics.promptChars.observe(prompt.chars);
          opts.onPrompt?.(prompt.chars);
          for (const id of prompt.requirementIds) examined.set(id, (examined.get(id) ?? 0) + 1);
          const parsed = parseModelAnswer(await ask(prompt.system, prompt.user));
          if (!parsed.ok) {
            for (const id of prompt.requirementIds) failures.set(id, parsed.error);
            opts.logger?.warn({ model: opts.model, error: parsed.error }, 'extraction answer not used');
            continue;
          }
          for (const item of parsed.answer.results) {
            if (!prompt.requirementIds.includes(item.id)) continue;
            const proposal = proposalFromAnswer(item);
            if (!proposal || proposal.status !== 'satisfied') continue;
            const problem = verifyAnchor(body.body, body.lines(), proposal.anchor, proposal.value);
            if (problem) failures.set(item.id, `the model's anchor failed verification: ${problem}`);
            else settled.set(item.id, proposal);
          }
        }
      }
      const results = requirements.map((req: RequirementInput): ProposedResult => {
        const done = settled.get(req.id);
        if (done) return done;
        const search = termsOf(req).map((t) => `${escapeRegExp(t)}\\s*[:=]`);
        const inWindows = windows.filter((w) => w.requirementIds.includes(req.id));
        const readLines = inWindows.slice(0, 5).map((w) => ({ start: w.startLine, end: w.endLine }));
        if (inWindows.length === 0) {
          return { id: req.id, status: 'unresolved', code: 'not_found', reason: `no line of the source mentions ${termsOf(req).join(' or ')}`, recovery: { readLines: [], search } };
        }
        const tried = examined.get(req.id) ?? 0;
        if (tried < inWindows.length && !failures.has(req.id)) {
          return { id: req.id, status: 'unresolved', code: 'window_limit', reason: `${inWindows.length - tried} candidate window(s) were not examined (EXTRACTOR_MAX_WINDOWS ${opts.limits.maxWindows})`, recovery: { readLines, search } };
        }
        const failure = failures.get(req.id);
        return failure
          ? { id: req.id, status: 'unresolved', code: failure.includes('verification') ? 'anchor_failed' : 'model_failed', reason: failure, recovery: { readLines, search } }
          : { id: req.id, status: 'unresolved', code: 'model_unresolved', reason: `the model found no definition of ${req.id} in ${tried} candidate window(s)`, recovery: { readLines, search } };
      });
      return { results, windows: generations, largestPromptChars: largest, identity: identity(observed) };
    },
  };
}
