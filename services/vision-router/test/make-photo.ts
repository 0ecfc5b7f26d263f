import sharp from 'sharp';

/**
 * A photograph-like image: smooth colour fields with soft shapes and mild
 * grain, no text and no flat background. Deterministic (a fixed-seed
 * generator), so every run sees the same pixels.
 */
export async function makePhoto(width = 320, height = 240, seed = 7): Promise<Buffer> {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const sky = y < height * 0.45;
      const blob = Math.hypot(x - width * 0.62, y - height * 0.58) < height * 0.22;
      const grain = (random() - 0.5) * 18;
      const r = blob ? 150 + 40 * Math.sin(x / 9) : sky ? 90 + y * 0.4 : 60 + 50 * Math.sin(x / 23 + y / 31);
      const g = blob ? 90 + 30 * Math.cos(y / 11) : sky ? 140 + y * 0.3 : 110 + 40 * Math.cos(x / 17);
      const b = blob ? 70 : sky ? 200 - y * 0.2 : 60 + 30 * Math.sin(y / 13);
      pixels[i] = clamp(r + grain);
      pixels[i + 1] = clamp(g + grain);
      pixels[i + 2] = clamp(b + grain);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 88 }).toBuffer();
}

function clamp(v: number): number {
  return Math.max(0, Math.min(255, Math.round(v)));
}
