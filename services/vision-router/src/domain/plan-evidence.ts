import type { CallerModel, EvidenceModality, EvidencePlan, PlannedStage, RequestedDetail } from '@vouch/contracts';

/**
 * Words that say which kind of evidence a request needs. They name
 * modalities (text, a scene, an identity, visual properties), never topics or
 * scenarios: the same question about any subject gets the same plan
 * (plan-evidence.test.ts checks both the vocabulary and that invariance).
 * Multi-word cues match whole-word sequences.
 */
export const MODALITY_CUES: Readonly<Record<EvidenceModality, readonly string[]>> = {
  text: [
    'text', 'texts', 'word', 'words', 'wording', 'written', 'writing', 'write', 'read', 'reads', 'readable', 'legible',
    'say', 'says', 'said', 'spell', 'spelled', 'spelling', 'letter', 'letters', 'character', 'characters',
    'number', 'numbers', 'digit', 'digits', 'numeric', 'figure', 'figures', 'value', 'values',
    'label', 'labels', 'caption', 'title', 'heading', 'button', 'buttons', 'menu', 'dialog', 'message', 'error', 'warning',
    'code', 'log', 'document', 'page', 'paragraph', 'line', 'lines', 'quote', 'exact', 'exactly', 'verbatim',
    'transcribe', 'transcript', 'ocr', 'copy', 'typed', 'handwriting', 'handwritten', 'table', 'column', 'row', 'cell',
    'date', 'timestamp', 'version', 'url', 'link', 'email', 'screenshot', 'ui', 'field', 'form',
  ],
  scene: [
    'happening', 'going on', 'describe', 'description', 'scene', 'situation', 'doing', 'activity', 'context', 'overview',
    'summarise', 'summarize', 'explain', 'depict', 'depicts', 'show', 'shows', 'what is in', "what's in", 'look like', 'looks like', 'setting',
  ],
  identity: [
    'who', 'whom', 'whose', 'identify', 'identity', 'recognise', 'recognize', 'kind of', 'type of', 'what is this', "what's this",
    'what is that', 'what is shown', 'shown', 'pictured', 'object', 'objects', 'item', 'items', 'thing', 'things', 'is this a', 'is it a', 'which one',
  ],
  visual_properties: [
    'colour', 'colours', 'color', 'colors', 'size', 'dimension', 'dimensions', 'resolution', 'width', 'height', 'pixel', 'pixels',
    'format', 'orientation', 'rotated', 'upside', 'transparent', 'transparency', 'alpha', 'blurry', 'blur', 'sharp', 'sharpness',
    'bright', 'brightness', 'dark', 'contrast', 'quality', 'aspect',
  ],
};

const MODALITY_ORDER: readonly EvidenceModality[] = ['text', 'scene', 'identity', 'visual_properties'];

/** What the planner may look at besides the prompt. */
export interface PlanRequest {
  prompt: string;
  requestedDetail: RequestedDetail;
  media: { mimeType: string; width: number; height: number };
  callerModel?: CallerModel | undefined;
}

/** The prompt as lower-case words separated by single spaces, padded, so cues match whole words. */
function normalise(prompt: string): string {
  const words = prompt
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .match(/[\p{L}\p{N}']+/gu);
  return ` ${(words ?? []).join(' ')} `;
}

/** The modalities a prompt asks for, and the cues that said so. */
export function deriveNeed(prompt: string): EvidencePlan['need'] {
  const words = normalise(prompt);
  const cues: string[] = [];
  const modalities: EvidenceModality[] = [];
  for (const modality of MODALITY_ORDER) {
    const hits = MODALITY_CUES[modality].filter((cue) => words.includes(` ${cue} `));
    if (hits.length) {
      modalities.push(modality);
      cues.push(...hits.map((h) => `${modality}:${h}`));
    }
  }
  // Nothing named a modality: plan for text and the scene rather than assume either.
  if (modalities.length === 0) return { modalities: ['text', 'scene'], confidence: 'low', cues: [] };
  return { modalities, confidence: 'high', cues };
}

function cueList(need: EvidencePlan['need'], modality: EvidenceModality): string {
  const words = need.cues.filter((c) => c.startsWith(`${modality}:`)).map((c) => `"${c.slice(modality.length + 1)}"`);
  return words.length ? ` (${words.join(', ')})` : '';
}

/**
 * Derives the stages for a request: observation always, OCR when exact text
 * matters, auxiliary vision when what is shown must be described or
 * identified and neither the caller's own model nor the cheaper stages can.
 * Every stage carries the reason it was chosen. Pure.
 */
export function planEvidence(req: PlanRequest): EvidencePlan {
  const need = deriveNeed(req.prompt);
  const detail = req.requestedDetail;
  if (detail === 'text' && !need.modalities.includes('text')) need.modalities = ['text', ...need.modalities];
  const wants = (m: EvidenceModality) => need.modalities.includes(m);
  const native = req.callerModel?.acceptsImages === true && req.callerModel.rejectedNativeImage !== true;
  const route: EvidencePlan['route'] = native ? 'native' : 'auxiliary';
  const shape = `a ${req.media.width}×${req.media.height} ${req.media.mimeType.replace('image/', '').toUpperCase()}`;
  const low = need.confidence === 'low';

  const stages: PlannedStage[] = [];
  const observationReason = native
    ? `cheapest stage: reads ${shape}'s format, size, colours and text-likelihood, and bounds a copy for the caller's model, which accepts images (native path)`
    : req.callerModel?.rejectedNativeImage
      ? `cheapest stage: reads ${shape}'s format, size, colours and text-likelihood; no native copy, because the caller's model rejected the image`
      : `cheapest stage: reads ${shape}'s format, size, colours and text-likelihood; the caller's model does not take images, so no native copy`;
  stages.push({ kind: 'observation', role: 'primary', onlyIfTextLikely: false, reason: observationReason });

  if (detail === 'low') {
    return { need, requestedDetail: detail, route, runAll: false, stages, reason: 'requestedDetail low: observation only; needs it cannot meet are reported unresolved' };
  }

  const seeing = wants('scene') || wants('identity');
  if (wants('text') || detail === 'full') {
    const why = wants('text')
      ? low
        ? 'the request names no kind of evidence: OCR in case the answer is in the image\'s text'
        : `the request needs exact text${cueList(need, 'text')}: OCR reads it with per-word confidence`
      : 'requestedDetail full: every stage runs';
    stages.push({ kind: 'ocr', role: 'primary', onlyIfTextLikely: false, reason: why });
  } else if (seeing) {
    stages.push({
      kind: 'ocr',
      role: 'escalation',
      onlyIfTextLikely: true,
      reason: 'if observation finds likely text and the need is still open, OCR gives its exact wording to what follows',
    });
  }

  if (detail === 'full') {
    stages.push({ kind: 'auxiliary_vision', role: 'primary', onlyIfTextLikely: false, reason: 'requestedDetail full: every stage runs' });
  } else if (seeing || wants('text')) {
    const reasons: string[] = [];
    if (wants('scene')) reasons.push(`the request asks what is happening${cueList(need, 'scene')}, which observation statistics cannot answer`);
    if (wants('identity')) reasons.push(`the request asks who or what is shown${cueList(need, 'identity')}`);
    if (wants('text')) reasons.push('OCR may fail to read the text confidently');
    const fallback = native ? 'only if the caller\'s model cannot look itself' : 'the caller\'s model cannot look itself';
    stages.push({ kind: 'auxiliary_vision', role: 'escalation', onlyIfTextLikely: false, reason: `${reasons.join('; ')}; ${fallback}, so a vision model looks when the stages before leave the need open` });
  }

  const reason = low
    ? 'the request names no kind of evidence (low confidence): more stages are planned instead of assuming one'
    : `the request needs ${need.modalities.join(' and ').replace(/_/g, ' ')} evidence; stages run cheapest first and stop once it is met`;
  return { need, requestedDetail: detail, route, runAll: detail === 'full', stages, reason };
}
