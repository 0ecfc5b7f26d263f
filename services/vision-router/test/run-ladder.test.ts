import { describe, expect, it } from 'vitest';
import { BadInputError, type MediaItem, type ObservationOutput, type OcrOutput } from '@vouch/contracts';
import { chooseImageQuestion, competingImages } from '../src/domain/choose-image.js';
import { planEvidence } from '../src/domain/plan-evidence.js';
import { runLadder, type StageRunners } from '../src/domain/run-ladder.js';

const observation = (textLikelihood: number, native = false): ObservationOutput => ({
  format: 'png', width: 800, height: 600, exifOrientation: null, hasAlpha: false, channels: 3, frames: 1,
  colour: { mean: { r: 1, g: 1, b: 1 }, dominant: { r: 1, g: 1, b: 1 }, greyscale: false, entropy: 1 }, sharpness: 1, textLikelihood,
  ...(native ? { nativeImage: { mimeType: 'image/jpeg' as const, width: 800, height: 600, byteSize: 10, base64: 'AA==' } } : {}),
});
const ocr = (text: string, confidence: number): OcrOutput => ({ text, confidence, rotatedBy: 0, preprocessing: [], lines: [], words: text.split(' ').map((w) => ({ text: w, confidence, box: { x0: 0, y0: 0, x1: 1, y1: 1 } })) });

/** Runners that record which stages ran and answer as told. */
function runners(answers: { textLikelihood?: number; native?: boolean; ocr?: OcrOutput | Error; aux?: string | Error }) {
  const ran: string[] = [];
  const r: StageRunners = {
    async observation() {
      ran.push('observation');
      return { ok: true, output: observation(answers.textLikelihood ?? 0.9, answers.native), tool: 'sharp', confidence: null };
    },
    async ocr() {
      ran.push('ocr');
      if (answers.ocr instanceof Error) throw answers.ocr;
      return answers.ocr ? { ok: true, output: answers.ocr, tool: 'tesseract', confidence: answers.ocr.confidence } : { ok: false, tool: 'tesseract', reason: 'OCR timed out', recovery: 'retry' };
    },
    async auxiliary() {
      ran.push('auxiliary_vision');
      if (answers.aux instanceof Error) throw answers.aux;
      return answers.aux ? { ok: true, output: { answer: answers.aux }, tool: 'ollama:m', model: 'm', confidence: null } : { ok: false, tool: 'ollama:m', reason: 'the model failed', recovery: 'ask' };
    },
  };
  return { r, ran };
}
const media = { mimeType: 'image/png', width: 800, height: 600 };
const plan = (prompt: string, extra: Partial<Parameters<typeof planEvidence>[0]> = {}) => planEvidence({ prompt, requestedDetail: 'auto', media, ...extra });

describe('the stage ladder', () => {
  it('stops once OCR reads the text confidently, and records the skipped escalation with why', async () => {
    const { r, ran } = runners({ ocr: ocr('Save changes', 93) });
    const out = await runLadder(plan('What does the button say?'), r);
    expect(ran).toEqual(['observation', 'ocr']);
    expect(out.stages.map((s) => [s.kind, s.status])).toEqual([['observation', 'ran'], ['ocr', 'ran'], ['auxiliary_vision', 'skipped']]);
    expect(out.stages[2]!.note).toBe('need met: text: OCR read 2 word(s) at confidence 93');
    expect(out.coverage.met).toBe(true);
  });

  it('escalates to auxiliary vision when OCR is not confident', async () => {
    const { r, ran } = runners({ ocr: ocr('S4ve chanq3s', 41), aux: 'The button says "Save changes".' });
    const out = await runLadder(plan('What does the button say?'), r);
    expect(ran).toEqual(['observation', 'ocr', 'auxiliary_vision']);
    expect(out.coverage.notes).toEqual(['text: only the auxiliary vision model read it, not OCR; treat the wording as approximate']);
  });

  it('skips OCR for a scene with no likely text, and stops at the native path', async () => {
    const native = runners({ textLikelihood: 0.1, native: true });
    const out = await runLadder(plan('What is happening here?', { callerModel: { acceptsImages: true, rejectedNativeImage: false } }), native.r);
    expect(native.ran).toEqual(['observation']);
    expect(out.stages.map((s) => s.note)).toEqual([null, 'need met: scene: the caller\'s model sees the image itself (native path)', 'need met: scene: the caller\'s model sees the image itself (native path)']);
    const aux = runners({ textLikelihood: 0.1, aux: 'a street' });
    const viaAux = await runLadder(plan('What is happening here?'), aux.r);
    expect(aux.ran).toEqual(['observation', 'auxiliary_vision']);
    expect(viaAux.stages[1]).toMatchObject({ kind: 'ocr', status: 'skipped', note: 'observation estimates text is unlikely (0.10 < 0.5)' });
  });

  it('records failures as unresolved and goes on; an unexpected error is unresolved too', async () => {
    const { r, ran } = runners({ ocr: new Error('worker died'), aux: undefined });
    const out = await runLadder(plan('Read the text'), r);
    expect(ran).toEqual(['observation', 'ocr', 'auxiliary_vision']);
    expect(out.stages.map((s) => s.status)).toEqual(['ran', 'unresolved', 'unresolved']);
    expect(out.failures).toEqual([
      { kind: 'ocr', reason: 'the stage failed unexpectedly: worker died', recovery: 'retry the request' },
      { kind: 'auxiliary_vision', reason: 'the model failed', recovery: 'ask' },
    ]);
    expect(out.coverage).toMatchObject({ met: false, unmet: ['text'] });
  });

  it('lets a bad-image error end the ladder (a 4xx), and runs every stage for requestedDetail full', async () => {
    const { r } = runners({ ocr: new BadInputError('unreadable') });
    await expect(runLadder(plan('Read the text'), r)).rejects.toBeInstanceOf(BadInputError);
    const full = runners({ ocr: ocr('Save', 95), aux: 'a dialog' });
    await runLadder(plan('Read the text', { requestedDetail: 'full' }), full.r);
    expect(full.ran).toEqual(['observation', 'ocr', 'auxiliary_vision']);
  });
});

describe('choosing among recent images', () => {
  const item = (n: number, at: string): MediaItem => ({ alias: `img-${n}`, kind: 'image', mimeType: 'image/png', byteSize: 1, width: 1, height: 1, surface: 'telegram', chatKey: 'c', messageId: String(n), replyToMessageId: null, caption: null, registeredAt: at });
  it('asks only when other images arrived close to the latest one', () => {
    const burst = [item(3, '2026-01-01T10:00:30Z'), item(2, '2026-01-01T10:00:00Z'), item(1, '2026-01-01T09:00:00Z')];
    expect(competingImages(burst, 120_000).map((m) => m.alias)).toEqual(['img-3', 'img-2']);
    expect(chooseImageQuestion(competingImages(burst, 120_000))).toMatch(/^2 images arrived together in this chat: img-3, img-2\. Which one/);
    expect(competingImages([item(2, '2026-01-01T10:00:00Z'), item(1, '2026-01-01T09:00:00Z')], 120_000)).toEqual([]);
    expect(competingImages([], 120_000)).toEqual([]);
  });
});

describe('line height estimate', () => {
  it('finds the median height of the inked bands, ignoring thin rules', async () => {
    const { estimateLineHeight } = await import('../src/domain/line-height.js');
    const width = 20;
    const rows = [0, 0, ...Array(10).fill(1), 0, 0, ...Array(12).fill(1), 0, 1, 0, ...Array(11).fill(1), 0];
    const pixels = new Uint8Array(rows.flatMap((ink) => Array(width).fill(0).map((_, x) => (ink && x > 4 && x < 9 ? 0 : 255))));
    expect(estimateLineHeight(pixels, width, rows.length)).toBe(11);
    expect(estimateLineHeight(new Uint8Array(400).fill(255), 20, 20)).toBeUndefined();
  });
});
