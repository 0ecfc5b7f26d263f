import sharp from 'sharp';
import type { Surface } from '@vouch/contracts';
import { mediaReader } from '@vouch/media';
import type { Queryable } from '@vouch/platform';
import { resolveMedia } from './resolve-media.js';

/** The fields of a vision request that name its image (vision.analyze, vision.evidence). */
export interface ImageRequest {
  surface?: Surface | undefined;
  chatKey?: string | undefined;
  alias?: string | undefined;
  replyToMessageId?: string | undefined;
  imageBase64?: string | undefined;
}

/**
 * Pixels of one frame of the image a vision request names, for its cost
 * (operation-costs.ts): an inline image's header, or the media row of the
 * image the vision-router will resolve in the chat, by the same order
 * (resolveMedia). Undefined when there is none to find: the vision-router
 * then answers 404 or 400 having decoded nothing. `maxPixels` caps what a
 * header may claim (a decompression bomb is refused before it is decoded).
 */
export async function imagePixels(db: Queryable, tenant: string, request: ImageRequest, maxPixels: number): Promise<number | undefined> {
  if (request.imageBase64 !== undefined) {
    try {
      // The header only: sharp reads the size without decoding the image.
      const { width, height } = await sharp(Buffer.from(request.imageBase64, 'base64')).metadata();
      return width && height ? Math.min(width * height, maxPixels) : undefined;
    } catch {
      return undefined;
    }
  }
  if (request.surface === undefined || request.chatKey === undefined) return undefined;
  const scope = { tenant, surface: request.surface, chatKey: request.chatKey };
  const media = mediaReader(db);
  const replyTo = request.replyToMessageId ? await media.byMessage(scope, request.replyToMessageId) : undefined;
  const byAlias = !replyTo && request.alias ? await media.byAlias(scope, request.alias) : undefined;
  // The latest image is wanted only when neither a reply nor an alias names one.
  const recent = !replyTo && !request.alias ? await media.recent(scope, 1) : [];
  const resolution = resolveMedia({ recent, replyTo, byAlias, aliasRequested: request.alias });
  return resolution.ok ? Math.min(resolution.media.width * resolution.media.height, maxPixels) : undefined;
}
