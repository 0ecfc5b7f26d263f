import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Metadata } from 'sharp';
import { BadInputError, ERROR_CODES, MEDIA_MIME_TYPES, NATIVE_IMAGE_LIMITS, VouchError, type MediaItem, type ObservationOutput } from '@vouch/contracts';
import { estimateTextLikelihood } from './domain/text-likelihood.js';

/** The side of the copy observation measures: statistics need no more, and JPEG shrink-on-load makes it cheap. */
const STATS_SIDE = 512;

export const SHARP_TOOL = `sharp ${sharp.versions.sharp ?? ''} (libvips ${sharp.versions.vips})`.replace('  ', ' ');

/** A decodable image, checked before any stage runs. */
export interface CheckedImage {
  bytes: Buffer;
  mimeType: MediaItem['mimeType'];
  meta: Metadata;
  width: number;
  height: number;
  frames: number;
}

/**
 * Where an image came from, for error messages that name it: `imageBase64`
 * (the caller's field) or an alias.
 */
export type ImageSource = { field: 'imageBase64' } | { alias: string };

function subject(source: ImageSource): { name: string; path: string } {
  return 'alias' in source ? { name: `image ${source.alias}`, path: 'alias' } : { name: 'imageBase64', path: 'imageBase64' };
}

/**
 * Refuses what no stage can read, before decoding it: bytes that are not a
 * supported image (sniffed, never trusted), headers that claim more pixels
 * than maxPixels (decompression bombs are refused from the header alone),
 * zero-size images. Then decodes the first frame once, fully, so a
 * truncated or corrupt file is a 4xx here rather than a failure in a stage.
 * Animated images are analysed on their first frame only, however many
 * frames they claim.
 */
export async function checkImage(bytes: Buffer, source: ImageSource, maxPixels: number): Promise<CheckedImage> {
  const { name, path } = subject(source);
  const bad = (message: string, why: string) => new BadInputError(message, [{ path, message: why }]);
  if (bytes.length === 0) throw bad(`${name} is empty (zero bytes): send the image file`, 'empty');
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !(MEDIA_MIME_TYPES as readonly string[]).includes(type.mime)) {
    throw new VouchError(ERROR_CODES.unsupportedMediaType, `${name} is not a supported image (${type ? `looks like ${type.mime}` : 'unrecognised bytes'}): send one of ${MEDIA_MIME_TYPES.join(', ')}`, {
      fields: [{ path, message: 'not a supported image' }],
    });
  }
  let meta: Metadata;
  try {
    // Header only: nothing is decoded yet, so the pixel limit is checked below, with the dimensions in the message.
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw bad(`${name} is a ${type.mime} whose header cannot be read (corrupt or truncated): send the original file`, 'unreadable image');
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  if (width === 0 || height === 0) throw bad(`${name} has no pixels (${width}×${height}): send an image with content`, 'zero-size image');
  if (width * height > maxPixels) {
    throw bad(`${name} is ${width}×${height}, above the ${maxPixels}-pixel limit: downscale it below ${maxPixels} pixels and send it again`, 'too many pixels');
  }
  try {
    // Decodes every pixel of the first frame: truncation and corruption show up here.
    await sharp(bytes, { limitInputPixels: maxPixels, failOn: 'truncated' }).resize(64, 64, { fit: 'inside' }).raw().toBuffer();
  } catch {
    throw bad(`${name} is a ${type.mime} that cannot be decoded (truncated or corrupt): send the original file again`, 'undecodable image');
  }
  return { bytes, mimeType: type.mime as MediaItem['mimeType'], meta, width, height, frames: meta.pages ?? 1 };
}

/**
 * A bounded copy for the caller's own vision model: upright (EXIF applied),
 * at most NATIVE_IMAGE_LIMITS.maxLongSide on the long side and
 * maxBytes in size, re-encoded as JPEG, which also drops every metadata
 * field (GPS included). Lowers quality first, then size, until it fits.
 */
export async function nativeCopy(image: CheckedImage, maxPixels: number): Promise<NonNullable<ObservationOutput['nativeImage']>> {
  let side: number = NATIVE_IMAGE_LIMITS.maxLongSide;
  for (;;) {
    for (const quality of [85, 70, 55, 40]) {
      const { data, info } = await sharp(image.bytes, { limitInputPixels: maxPixels })
        .rotate()
        .resize(side, side, { fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality, mozjpeg: false })
        .toBuffer({ resolveWithObject: true });
      if (data.length <= NATIVE_IMAGE_LIMITS.maxBytes) return { mimeType: 'image/jpeg', width: info.width, height: info.height, byteSize: data.length, base64: data.toString('base64') };
    }
    side = Math.floor(side * 0.75);
  }
}

/** Observation: what sharp can measure without reading anything. */
export async function observeImage(image: CheckedImage, opts: { native: boolean; maxPixels: number }): Promise<ObservationOutput> {
  // sharp's stats() ignores every operation before it and measures the
  // original (a 40 MP PNG: 190 MB and 3 s), so the small copy is written out
  // raw and measured.
  const { data, info } = await sharp(image.bytes, { limitInputPixels: opts.maxPixels })
    .rotate()
    .resize(STATS_SIDE, STATS_SIDE, { fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const small = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  const [stats, grey] = await Promise.all([
    small.clone().stats(),
    small.clone().flatten({ background: '#ffffff' }).greyscale().raw().toBuffer({ resolveWithObject: true }),
  ]);
  const [r, g, b] = stats.channels;
  const mean = { r: round(r!.mean), g: round((g ?? r!).mean), b: round((b ?? r!).mean) };
  const greyscale = image.meta.channels !== undefined && image.meta.channels <= 2 ? true : Math.max(Math.abs(mean.r - mean.g), Math.abs(mean.g - mean.b)) < 2 && channelsAlike(stats.channels);
  return {
    format: image.meta.format ?? image.mimeType,
    width: image.width,
    height: image.height,
    exifOrientation: image.meta.orientation ?? null,
    hasAlpha: image.meta.hasAlpha ?? false,
    channels: image.meta.channels ?? 3,
    frames: image.frames,
    colour: { mean, dominant: stats.dominant, greyscale, entropy: round(stats.entropy), },
    sharpness: round(stats.sharpness),
    textLikelihood: estimateTextLikelihood(grey.data, grey.info.width, grey.info.height),
    ...(opts.native ? { nativeImage: await nativeCopy(image, opts.maxPixels) } : {}),
  };
}

function channelsAlike(channels: ReadonlyArray<{ stdev: number }>): boolean {
  return channels.length < 3 || Math.abs(channels[0]!.stdev - channels[1]!.stdev) < 1 && Math.abs(channels[1]!.stdev - channels[2]!.stdev) < 1;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
