import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const FONTS = {
  sans: { file: 'DejaVuSans.ttf', family: 'DejaVu Sans' },
  serif: { file: 'DejaVuSerif.ttf', family: 'DejaVu Serif' },
  mono: { file: 'DejaVuSansMono.ttf', family: 'DejaVu Sans Mono' },
} as const;

export type FontName = keyof typeof FONTS;

export interface TextImage {
  text: string;
  font?: FontName;
  /** Pixel size of the text. */
  size?: number;
  foreground?: string;
  background?: string;
  /** Turns the finished image, without EXIF: the pixels themselves are rotated. */
  rotate?: 0 | 90 | 180;
  padding?: number;
  format?: 'png' | 'jpeg';
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Renders text to an image with sharp (libvips + Pango) from the fonts
 * shipped in fixtures/fonts, so the OCR tests read real rendered text that
 * looks the same on every machine.
 */
export async function renderText(spec: TextImage): Promise<Buffer> {
  const font = FONTS[spec.font ?? 'sans'];
  const fg = spec.foreground ?? '#000000';
  const bg = spec.background ?? '#ffffff';
  const padding = spec.padding ?? 24;
  const glyphs = await sharp({
    text: {
      text: `<span foreground="${fg}">${escapeMarkup(spec.text)}</span>`,
      font: `${font.family} ${spec.size ?? 32}px`,
      fontfile: fileURLToPath(new URL(`./fixtures/fonts/${font.file}`, import.meta.url)),
      rgba: true,
      dpi: 72,
    },
  })
    .png()
    .toBuffer();
  let image = sharp(glyphs).flatten({ background: bg }).extend({ top: padding, bottom: padding, left: padding, right: padding, background: bg });
  if (spec.rotate) image = sharp(await image.png().toBuffer()).rotate(spec.rotate);
  return spec.format === 'jpeg' ? image.jpeg({ quality: 92 }).toBuffer() : image.png().toBuffer();
}
