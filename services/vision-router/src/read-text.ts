import sharp, { type Sharp } from 'sharp';
import type { OcrOutput } from '@vouch/contracts';
import type { CheckedImage } from '@vouch/media';
import { OCR_MIN_CONFIDENCE } from './domain/assess-coverage.js';
import { estimateLineHeight } from './domain/line-height.js';
import type { StageResult } from './domain/run-ladder.js';
import { OCR_TOOL, OcrUnavailable, type OcrPool } from './ocr-pool.js';
import type { Page } from 'tesseract.js';

/** Images shorter than this are upscaled ×2 before OCR: small text reads far better (bank-statement test: confidence 84 → 93)... */
const UPSCALE_BELOW_HEIGHT = 400;
/** ...unless their lines are already this tall: tesseract reads such text as well unscaled, and 4× the pixels cost time for nothing. */
const TALL_ENOUGH_LINE = 24;
/** Longer sides are downscaled to this: OCR time grows with pixels and text this large needs none of them. */
const MAX_OCR_SIDE = 4000;
const MAX_WORDS = 2000;
const MAX_LINES = 500;
const MAX_TEXT_CHARS = 20_000;

interface Prepared {
  png: Buffer;
  /** OCR pixels per upright-image pixel. */
  scale: number;
  width: number;
  height: number;
  steps: string[];
}

/** EXIF orientations 5–8 turn the image a quarter: the upright image is height × width. */
function uprightSize(image: CheckedImage): { width: number; height: number } {
  return (image.meta.orientation ?? 1) >= 5 ? { width: image.height, height: image.width } : { width: image.width, height: image.height };
}

/**
 * EXIF rotation, transparency flattened onto white (transparent pixels are
 * black underneath), greyscale, then resized for OCR. Only a short image is
 * decoded into memory whole, for its line height; any other streams through
 * one libvips pipeline, so no JS buffer holds a 40 MP image decoded (V8
 * frees such a buffer only when it next collects: 10–20 s later on an idle
 * process, measured).
 */
async function prepare(image: CheckedImage, maxPixels: number): Promise<Prepared> {
  const upright = () => sharp(image.bytes, { limitInputPixels: maxPixels }).rotate().flatten({ background: '#ffffff' }).greyscale();
  const steps = ['EXIF orientation applied', 'flattened onto white', 'greyscale'];
  let { width, height } = uprightSize(image);
  let scale = 1;
  let pipeline: Sharp;
  if (height < UPSCALE_BELOW_HEIGHT) {
    const decoded = await upright().raw().toBuffer({ resolveWithObject: true });
    ({ width, height } = decoded.info);
    const long = Math.max(width, height);
    const lineHeight = estimateLineHeight(decoded.data, width, height);
    if ((lineHeight ?? 0) < TALL_ENOUGH_LINE && long * 2 <= MAX_OCR_SIDE) scale = 2;
    else if (lineHeight !== undefined) steps.push(`not upscaled: lines are already about ${lineHeight} px tall`);
    else if (long > MAX_OCR_SIDE) scale = MAX_OCR_SIDE / long;
    pipeline = sharp(decoded.data, { raw: { width, height, channels: 1 } });
  } else {
    const long = Math.max(width, height);
    if (long > MAX_OCR_SIDE) scale = MAX_OCR_SIDE / long;
    pipeline = upright();
  }
  if (scale !== 1) {
    pipeline = pipeline.resize(Math.round(width * scale), Math.round(height * scale), { kernel: 'lanczos3' });
    steps.push(scale > 1 ? `upscaled ×${scale} (Lanczos)` : `downscaled to ${MAX_OCR_SIDE} px on the long side`);
  }
  return { png: await pipeline.png({ compressionLevel: 1 }).toBuffer(), scale, width, height, steps };
}

function toSpans(page: Page, prepared: Prepared, rotatedBy: 0 | 180): Pick<OcrOutput, 'lines' | 'words'> {
  const { scale, width, height } = prepared;
  const box = (b: { x0: number; y0: number; x1: number; y1: number }) => {
    const x0 = b.x0 / scale;
    const y0 = b.y0 / scale;
    const x1 = b.x1 / scale;
    const y1 = b.y1 / scale;
    // A box found on the turned image, mapped back onto the upright one.
    const mapped = rotatedBy === 180 ? { x0: width - x1, y0: height - y1, x1: width - x0, y1: height - y0 } : { x0, y0, x1, y1 };
    return { x0: Math.round(mapped.x0), y0: Math.round(mapped.y0), x1: Math.round(mapped.x1), y1: Math.round(mapped.y1) };
  };
  const lines: OcrOutput['lines'] = [];
  const words: OcrOutput['words'] = [];
  for (const block of page.blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        if (lines.length < MAX_LINES) lines.push({ text: line.text.trim(), confidence: round(line.confidence), box: box(line.bbox) });
        for (const word of line.words) if (words.length < MAX_WORDS) words.push({ text: word.text, confidence: round(word.confidence), box: box(word.bbox) });
      }
    }
  }
  return { lines, words };
}

function round(x: number): number {
  return Math.round(Math.min(100, Math.max(0, x)) * 10) / 10;
}

/**
 * The OCR stage: prepares the image, reads it, and when the page confidence
 * is low reads it again turned 180° (an upside-down page reads as garbage at
 * confidence ~40 and as text at ~94 once turned), keeping the better reading.
 * Turning only on low confidence: a blind best-of-four search costs 3–4× and
 * once preferred 90° for an upright page.
 */
export async function readText(pool: OcrPool, image: CheckedImage, maxPixels: number): Promise<StageResult<OcrOutput>> {
  try {
    const prepared = await prepare(image, maxPixels);
    let page = await pool.recognize(prepared.png);
    let rotatedBy: 0 | 180 = 0;
    const steps = [...prepared.steps];
    // A page with no text at all reads the same turned; only a doubtful reading is worth a second look.
    if (page.confidence < OCR_MIN_CONFIDENCE && page.text.trim() !== '') {
      const turned = await sharp(prepared.png).rotate(180).png({ compressionLevel: 1 }).toBuffer();
      const again = await pool.recognize(turned);
      steps.push(`read again turned 180° (confidence ${Math.round(page.confidence)} < ${OCR_MIN_CONFIDENCE}): kept the ${again.confidence > page.confidence ? 'turned' : 'upright'} reading`);
      if (again.confidence > page.confidence) {
        page = again;
        rotatedBy = 180;
      }
    }
    const text = page.text.trim().slice(0, MAX_TEXT_CHARS);
    const output: OcrOutput = { text, confidence: round(page.confidence), rotatedBy, preprocessing: steps, ...toSpans(page, prepared, rotatedBy) };
    return { ok: true, output, tool: OCR_TOOL, confidence: output.confidence };
  } catch (err) {
    if (err instanceof OcrUnavailable) return { ok: false, tool: OCR_TOOL, reason: err.message, recovery: 'retry the request; if it keeps failing, ask for a smaller or clearer image' };
    throw err;
  }
}
