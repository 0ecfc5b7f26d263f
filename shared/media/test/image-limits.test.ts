import { describe, expect, it } from 'vitest';
import { imageLimitProblem } from '../src/image-limits.js';

const limits = { maxPixels: 50_000_000, maxFrames: 1_000 };

describe('imageLimitProblem', () => {
  it('lets an image within both limits through', () => {
    expect(imageLimitProblem({ width: 8064, frameHeight: 6048, frames: 1 }, limits)).toBeUndefined();
    expect(imageLimitProblem({ width: 500, frameHeight: 100, frames: 1_000 }, limits)).toBeUndefined();
  });

  it('counts the pixels of every frame, and frames before pixels', () => {
    expect(imageLimitProblem({ width: 10_000, frameHeight: 10_000, frames: 1 }, limits)).toBe(
      'imageBase64 is 10000×10000 = 100000000 pixels, above the 50000000-pixel limit: downscale it first',
    );
    expect(imageLimitProblem({ width: 1_000, frameHeight: 1_000, frames: 51 }, limits)).toBe(
      'imageBase64 is 51 frames of 1000×1000 = 51000000 pixels in all, above the 50000000-pixel limit: send fewer or smaller frames',
    );
    expect(imageLimitProblem({ width: 1, frameHeight: 1, frames: 450_000 }, limits)).toBe(
      'imageBase64 is an animation of 450000 frames, above the 1000-frame limit: send a still image or a shorter animation',
    );
  });

  it('names the image it was given', () => {
    expect(imageLimitProblem({ width: 1, frameHeight: 1, frames: 1_001 }, limits, 'image img-3')).toBe(
      'image img-3 is an animation of 1001 frames, above the 1000-frame limit: send a still image or a shorter animation',
    );
  });
});
