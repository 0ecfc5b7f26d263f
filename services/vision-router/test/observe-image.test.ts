import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { NATIVE_IMAGE_LIMITS } from '@vouch/contracts';
import { checkImage } from '@vouch/media';
import { nativeCopy, observeImage } from '../src/observe-image.js';
import { makePhoto } from './make-photo.js';
import { pngHeaderClaiming } from './bad-images.js';
import { renderText } from './render-text.js';

const MAX_PIXELS = 40_000_000;
const check = (bytes: Buffer) => checkImage(bytes, { field: 'imageBase64' }, { frames: 'first', maxPixels: MAX_PIXELS });

describe('image checks', () => {
  it('refuses a decompression bomb from its header, before decoding', async () => {
    await expect(check(pngHeaderClaiming(50_000, 50_000))).rejects.toMatchObject({ code: 'BAD_INPUT', fields: [{ path: 'imageBase64', message: 'too many pixels' }] });
  });

  it('refuses corrupt, truncated, zero-size and non-image bytes with 4xx errors', async () => {
    const png = await renderText({ text: 'truncated' });
    await expect(check(png.subarray(0, Math.floor(png.length / 2)))).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('truncated or corrupt') });
    const corrupt = Buffer.from(png);
    corrupt.fill(0x41, 60, 200);
    await expect(check(corrupt)).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(check(pngHeaderClaiming(0, 10))).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(check(Buffer.alloc(0))).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'imageBase64 is empty (zero bytes): send the image file' });
    await expect(check(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).rejects.toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('analyses the first frame of an animation with thousands of frames without decoding them all', async () => {
    const frames = 2000;
    // Noise keeps the encoder from merging identical frames.
    const built = await sharp({ create: { width: 8, height: 8 * frames, channels: 3, background: '#000000', noise: { type: 'gaussian', mean: 128, sigma: 40 }, pageHeight: 8 } }).gif().toBuffer();
    const image = await check(built);
    expect(image.frames).toBe(frames);
    expect([image.width, image.height]).toEqual([8, 8]);
    const observed = await observeImage(image, { native: false, maxPixels: MAX_PIXELS });
    expect(observed.frames).toBe(frames);
  });
});

describe('observation', () => {
  it('measures a text screenshot as likely text and a photograph as unlikely', async () => {
    const text = await observeImage(await check(await renderText({ text: 'Settings\nNetwork  Wi-Fi  Bluetooth\nAirplane mode: off', size: 24 })), { native: false, maxPixels: MAX_PIXELS });
    const photo = await observeImage(await check(await makePhoto()), { native: false, maxPixels: MAX_PIXELS });
    expect(text.textLikelihood).toBeGreaterThanOrEqual(0.5);
    expect(photo.textLikelihood).toBeLessThan(0.5);
    expect(text).toMatchObject({ format: 'png', exifOrientation: null, frames: 1, colour: { greyscale: true } });
    expect(photo).toMatchObject({ format: 'jpeg', width: 320, height: 240, hasAlpha: false, colour: { greyscale: false } });
    expect(photo.nativeImage).toBeUndefined();
  });

  it('reads EXIF orientation and alpha', async () => {
    const rotated = await sharp(await makePhoto(120, 80)).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    expect((await observeImage(await check(rotated), { native: false, maxPixels: MAX_PIXELS })).exifOrientation).toBe(6);
    const transparent = await sharp({ create: { width: 40, height: 30, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    expect(await observeImage(await check(transparent), { native: false, maxPixels: MAX_PIXELS })).toMatchObject({ hasAlpha: true, channels: 4 });
  });

  it('bounds the native copy to 256 KB and 1568 px on the long side, upright and without metadata', async () => {
    // A noisy 3000×2000 photo: large in pixels and hard to compress.
    const big = await sharp(await makePhoto(3000, 2000, 3)).withMetadata({ orientation: 6 }).jpeg({ quality: 100 }).toBuffer();
    expect(big.length).toBeGreaterThan(NATIVE_IMAGE_LIMITS.maxBytes);
    const copy = await nativeCopy(await check(big), MAX_PIXELS);
    expect(copy.byteSize).toBeLessThanOrEqual(NATIVE_IMAGE_LIMITS.maxBytes);
    expect(Buffer.from(copy.base64, 'base64').length).toBe(copy.byteSize);
    // EXIF 6 turns it upright: portrait, long side at the limit.
    expect([copy.width, copy.height]).toEqual([Math.round((2000 / 3000) * 1568), 1568]);
    const meta = await sharp(Buffer.from(copy.base64, 'base64')).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: copy.width, height: copy.height });
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    // A small image is not enlarged.
    const small = await nativeCopy(await check(await makePhoto(200, 100)), MAX_PIXELS);
    expect([small.width, small.height]).toEqual([200, 100]);
  });
});
