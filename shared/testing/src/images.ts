import sharp from 'sharp';

/** A colour as CSS-style text (`'#ff0000'`, `'red'`) or RGBA channels (alpha 0–1). */
export type ImageColor = string | { r: number; g: number; b: number; alpha?: number };

/** Size and fill of a generated test image. */
export interface ImageSpec {
  width: number;
  height: number;
  /** Solid fill; white when omitted. */
  color?: ImageColor;
}

function canvas({ width, height, color = '#ffffff' }: ImageSpec): ReturnType<typeof sharp> {
  return sharp({ create: { width, height, channels: 4, background: color } });
}

/** A solid-colour PNG, encoded by sharp at run time. */
export async function makePng(spec: ImageSpec): Promise<Buffer> {
  return canvas(spec).png().toBuffer();
}

/** A solid-colour JPEG (no alpha: JPEG cannot carry it). */
export async function makeJpeg(spec: ImageSpec): Promise<Buffer> {
  return canvas(spec).flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
}

/** A solid-colour WebP. */
export async function makeWebp(spec: ImageSpec): Promise<Buffer> {
  return canvas(spec).webp().toBuffer();
}

/**
 * Bytes that are not an image but look like a document (a PDF header), for
 * the "uploaded something that is not an image" path. Sniffing them must fail.
 */
export const NOT_AN_IMAGE: Buffer = Buffer.from('%PDF-1.4\n%\xE2\xE3\xCF\xD3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n', 'latin1');
