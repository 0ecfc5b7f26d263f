import { Ollama } from 'ollama';
import { DependencyError, type ExtractorIdentity, type RequirementInput } from '@vouch/contracts';
import { classifyOllamaFailure, describeOllamaFailure, redactUrl, type Logger, type OllamaFailure, type OllamaStage } from '@vouch/platform';
import { escapeRegExp, termsOf } from './domain/requirement-terms.js';
import { buildPrompt, modelAnswerJsonSchema, parseModelAnswer, planWindows, proposalFromAnswer, type WindowLimits } from './domain/extract-windows.js';
import { verifyAnchor, type ProposedResult } from './domain/finalize-extract.js';
import type { Extractor, Proposal } from './extract-artifact.js';
import type { ExtractorMetrics } from './metrics.js';

export interface LlmExtractorOptions {
  host: string;
  model: string;
  /** The model's digest, as Ollama reported it when the gate loaded it. */
  digest: string;
  node: string;
  gpuUuid: string;
  timeoutMs: number;
  limits: WindowLimits;
  metrics: Pick<ExtractorMetrics, 'promptChars'>;
  logger?: Logger;
  /** Called with each prompt's size; the harness keeps the largest. */
  onPrompt?: (chars: number) => void;
}

export const LLM_EXTRACTOR_VERSION = '1';

/**
 * Model extraction over small windows: each Ollama call sees one window of
 * numbered lines and answers through structured output (a JSON schema as
 * `format`). A requirement is settled by the first answer whose anchor holds
 * byte for byte against the stored body; the service re-verifies every anchor
 * and computes coverage afterwards, whatever the model said.
 */
export function createLlmExtractor(opts: LlmExtractorOptions): Extractor {
  const safeHost = redactUrl(opts.host).replace(/\/$/, '');
  const identity: ExtractorIdentity = {
    kind: 'llm',
    name: 'vouch-window-extract',
    version: LLM_EXTRACTOR_VERSION,
    model: { name: opts.model, digest: opts.digest },
    node: opts.node,
    gpuUuid: opts.gpuUuid,
  };
  const format = modelAnswerJsonSchema();
  const stage: OllamaStage = { role: 'extraction model', model: opts.model, timeoutMs: opts.timeoutMs, timeoutVariable: 'EXTRACTOR_LLM_TIMEOUT_MS', modelVariable: 'EXTRACTOR_MODEL' };
  // The message reaches the caller's answer (503 DEPENDENCY_UNAVAILABLE): public words and the way out only.
  const unavailable = (failure: OllamaFailure, cause: unknown) =>
    new DependencyError(`${describeOllamaFailure(failure, stage)}: the model extraction stopped; run it again later, or use artifact.extractDeterministic (no model)`, cause);

  async function ask(system: string, user: string): Promise<string> {
    // ollama-js has no timeout of its own: the deadline rides on the fetch it is given.
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const client = new Ollama({ host: opts.host, fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline }) });
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
        options: { temperature: 0 },
      });
    } catch (err) {
      const failure = classifyOllamaFailure(err, { timedOut: deadline.aborted });
      opts.logger?.warn({ err, model: opts.model, ollama: safeHost, failure: failure.kind }, 'extraction model call failed');
      throw unavailable(failure, err);
    }
    const content = (response as { message?: { content?: unknown } } | undefined)?.message?.content;
    if (typeof content !== 'string') {
      opts.logger?.warn({ model: opts.model, ollama: safeHost }, 'extraction answer has no message content');
      throw unavailable({ kind: 'malformed' }, undefined);
    }
    return content;
  }

  return {
    identity: () => identity,
    async propose({ lines, body, requirements }): Promise<Proposal> {
      const settled = new Map<string, ProposedResult>();
      const failures = new Map<string, string>();
      const windows = planWindows(lines, requirements, opts.limits);
      let used = 0;
      let largest = 0;
      for (const window of windows) {
        if (used >= opts.limits.maxWindows) break;
        const open = window.requirementIds.filter((id) => !settled.has(id));
        if (open.length === 0) continue;
        const prompt = buildPrompt(lines, { ...window, requirementIds: open }, requirements, opts.limits);
        used += 1;
        largest = Math.max(largest, prompt.chars);
        opts.metrics.promptChars.observe(prompt.chars);
        opts.onPrompt?.(prompt.chars);
        const parsed = parseModelAnswer(await ask(prompt.system, prompt.user));
        if (!parsed.ok) {
          for (const id of open) failures.set(id, parsed.error);
          opts.logger?.warn({ model: opts.model, error: parsed.error }, 'extraction answer not used');
          continue;
        }
        for (const item of parsed.answer.results) {
          if (!open.includes(item.id)) continue;
          const proposal = proposalFromAnswer(item);
          if (!proposal || proposal.status !== 'satisfied') continue;
          const problem = verifyAnchor(body.body, body.lines(), proposal.anchor, proposal.value);
          if (problem) failures.set(item.id, `the model's anchor failed verification: ${problem}`);
          else settled.set(item.id, proposal);
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
        const tried = inWindows.filter((w) => windows.indexOf(w) < used).length;
        if (tried < inWindows.length && !failures.has(req.id)) {
          return { id: req.id, status: 'unresolved', code: 'window_limit', reason: `${inWindows.length - tried} candidate window(s) were not examined (EXTRACTOR_MAX_WINDOWS ${opts.limits.maxWindows})`, recovery: { readLines, search } };
        }
        const failure = failures.get(req.id);
        return failure
          ? { id: req.id, status: 'unresolved', code: failure.includes('verification') ? 'anchor_failed' : 'model_failed', reason: failure, recovery: { readLines, search } }
          : { id: req.id, status: 'unresolved', code: 'model_unresolved', reason: `the model found no definition of ${req.id} in ${tried} candidate window(s)`, recovery: { readLines, search } };
      });
      return { results, windows: used, largestPromptChars: largest };
    },
  };
}
