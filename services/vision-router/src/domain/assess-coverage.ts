import type { AuxiliaryOutput, EvidenceModality, EvidencePlan, ObservationOutput, OcrOutput } from '@vouch/contracts';

/** Below this page confidence (0–100) OCR text is not trusted as an exact reading (tesseract: clean text scores 88–96, noise 10–18). */
export const OCR_MIN_CONFIDENCE = 60;
/** At or above this estimate observation counts the image as holding text. */
export const TEXT_LIKELY = 0.5;

/** What the stages have produced so far. */
export interface LadderEvidence {
  observation?: ObservationOutput;
  ocr?: OcrOutput;
  auxiliary?: AuxiliaryOutput;
  auxiliaryModel?: string;
}

export interface Coverage {
  met: boolean;
  unmet: EvidenceModality[];
  /** One line per modality: how it was met, or why not yet. */
  notes: string[];
}

/** Whether OCR produced a confident reading. */
export function ocrConfident(ocr: OcrOutput | undefined): boolean {
  return ocr !== undefined && ocr.text.trim() !== '' && ocr.confidence >= OCR_MIN_CONFIDENCE;
}

/** Whether the image likely holds text; unknown (no observation) counts as likely, so OCR is not skipped on a guess. */
export function textLikely(evidence: LadderEvidence): boolean {
  return evidence.observation === undefined || evidence.observation.textLikelihood >= TEXT_LIKELY;
}

/** Which parts of the need the evidence so far meets. Pure. */
export function assessCoverage(need: EvidencePlan['need'], evidence: LadderEvidence): Coverage {
  const unmet: EvidenceModality[] = [];
  const notes: string[] = [];
  const aux = evidence.auxiliary?.answer.trim() ? evidence.auxiliary : undefined;
  const native = evidence.observation?.nativeImage !== undefined;
  for (const modality of need.modalities) {
    switch (modality) {
      case 'text': {
        const ocr = evidence.ocr;
        if (ocrConfident(ocr)) notes.push(`text: OCR read ${ocr!.words.length} word(s) at confidence ${Math.round(ocr!.confidence)}`);
        else if (aux) notes.push('text: only the auxiliary vision model read it, not OCR; treat the wording as approximate');
        else {
          unmet.push(modality);
          notes.push(
            ocr === undefined
              ? 'text: not read yet'
              : ocr.text.trim() === ''
                ? 'text: OCR found no legible text'
                : `text: OCR confidence ${Math.round(ocr.confidence)} is below ${OCR_MIN_CONFIDENCE}, so its reading is not exact`,
          );
        }
        break;
      }
      case 'scene':
      case 'identity': {
        const what = modality === 'scene' ? 'scene' : 'identity';
        if (aux) notes.push(`${what}: described by the auxiliary vision model${evidence.auxiliaryModel ? ` (${evidence.auxiliaryModel})` : ''}`);
        else if (native) notes.push(`${what}: the caller's model sees the image itself (native path)`);
        else {
          unmet.push(modality);
          notes.push(`${what}: no stage has looked at what the image shows yet`);
        }
        break;
      }
      case 'visual_properties':
        if (evidence.observation) notes.push('visual properties: measured by observation');
        else {
          unmet.push(modality);
          notes.push('visual properties: observation did not run');
        }
        break;
    }
  }
  return { met: unmet.length === 0, unmet, notes };
}
