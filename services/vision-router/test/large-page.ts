import sharp from 'sharp';
import { renderText } from './render-text.js';

/**
 * A large, mostly white PNG with a few lines of text, each naming `label`:
 * a scan or a screenshot of a long page. It compresses to a few hundred KB
 * (8000×5000: ~215 KB), so a job carries it cheaply, yet every decoder and
 * OCR worker that reads it must hold width × height pixels.
 */
export async function largePage(width: number, height: number, label: string): Promise<Buffer> {
  const lines = await Promise.all([0, 1, 2].map((i) => renderText({ text: `Invoice ${label}-${i}: total due 1,234.56 EUR`, size: Math.max(24, Math.round(width / 130)) })));
  return sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite(lines.map((input, i) => ({ input, left: Math.round(width * 0.05), top: Math.round(height * (0.08 + i * 0.3)) })))
    .removeAlpha()
    .png()
    .toBuffer();
}
