/** What registration lets an image decode to: the vision-router decodes what the gateway stored. */
export interface ImageLimits {
  /** Most pixels, all frames together. */
  maxPixels: number;
  /** Most frames (pages) of an animation or multi-page file. */
  maxFrames: number;
}

/** An image's header: the size of one frame and how many frames. */
export interface ImageHeader {
  width: number;
  frameHeight: number;
  frames: number;
}

/**
 * Why an image's header puts it past the limits, or undefined when it is
 * within them; `name` is how the message names the image. Decided from the
 * header alone, before any pixel is decoded: a 10000×10000 PNG can be 100 KB
 * and inflate to 300 MB, and a 10 MB GIF can hold 450,000 frames.
 */
export function imageLimitProblem(header: ImageHeader, limits: ImageLimits, name = 'imageBase64'): string | undefined {
  const { width, frameHeight, frames } = header;
  if (frames > limits.maxFrames) {
    return `${name} is an animation of ${frames} frames, above the ${limits.maxFrames}-frame limit: send a still image or a shorter animation`;
  }
  const pixels = width * frameHeight * frames;
  if (pixels <= limits.maxPixels) return undefined;
  if (frames === 1) return `${name} is ${width}×${frameHeight} = ${pixels} pixels, above the ${limits.maxPixels}-pixel limit: downscale it first`;
  return `${name} is ${frames} frames of ${width}×${frameHeight} = ${pixels} pixels in all, above the ${limits.maxPixels}-pixel limit: send fewer or smaller frames`;
}
