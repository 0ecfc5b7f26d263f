import type { AuxiliaryOutput, EvidenceModality } from '@vouch/contracts';
import { ollamaCall, type Logger, type OllamaFailure } from '@vouch/platform';
import { auxiliaryPrompt } from './domain/auxiliary-prompt.js';
import type { StageResult } from './domain/run-ladder.js';

export type AuxiliaryOutcome = 'ok' | 'not_configured' | 'no_vision' | 'not_found' | 'timeout' | 'error' | 'empty';

export interface AuxiliaryVisionOptions {
  /** OLLAMA_HOST; undefined: no auxiliary vision, and every stage that needed it says so. */
  host: string | undefined;
  model: string;
  timeoutMs: number;
  logger?: Logger;
  onOutcome?: (outcome: AuxiliaryOutcome) => void;
}

export interface AuxiliaryVision {
  readonly configured: boolean;
  readonly model: string;
  describe(image: Buffer, modalities: readonly EvidenceModality[], ocrText: string | undefined): Promise<StageResult<AuxiliaryOutput> & { model?: string }>;
}

/** The reason for a failure other than a timeout or a missing model: public words, no host, port or driver text. */
function failedReason(failure: Exclude<OllamaFailure, { kind: 'timeout' | 'model_missing' }>, model: string): string {
  switch (failure.kind) {
    case 'http_error':
      return `the auxiliary model ${model} failed (Ollama answered ${failure.status ?? 'an error'})`;
    case 'malformed':
      return `the auxiliary model ${model}'s answer could not be read (it is not Ollama's JSON)`;
    case 'unreachable':
      return 'the auxiliary vision server could not be reached';
  }
}

/** How long a capability check is trusted: a model pulled or replaced on the server is noticed within this. */
const CAPABILITY_TTL_MS = 60_000;
const RECOVERY = 'pass callerModel.acceptsImages if your model takes images, or ask the user to describe the image; do not guess';

/**
 * Auxiliary vision over Ollama through the `ollama` client. Before the first
 * image it asks /api/show whether the model has the `vision` capability
 * (older engines silently ignore images sent to a text model, and the
 * answer then describes nothing). It never throws and never invents: a
 * missing model, a timeout or an error comes back as an unresolved stage
 * whose reason names no host or port.
 */
export function createAuxiliaryVision(opts: AuxiliaryVisionOptions): AuxiliaryVision {
  const { host, model, timeoutMs } = opts;
  const tool = `ollama:${model}`;
  const outcome = (o: AuxiliaryOutcome) => opts.onOutcome?.(o);
  if (host === undefined) {
    return {
      configured: false,
      model,
      async describe() {
        outcome('not_configured');
        return { ok: false, tool: null, reason: 'no auxiliary vision model is configured on this service (OLLAMA_HOST is unset)', recovery: RECOVERY };
      },
    };
  }
  let capability: { vision: boolean; checkedAt: number } | undefined;

  return {
    configured: true,
    model,
    async describe(image, modalities, ocrText) {
      // One deadline covers the capability check and the answer, headers and body.
      const call = ollamaCall(host, timeoutMs);
      const ollama = call.client;
      try {
        if (!capability || Date.now() - capability.checkedAt > CAPABILITY_TTL_MS) {
          const shown = await ollama.show({ model });
          capability = { vision: (shown.capabilities ?? []).includes('vision'), checkedAt: Date.now() };
        }
        if (!capability.vision) {
          outcome('no_vision');
          return { ok: false, tool, reason: `the auxiliary model ${model} has no vision capability (Ollama /api/show): configure a vision model in VISION_MODEL`, recovery: RECOVERY };
        }
        const prompt = auxiliaryPrompt(modalities, ocrText);
        const response = await ollama.chat({
          model,
          messages: [
            { role: 'system', content: prompt.system },
            { role: 'user', content: prompt.user, images: [image] },
          ],
          stream: false,
          options: { temperature: 0 },
        });
        const answer = response.message.content.trim();
        if (answer === '') {
          outcome('empty');
          return { ok: false, tool, reason: `the auxiliary model ${model} answered nothing`, recovery: RECOVERY };
        }
        outcome('ok');
        return { ok: true, tool, model, confidence: null, output: { answer }, note: 'a model\'s description, not a measurement: quote it as such' };
      } catch (err) {
        const failure = call.failure(err);
        if (failure.kind === 'timeout') {
          outcome('timeout');
          return { ok: false, tool, reason: `the auxiliary model ${model} did not answer within ${timeoutMs} ms (VISION_TIMEOUT_MS)`, recovery: RECOVERY };
        }
        opts.logger?.warn({ err, model, failure: failure.kind }, 'auxiliary vision failed');
        if (failure.kind === 'model_missing') {
          outcome('not_found');
          capability = undefined;
          return { ok: false, tool, reason: `the auxiliary model ${model} is not available on the Ollama server (not pulled)`, recovery: RECOVERY };
        }
        outcome('error');
        return { ok: false, tool, reason: failedReason(failure, model), recovery: RECOVERY };
      }
    },
  };
}
