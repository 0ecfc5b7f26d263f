import { fileTypeFromBuffer } from 'file-type';
import pLimit from 'p-limit';
import sharp, { type Metadata } from 'sharp';
import { BadInputError, MEDIA_MIME_TYPES, VouchError, ERROR_CODES } from '@vouch/contracts';
import { imageLimitProblem, type ImageLimits } from './image-limits.js';

export type ImageMime = (typeof MEDIA_MIME_TYPES)[number];

/** An image whose bytes decode, as the check read it. */
export interface CheckedImage {
  bytes: Buffer;
  mimeType: ImageMime;
  /** sharp's reading of the header. */
  meta: Metadata;
  width: number;
  /** The height of one frame. */
  height: number;
  frames: number;
}

/**
 * Where an image came from, for the messages that name it: the caller's
 * `imageBase64` field or an alias.
 */
export type ImageSource = { field: 'imageBase64' } | { alias: string };

/**
 * Which frames a check decodes and holds to the limits.
 *
 * `all` (the gateway's registration): the bytes are stored and any frame may
 * be decoded later, so every frame is held to the frame limit and, all
 * together, to the pixel limit; past them is 413. Every frame is decoded
 * with `failOn: 'warning'`, so a bad CRC is refused too.
 *
 * `first` (the vision-router's analysis): only the first frame is analysed,
 * however many an animation claims, so only it is held to the pixel limit
 * (past it is 400) and decoded, with `failOn: 'truncated'`.
 */
export type ImageCheck = ({ frames: 'all' } & ImageLimits) | { frames: 'first'; maxPixels: number };

/** A 50-megapixel PNG decodes in well under a second: an image that takes this long was built to be slow. */
const DECODE_TIMEOUT_SECONDS = 30;

function subject(source: ImageSource): { name: string; path: string } {
  return 'alias' in source ? { name: `image ${source.alias}`, path: 'alias' } : { name: 'imageBase64', path: 'imageBase64' };
}

/** A decoder's reason, short and on one line: sharp's messages name the codec and the fault, never a path (the input is a buffer). */
function reasonOf(err: unknown): string {
  const line = String((err as Error)?.message ?? err).split('\n')[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/**
 * Refuses what cannot be read, before decoding it: empty bytes, bytes that
 * are not a supported image (the type is read from the bytes, never taken
 * from the caller's word), a header sharp cannot read or without
 * dimensions, and a header past the limits (a 10000×10000 PNG can be 100 KB,
 * so a decompression bomb is refused from its header alone). Then decodes
 * the frames `check` names to the end, so a truncated or corrupt file is a
 * 4xx now rather than a failure in whatever reads it next.
 */
export async function checkImage(bytes: Buffer, source: ImageSource, check: ImageCheck): Promise<CheckedImage> {
  const { name, path } = subject(source);
  const bad = (message: string, why: string) => new BadInputError(message, [{ path, message: why }]);
  if (bytes.length === 0) throw bad(`${name} is empty (zero bytes): send the image file`, 'empty');
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !(MEDIA_MIME_TYPES as readonly string[]).includes(type.mime)) {
    throw new VouchError(ERROR_CODES.unsupportedMediaType, `${name} is not a supported image (${type ? `looks like ${type.mime}` : 'unrecognised bytes'}): send one of ${MEDIA_MIME_TYPES.join(', ')}`, {
      fields: [{ path, message: 'not a supported image' }],
    });
  }
  const mimeType = type.mime as ImageMime;
  let meta: Metadata;
  try {
    // The header only: nothing is decoded before the limits are checked, with the dimensions in the message.
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw bad(`${name} is a ${mimeType} whose header cannot be read (${reasonOf(err)}): send the original file`, 'unreadable image');
  }
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height) throw bad(`${name} is a ${mimeType} without dimensions: send the original file`, 'no dimensions');
  const image: CheckedImage = { bytes, mimeType, meta, width, height, frames: meta.pages ?? 1 };

  if (check.frames === 'first') {
    if (width * height > check.maxPixels) {
      throw bad(`${name} is ${width}×${height}, above the ${check.maxPixels}-pixel limit: downscale it below ${check.maxPixels} pixels and send it again`, 'too many pixels');
    }
    try {
      await sharp(bytes, { limitInputPixels: check.maxPixels, failOn: 'truncated' }).resize(64, 64, { fit: 'inside' }).raw().toBuffer();
    } catch {
      throw bad(`${name} is a ${mimeType} that cannot be decoded (truncated or corrupt): send the original file again`, 'undecodable image');
    }
    return image;
  }

  const tooLarge = (message: string) => new VouchError(ERROR_CODES.payloadTooLarge, message, { fields: [{ path, message: 'past the image limits' }] });
  const problem = imageLimitProblem({ width, frameHeight: height, frames: image.frames }, check, name);
  if (problem) throw tooLarge(problem);
  try {
    // A 32×32 nearest-neighbour thumbnail reads every byte of image data while memory stays a few strips, where `stats()` would cost forty times as long.
    await sharp(bytes, { pages: -1, failOn: 'warning', limitInputPixels: check.maxPixels })
      .timeout({ seconds: DECODE_TIMEOUT_SECONDS })
      .resize(32, 32, { fit: 'fill', kernel: 'nearest', fastShrinkOnLoad: false })
      .raw()
      .toBuffer();
  } catch (err) {
    const reason = reasonOf(err);
    if (/^timeout/i.test(reason)) throw tooLarge(`${name} takes more than ${DECODE_TIMEOUT_SECONDS} s to decode: downscale it or save it again in a simpler form`);
    throw bad(`${name} is a damaged ${mimeType}: it does not decode to the end (${reason}); send the original file`, 'damaged image');
  }
  return image;
}

export interface ImageCheckOptions extends ImageLimits {
  /** Images checked at once; the rest wait their turn. */
  concurrency: number;
}

/** Checks the bytes of an `imageBase64` field. */
export type ImageChecker = (bytes: Buffer) => Promise<CheckedImage>;

/**
 * The gateway's registration check (every frame, within `opts`' limits) on
 * `imageBase64`, at most `opts.concurrency` at a time. sharp works on libuv's
 * thread pool, so a decode never blocks the event loop; the bound leaves
 * threads for the DNS lookups and file reads that share the pool, and a
 * decode past DECODE_TIMEOUT_SECONDS is stopped. Sets sharp's process-wide
 * cache and concurrency: call it only in a process whose decoding is this.
 */
export function imageChecker(opts: ImageCheckOptions): ImageChecker {
  // libvips' operation cache would keep recently decoded images in memory; registration never decodes one twice.
  sharp.cache(false);
  // One libvips thread per decode: checks run `concurrency` at a time already, and each thread holds its own buffers.
  sharp.concurrency(1);
  const gate = pLimit(opts.concurrency);
  const check: ImageCheck = { frames: 'all', maxPixels: opts.maxPixels, maxFrames: opts.maxFrames };
  return (bytes) => gate(() => checkImage(bytes, { field: 'imageBase64' }, check));
}
