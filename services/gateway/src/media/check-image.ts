import { fileTypeFromBuffer } from 'file-type';
import pLimit from 'p-limit';
import sharp, { type Metadata } from 'sharp';
import { BadInputError, MEDIA_MIME_TYPES, VouchError, ERROR_CODES } from '@vouch/contracts';
import { imageLimitProblem, type ImageLimits } from './image-limits.js';

export type ImageMime = (typeof MEDIA_MIME_TYPES)[number];

/** What registration learns of an image it accepts. */
export interface CheckedImage {
  mimeType: ImageMime;
  width: number;
  /** The height of one frame. */
  height: number;
  frames: number;
}

export interface ImageCheckOptions extends ImageLimits {
  /** Images checked at once; the rest wait their turn. */
  concurrency: number;
}

/** A 50-megapixel PNG decodes in well under a second: an image that takes this long was built to be slow. */
const DECODE_TIMEOUT_SECONDS = 30;

/** Checks an image's bytes. */
export type ImageChecker = (bytes: Buffer) => Promise<CheckedImage>;

const FIELD = 'imageBase64';

/** A decoder's reason, short and on one line: sharp's messages name the codec and the fault, never a path (the input is a buffer). */
function reasonOf(err: unknown): string {
  const line = String((err as Error)?.message ?? err).split('\n')[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

function tooLarge(message: string): VouchError {
  return new VouchError(ERROR_CODES.payloadTooLarge, message, { fields: [{ path: FIELD, message: 'past the image limits' }] });
}

/**
 * The registration check: the type read from the bytes (never from the
 * caller's word), the header held to the pixel and frame limits, then every
 * frame decoded with sharp under those limits and `failOn: 'warning'`, so a
 * truncated file or a bad CRC is refused now rather than when the
 * vision-router decodes it. The decode feeds a 32×32 nearest-neighbour
 * thumbnail: every byte of image data is read while memory stays a few
 * strips, where `stats()` would cost forty times as long.
 *
 * sharp works on libuv's thread pool, so a decode never blocks the event
 * loop; at most `concurrency` checks run at once, which leaves threads for
 * the DNS lookups and file reads that share the pool, and a decode past
 * DECODE_TIMEOUT_SECONDS is stopped.
 */
export function imageChecker(opts: ImageCheckOptions): ImageChecker {
  // libvips' operation cache would keep recently decoded images in memory; registration never decodes one twice.
  sharp.cache(false);
  // One libvips thread per decode: checks run `concurrency` at a time already, and each thread holds its own buffers.
  sharp.concurrency(1);
  const gate = pLimit(opts.concurrency);
  return (bytes) => gate(() => checkImage(bytes, opts));
}

async function checkImage(bytes: Buffer, opts: ImageCheckOptions): Promise<CheckedImage> {
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !(MEDIA_MIME_TYPES as readonly string[]).includes(type.mime)) {
    throw new VouchError(ERROR_CODES.unsupportedMediaType, `${FIELD} is not a supported image (${type ? `looks like ${type.mime}` : 'unrecognised bytes'}): send one of ${MEDIA_MIME_TYPES.join(', ')}`, {
      fields: [{ path: FIELD, message: 'not a supported image' }],
    });
  }
  const mime = type.mime as ImageMime;
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new BadInputError(`${FIELD} is a ${mime} whose header cannot be read (${reasonOf(err)}): send the original file`, [{ path: FIELD, message: 'unreadable image' }]);
  }
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height) {
    throw new BadInputError(`${FIELD} is a ${mime} without dimensions: send the original file`, [{ path: FIELD, message: 'no dimensions' }]);
  }
  const frames = meta.pages ?? 1;
  const problem = imageLimitProblem({ width, frameHeight: height, frames }, opts);
  if (problem) throw tooLarge(problem);

  try {
    await sharp(bytes, { pages: -1, failOn: 'warning', limitInputPixels: opts.maxPixels })
      .timeout({ seconds: DECODE_TIMEOUT_SECONDS })
      .resize(32, 32, { fit: 'fill', kernel: 'nearest', fastShrinkOnLoad: false })
      .raw()
      .toBuffer();
  } catch (err) {
    const reason = reasonOf(err);
    if (/^timeout/i.test(reason)) throw tooLarge(`${FIELD} takes more than ${DECODE_TIMEOUT_SECONDS} s to decode: downscale it or save it again in a simpler form`);
    throw new BadInputError(`${FIELD} is a damaged ${mime}: it does not decode to the end (${reason}); send the original file`, [{ path: FIELD, message: 'damaged image' }]);
  }
  return { mimeType: mime, width, height, frames };
}
