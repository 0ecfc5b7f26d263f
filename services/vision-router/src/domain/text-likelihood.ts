/**
 * An estimate (0–1) of whether a greyscale image holds text, from two
 * things printed and on-screen text has and photographs mostly lack: a
 * dominant flat background (most pixels near one level) and many sharp
 * light/dark transitions along rows (strokes). It is a cue for planning, not
 * a reading; OCR decides what the text is. Pure: `pixels` is one byte per
 * pixel, row by row.
 */
export function estimateTextLikelihood(pixels: Uint8Array, width: number, height: number): number {
  const total = width * height;
  if (total === 0 || width < 2) return 0;
  const histogram = new Uint32Array(256);
  for (let i = 0; i < total; i++) histogram[pixels[i]!]!++;
  let mode = 0;
  for (let v = 1; v < 256; v++) if (histogram[v]! > histogram[mode]!) mode = v;
  let background = 0;
  for (let v = Math.max(0, mode - 24); v <= Math.min(255, mode + 24); v++) background += histogram[v]!;
  const backgroundShare = background / total;

  // Strong transitions per row, and the share of rows that have any: text
  // comes in lines, so strokes cluster in bands of rows.
  let transitions = 0;
  let rowsWithStrokes = 0;
  for (let y = 0; y < height; y++) {
    let inRow = 0;
    const row = y * width;
    for (let x = 1; x < width; x++) if (Math.abs(pixels[row + x]! - pixels[row + x - 1]!) > 64) inRow++;
    transitions += inRow;
    if (inRow >= 4) rowsWithStrokes++;
  }
  const density = transitions / total;
  const strokeRows = rowsWithStrokes / height;
  // Text: background share ≥ 0.5, transition density 0.01–0.25, strokes in 10–95 % of rows.
  const flat = clamp01((backgroundShare - 0.35) / 0.35);
  const strokes = density < 0.004 ? density / 0.004 : density > 0.3 ? clamp01(1 - (density - 0.3) / 0.2) : 1;
  const banded = strokeRows < 0.05 ? strokeRows / 0.05 : 1;
  return Math.round(flat * strokes * banded * 100) / 100;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
