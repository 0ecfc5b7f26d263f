import type { EvidenceModality } from '@vouch/contracts';

/** OCR text past this many characters is cut from the auxiliary prompt: small vision models have short contexts. */
const PROMPT_OCR_CHARS = 1200;

const ASK: Record<EvidenceModality, string> = {
  text: 'Read any text in the image exactly as written, line by line. Write [illegible] for parts you cannot read.',
  scene: 'Describe what is happening in the image: the setting, what the main subjects are doing, and any visible state or outcome.',
  identity: 'Say what the main subjects are (objects, interface elements, animals or people) and the visible features that identify them. Do not name a person unless visible text names them.',
  visual_properties: 'Describe the colours, layout and image quality.',
};

/**
 * The auxiliary vision prompt, built from the evidence need and what OCR
 * read, never from topic guesses: the model is asked only for what the need
 * lacks and told to say when it cannot see something rather than invent it.
 */
export function auxiliaryPrompt(modalities: readonly EvidenceModality[], ocrText: string | undefined): { system: string; user: string } {
  const asks = modalities.map((m) => ASK[m]);
  const text = ocrText?.trim();
  const ocrPart = text
    ? `\n\nOCR read this text in the image (it may contain errors):\n"""\n${text.length > PROMPT_OCR_CHARS ? `${text.slice(0, PROMPT_OCR_CHARS)}…` : text}\n"""`
    : '';
  return {
    system: 'You are a careful visual evidence assistant. Report only what is visible in the image. If something cannot be determined from the image, say so plainly. Never guess.',
    user: `${asks.join(' ')}${ocrPart}\n\nAnswer in at most 120 words.`,
  };
}
