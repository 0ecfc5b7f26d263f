/**
 * The median height (px) of the bands of rows that hold ink in a greyscale
 * image: roughly the text's line height. Ink is any pixel far (> 64 levels)
 * from the background level (the histogram's mode). Undefined when no band
 * is found. Pure: `pixels` is one byte per pixel, row by row.
 */
export function estimateLineHeight(pixels: Uint8Array, width: number, height: number): number | undefined {
  const total = width * height;
  if (total === 0) return undefined;
  const histogram = new Uint32Array(256);
  for (let i = 0; i < total; i++) histogram[pixels[i]!]!++;
  let background = 0;
  for (let v = 1; v < 256; v++) if (histogram[v]! > histogram[background]!) background = v;
  const bands: number[] = [];
  let run = 0;
  for (let y = 0; y <= height; y++) {
    let ink = false;
    if (y < height) {
      const row = y * width;
      for (let x = 0; x < width && !ink; x++) ink = Math.abs(pixels[row + x]! - background) > 64;
    }
    if (ink) run++;
    else if (run > 0) {
      // Bands of one or two rows are rules, underlines or noise, not text.
      if (run >= 3) bands.push(run);
      run = 0;
    }
  }
  if (bands.length === 0) return undefined;
  bands.sort((a, b) => a - b);
  return bands[Math.floor(bands.length / 2)];
}
