import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { makeJpeg, makePng, makeWebp, NOT_AN_IMAGE } from '../src/index.js';

describe('image fixtures', () => {
  it('makes a PNG of the requested size and colour', async () => {
    const png = await makePng({ width: 32, height: 16, color: '#ff0000' });
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const meta = await sharp(png).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: 'png', width: 32, height: 16 });
    const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 4)]).toEqual([255, 0, 0, 255]);
  });

  it('makes a JPEG and a WebP', async () => {
    const jpeg = await makeJpeg({ width: 20, height: 10, color: { r: 0, g: 0, b: 255 } });
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect((await sharp(jpeg).metadata()).format).toBe('jpeg');

    const webp = await makeWebp({ width: 8, height: 8 });
    expect(webp.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(webp.subarray(8, 12).toString('latin1')).toBe('WEBP');
    const meta = await sharp(webp).metadata();
    expect({ format: meta.format, width: meta.width }).toEqual({ format: 'webp', width: 8 });
  });

  it('NOT_AN_IMAGE is rejected by sharp', async () => {
    expect(NOT_AN_IMAGE.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await expect(sharp(NOT_AN_IMAGE).metadata()).rejects.toThrow(/unsupported image format/i);
  });
});
