import sharp from 'sharp';
import { NATIVE_IMAGE_LIMITS, type ObservationOutput } from '@vouch/contracts';
import type { CheckedImage } from '@vouch/media';
import { estimateTextLikelihood } from './domain/text-likelihood.js';

/** The side of the copy observation measures: statistics need no more, and JPEG shrink-on-load makes it cheap. */
const STATS_SIDE = 512;

export const SHARP_TOOL = `sharp ${sharp.versions.sharp ?? ''} (libvips ${sharp.versions.vips})`.replace('  ', ' ');

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
