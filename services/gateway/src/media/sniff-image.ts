import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Metadata } from 'sharp';
import { BadInputError, MEDIA_MIME_TYPES, VouchError, ERROR_CODES } from '@vouch/contracts';

export type ImageMime = (typeof MEDIA_MIME_TYPES)[number];

export interface SniffedImage {
  mimeType: ImageMime;
  width: number;
  height: number;
}

/** Caps decoding work: an image claiming more pixels than this is refused before it is decoded (decompression bombs). */
const MAX_PIXELS = 100_000_000;

/**
 * Reads the image type from the bytes (never from the caller's word) and the
 * dimensions from the header. Anything that is not a supported image is a 415
 * naming what it looked like.
 */
export async function sniffImage(bytes: Buffer): Promise<SniffedImage> {
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !(MEDIA_MIME_TYPES as readonly string[]).includes(type.mime)) {
    throw new VouchError(ERROR_CODES.unsupportedMediaType, `imageBase64 is not a supported image (${type ? `looks like ${type.mime}` : 'unrecognised bytes'}): send one of ${MEDIA_MIME_TYPES.join(', ')}`, {
      fields: [{ path: 'imageBase64', message: 'not a supported image' }],
    });
  }
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata();
  } catch (err) {
    throw new BadInputError(`imageBase64 is a ${type.mime} that cannot be read (${(err as Error).message}): send the original file`, [{ path: 'imageBase64', message: 'unreadable image' }]);
  }
  if (!meta.width || !meta.height) {
    throw new BadInputError(`imageBase64 is a ${type.mime} without dimensions: send the original file`, [{ path: 'imageBase64', message: 'no dimensions' }]);
  }
  if (meta.width * meta.height > MAX_PIXELS) {
    throw new BadInputError(`the image is ${meta.width}x${meta.height}, above ${MAX_PIXELS} pixels: downscale it first`, [{ path: 'imageBase64', message: 'too many pixels' }]);
  }
  return { mimeType: type.mime as ImageMime, width: meta.width, height: meta.height };
}

/** Decodes strict standard base64; a data: URL prefix or stray characters are named. */
export function decodeBase64Image(value: string): Buffer {
  if (value.startsWith('data:')) {
    throw new BadInputError('imageBase64 must be plain base64, without a data: URL prefix: drop everything up to and including the comma', [
      { path: 'imageBase64', message: 'has a data: URL prefix' },
    ]);
  }
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    throw new BadInputError('imageBase64 is not valid standard base64 (A-Z, a-z, 0-9, +, / and = padding)', [{ path: 'imageBase64', message: 'invalid base64' }]);
  }
  return Buffer.from(compact, 'base64');
}
