import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImage, type ImageCheck } from '@vouch/media';
import { OcrPool } from '../src/ocr-pool.js';
import { readText } from '../src/read-text.js';
import { largePage } from './large-page.js';
import { renderText, type TextImage } from './render-text.js';

const MAX_PIXELS = 40_000_000;
/** The vision-router's check: the first frame, within its pixel limit. */
const FIRST_FRAME: ImageCheck = { frames: 'first', maxPixels: MAX_PIXELS };
const fontFile = (name: string) => fileURLToPath(new URL(`./fixtures/fonts/${name}`, import.meta.url));

/** OCR of real rendered text, read back exactly. One worker: the machine is shared. */
describe('OCR of rendered text', { timeout: 120_000 }, () => {
  let pool: OcrPool;
  beforeAll(async () => {
    pool = new OcrPool({ size: 1, recycleAfter: 3, startTimeoutMs: 30_000, jobTimeoutMs: 30_000 });
    await pool.warm();
  }, 120_000);
  afterAll(async () => pool?.close());

  const read = async (spec: TextImage) => {
    const bytes = await renderText(spec);
    const result = await readText(pool, await checkImage(bytes, { field: 'imageBase64' }, FIRST_FRAME), MAX_PIXELS);
    if (!result.ok) throw new Error(result.reason);
    return result;
  };

  it.each([
    { font: 'sans', size: 32, text: 'INVOICE 2024-0117\nTotal $1,234.56' },
    { font: 'serif', size: 22, text: 'Connection refused on port 5432' },
    { font: 'mono', size: 18, text: 'export BAUD_RATE=115200' },
  ] as const)('reads $font at $size px exactly', async (spec) => {
    const { output, tool, confidence } = await read(spec);
    expect(output.text).toBe(spec.text);
    expect(output.rotatedBy).toBe(0);
    expect(confidence).toBeGreaterThanOrEqual(80);
    expect(tool).toMatch(/^tesseract\.js 7\.\d+\.\d+ \(eng, LSTM\)$/);
    expect(output.lines.map((l) => l.text)).toEqual(spec.text.split('\n'));
    expect(output.words.map((w) => w.text)).toEqual(spec.text.split(/\s+/));
    for (const w of output.words) {
      expect(w.confidence).toBeGreaterThan(50);
      expect(w.box.x1).toBeGreaterThan(w.box.x0);
      expect(w.box.y1).toBeGreaterThan(w.box.y0);
    }
  });

  it('upscales a small image and gives boxes in the original image\'s pixels', async () => {
    const { output } = await read({ font: 'sans', size: 14, text: 'Save changes', padding: 8 });
    expect(output.text).toBe('Save changes');
    expect(output.preprocessing).toContain('upscaled ×2 (Lanczos)');
    const [save] = output.words;
    // The rendered text starts 8 px in; boxes are reported at that scale, not the upscaled one.
    expect(save!.box.x0).toBeGreaterThanOrEqual(6);
    expect(save!.box.x0).toBeLessThanOrEqual(12);
  });

  it('reads an upside-down image by turning it 180° when the first reading is not confident', async () => {
    const { output } = await read({ font: 'serif', size: 30, text: 'Backup finished at 03:15', rotate: 180 });
    expect(output.text).toBe('Backup finished at 03:15');
    expect(output.rotatedBy).toBe(180);
    expect(output.preprocessing.at(-1)).toMatch(/^read again turned 180° \(confidence \d+ < 60\): kept the turned reading$/);
  });

  it('reads low-contrast grey-on-grey text', async () => {
    const { output } = await read({ font: 'sans', size: 30, text: 'Quota exceeded', foreground: '#8a8a8a', background: '#b4b4b4' });
    expect(output.text).toBe('Quota exceeded');
  });

  it('applies EXIF orientation before reading (a phone photo stored sideways)', async () => {
    const upright = await renderText({ font: 'sans', size: 28, text: 'Gate B12 closes 10:45' });
    // Stored turned 90° counter-clockwise, with EXIF 6 saying "turn 90° clockwise to view".
    const sideways = await sharp(await sharp(upright).rotate(-90).toBuffer()).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
    const result = await readText(pool, await checkImage(sideways, { field: 'imageBase64' }, FIRST_FRAME), MAX_PIXELS);
    expect(result).toMatchObject({ ok: true, output: { text: 'Gate B12 closes 10:45', rotatedBy: 0 } });
  });

  it('streams a large sideways photo through rotation and downscaling, with boxes in the upright image\'s pixels', async () => {
    // Upright 5000×800 (long side above 4000), stored turned with EXIF 6: the streamed path, not the decoded one.
    const upright = await largePage(5000, 800, 'R');
    const sideways = await sharp(await sharp(upright).rotate(-90).toBuffer()).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
    const result = await readText(pool, await checkImage(sideways, { field: 'imageBase64' }, FIRST_FRAME), MAX_PIXELS);
    if (!result.ok) throw new Error(result.reason);
    expect(result.output.lines.map((l) => l.text)).toEqual(['Invoice R-0: total due 1,234.56 EUR', 'Invoice R-1: total due 1,234.56 EUR', 'Invoice R-2: total due 1,234.56 EUR']);
    expect(result.output.preprocessing).toContain('downscaled to 4000 px on the long side');
    // largePage draws each line 5 % in (250 px) plus the text's 24 px padding, and the first 8 % down (64 px) plus the padding.
    const [invoice] = result.output.words;
    expect(invoice!.box.x0).toBeGreaterThanOrEqual(266);
    expect(invoice!.box.x0).toBeLessThanOrEqual(282);
    expect(invoice!.box.y0).toBeGreaterThanOrEqual(80);
    expect(invoice!.box.y0).toBeLessThanOrEqual(100);
  });

  it('flattens transparent images onto white before reading (dark text on a transparent background)', async () => {
    const glyphs = await sharp({ text: { text: '<span foreground="#000000">Retry in 30 seconds</span>', font: 'DejaVu Sans 28px', fontfile: fontFile('DejaVuSans.ttf'), rgba: true, dpi: 72 } })
      .extend({ top: 20, bottom: 20, left: 20, right: 20, background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
    expect((await sharp(glyphs).metadata()).hasAlpha).toBe(true);
    const result = await readText(pool, await checkImage(glyphs, { field: 'imageBase64' }, FIRST_FRAME), MAX_PIXELS);
    expect(result).toMatchObject({ ok: true, output: { text: 'Retry in 30 seconds', preprocessing: expect.arrayContaining(['flattened onto white']) } });
  });

  it('reads in a worker thread: the event loop (which renews BullMQ locks) keeps turning during a recognition', async () => {
    const page = await renderText({ font: 'serif', size: 20, text: Array.from({ length: 12 }, (_, i) => `Line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n') });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const reading = pool.recognize(page);
    const ticksAtStart = ticks;
    const result = await reading;
    clearInterval(timer);
    expect(result.text).toContain('Line 12: the quick brown fox');
    // A recognition on the main thread would block every timer until it returned.
    expect(ticks - ticksAtStart).toBeGreaterThan(2);
  });

  it('finds no text in a blank image, with confidence 0', async () => {
    const blank = await sharp({ create: { width: 200, height: 120, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const result = await readText(pool, await checkImage(blank, { field: 'imageBase64' }, FIRST_FRAME), MAX_PIXELS);
    expect(result).toMatchObject({ ok: true, output: { text: '', confidence: 0, words: [], rotatedBy: 0 } });
    if (result.ok) expect(result.output.preprocessing.some((step) => step.startsWith('read again'))).toBe(false);
  });
});
