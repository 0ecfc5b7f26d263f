import type { EvidencePacket, MediaProvenance } from '@vouch/contracts';
import type { LadderOutcome } from './run-ladder.js';

/** OCR text longer than this is cut in the summary (the full text stays in the OCR stage's output). */
const SUMMARY_TEXT_CHARS = 1500;

const RESOLVED_BY: Record<MediaProvenance['resolvedBy'], string> = {
  reply_to: 'the image of the message replied to',
  alias: 'the image named by alias',
  latest: 'the latest image in the chat',
  inline: 'the image sent with the request',
};

/** The gaps a packet reports: every unmet part of the need, with the failure behind it and a way out. Pure. */
export function unresolvedItems(outcome: LadderOutcome): EvidencePacket['unresolved'] {
  const items: EvidencePacket['unresolved'] = outcome.failures.map((f) => ({ need: f.kind, reason: f.reason, recovery: f.recovery }));
  for (const modality of outcome.coverage.unmet) {
    const note = outcome.coverage.notes.find((n) => n.startsWith(modality.replace('_', ' ')) || n.startsWith(modality));
    items.push({
      need: modality,
      reason: note ?? `${modality} evidence is missing`,
      recovery:
        modality === 'text'
          ? 'ask for a sharper or larger image of the text, or ask the user to type it'
          : 'pass callerModel.acceptsImages if your model takes images, or ask the user to describe the image; do not guess',
    });
  }
  return items;
}

function describeMedia(media: MediaProvenance): string {
  const where = media.surface ? ` in ${media.surface} chat ${media.chatKey}` : '';
  const message = media.sourceMessageId ? `, message ${media.sourceMessageId}` : '';
  const name = media.alias ?? 'the inline image';
  return `${name}${where}${message} (${RESOLVED_BY[media.resolvedBy]}): ${media.width}×${media.height} ${media.mimeType}`;
}

/** The packet's evidence in words, for the caller's model. Pure. */
export function summarizeEvidence(media: MediaProvenance, outcome: LadderOutcome, unresolved: EvidencePacket['unresolved']): string {
  const lines = [`Image: ${describeMedia(media)}.`];
  const { observation, ocr, auxiliary } = outcome.evidence;
  if (observation) {
    const frames = observation.frames > 1 ? `, ${observation.frames} frames (the first was analysed)` : '';
    lines.push(
      `Observation: ${observation.format}, ${observation.width}×${observation.height}${frames}, ${observation.hasAlpha ? 'with' : 'no'} transparency, ` +
        `${observation.colour.greyscale ? 'greyscale' : 'colour'}, text likelihood ${observation.textLikelihood.toFixed(2)}.`,
    );
    if (observation.nativeImage) {
      const n = observation.nativeImage;
      lines.push(`Native path: a ${n.width}×${n.height} JPEG copy (${n.byteSize} bytes) is in the observation stage for your model to look at.`);
    }
  }
  if (ocr) {
    const text = ocr.text.trim();
    const shown = text.length > SUMMARY_TEXT_CHARS ? `${text.slice(0, SUMMARY_TEXT_CHARS)}…` : text;
    lines.push(
      text === ''
        ? `OCR: no legible text (confidence ${Math.round(ocr.confidence)}).`
        : `OCR (confidence ${Math.round(ocr.confidence)}${ocr.rotatedBy ? ', read after turning the image 180°' : ''}): ${JSON.stringify(shown)}`,
    );
  }
  if (auxiliary) lines.push(`Auxiliary vision (${outcome.evidence.auxiliaryModel ?? 'model'}): ${auxiliary.answer.trim()}`);
  if (unresolved.length) lines.push(`Unresolved: ${unresolved.map((u) => `${u.need}: ${u.reason}`).join('; ')}.`);
  lines.push(outcome.coverage.met ? 'The evidence meets the request\'s need; answer from it.' : 'The evidence does not meet the whole need: say what is unresolved instead of guessing.');
  return lines.join('\n');
}
