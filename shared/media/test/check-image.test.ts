import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { makePng, NOT_AN_IMAGE } from '@vouch/testing';
import { checkImage, type ImageSource } from '../src/check-image.js';

const field: ImageSource = { field: 'imageBase64' };

/** An animated GIF of `frames` frames of `side`×`side`; noise keeps the encoder from merging identical frames. */
const animation = (frames: number, side = 8) =>
  sharp({ create: { width: side, height: side * frames, channels: 3, background: '#000000', noise: { type: 'gaussian', mean: 128, sigma: 40 }, pageHeight: side } })
    .gif()
    .toBuffer();

/** The first 60 % of a PNG of noise: its header reads, its pixels end early. */
const truncatedPng = async () => {
  const png = await sharp(randomBytes(64 * 64 * 3), { raw: { width: 64, height: 64, channels: 3 } }).png().toBuffer();
  return png.subarray(0, Math.floor(png.length * 0.6));
};

describe('checkImage, every frame (registration)', () => {
  const limits = { frames: 'all', maxPixels: 5_000, maxFrames: 4 } as const;

  it('reads the type from the bytes and the size of one frame from the header', async () => {
    const image = await checkImage(await animation(3), field, limits);
    expect({ mimeType: image.mimeType, width: image.width, height: image.height, frames: image.frames }).toEqual({ mimeType: 'image/gif', width: 8, height: 8, frames: 3 });
    expect(image.meta.format).toBe('gif');
  });

  it('refuses a header past the pixel or frame limit with 413, naming the limit', async () => {
    await expect(checkImage(await makePng({ width: 100, height: 100 }), field, limits)).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'imageBase64 is 100×100 = 10000 pixels, above the 5000-pixel limit: downscale it first',
      fields: [{ path: 'imageBase64', message: 'past the image limits' }],
    });
    await expect(checkImage(await animation(5), field, limits)).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'imageBase64 is an animation of 5 frames, above the 4-frame limit: send a still image or a shorter animation',
    });
  });

  it('refuses bytes that do not decode to the end as damaged, with the decoder\'s reason', async () => {
    const refused = checkImage(await truncatedPng(), field, { frames: 'all', maxPixels: 50_000, maxFrames: 1 });
    await expect(refused).rejects.toMatchObject({ code: 'BAD_INPUT', fields: [{ path: 'imageBase64', message: 'damaged image' }] });
    await expect(refused).rejects.toThrow(/^imageBase64 is a damaged image\/png: it does not decode to the end \(.+\); send the original file$/);
  });
});

describe('checkImage, the first frame (analysis)', () => {
  const limits = { frames: 'first', maxPixels: 5_000 } as const;

  it('holds only the first frame to the pixel limit, however many frames there are', async () => {
    const image = await checkImage(await animation(200), field, limits);
    expect({ width: image.width, height: image.height, frames: image.frames }).toEqual({ width: 8, height: 8, frames: 200 });
    await expect(checkImage(await makePng({ width: 100, height: 100 }), field, limits)).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: 'imageBase64 is 100×100, above the 5000-pixel limit: downscale it below 5000 pixels and send it again',
      fields: [{ path: 'imageBase64', message: 'too many pixels' }],
    });
  });

  it('refuses a first frame that does not decode', async () => {
    await expect(checkImage(await truncatedPng(), field, limits)).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: 'imageBase64 is a image/png that cannot be decoded (truncated or corrupt): send the original file again',
      fields: [{ path: 'imageBase64', message: 'undecodable image' }],
    });
  });
});

describe('checkImage, either way', () => {
  for (const check of [{ frames: 'all', maxPixels: 5_000, maxFrames: 4 }, { frames: 'first', maxPixels: 5_000 }] as const) {
    it(`refuses empty bytes and bytes that are not an image, naming where they came from (${check.frames})`, async () => {
      await expect(checkImage(Buffer.alloc(0), field, check)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'imageBase64 is empty (zero bytes): send the image file' });
      await expect(checkImage(NOT_AN_IMAGE, { alias: 'img-3' }, check)).rejects.toMatchObject({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringMatching(/^image img-3 is not a supported image \(looks like application\/pdf\): send one of image\/png, /),
        fields: [{ path: 'alias', message: 'not a supported image' }],
      });
    });
  }
});
