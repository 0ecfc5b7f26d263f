import { ConflictError, NotFoundError, mediaRecent, mediaRegister, mediaResolve, MEDIA_MAX_BYTES, VouchError, ERROR_CODES } from '@vouch/contracts';
import type { Pool } from '@vouch/platform';
import { gatewayHandler, type GatewayHandler } from '../gateway-handler.js';
import { mediaByAlias, mediaByMessage, recentMedia, registerMedia } from './media-store.js';
import { resolveMedia } from './resolve-media.js';
import { decodeBase64Image, sniffImage } from './sniff-image.js';

/** How many recent images resolution considers and errors name. */
const RESOLVE_WINDOW = 10;

/** The gateway's scoped-media operations: register, recent, resolve. */
export function mediaHandlers(pool: Pool, opts: { maxBytes?: number } = {}): GatewayHandler[] {
  const maxBytes = opts.maxBytes ?? MEDIA_MAX_BYTES;
  return [
    gatewayHandler(mediaRegister, async (input, { caller }) => {
      const bytes = decodeBase64Image(input.imageBase64);
      if (bytes.length > maxBytes) {
        throw new VouchError(ERROR_CODES.payloadTooLarge, `the image is ${bytes.length} bytes, above the ${maxBytes}-byte limit: downscale it first`, {
          fields: [{ path: 'imageBase64', message: 'too large' }],
        });
      }
      const image = await sniffImage(bytes);
      const scope = { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey };
      const outcome = await registerMedia(pool, scope, { messageId: input.messageId, replyToMessageId: input.replyToMessageId, caption: input.caption }, bytes, image);
      if (outcome.kind === 'message_conflict') {
        throw new ConflictError(`message ${input.messageId} in this chat already carries ${outcome.existing.alias}, a different image: register each image with its own message id`, {
          alias: outcome.existing.alias,
        });
      }
      return { ...outcome.item, alreadyRegistered: outcome.kind === 'already_registered' };
    }),
    gatewayHandler(mediaRecent, async (input, { caller }) => ({
      items: await recentMedia(pool, { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey }, input.limit),
    })),
    gatewayHandler(mediaResolve, async (input, { caller }) => {
      const scope = { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey };
      const [recent, replyTo, byAlias] = await Promise.all([
        recentMedia(pool, scope, RESOLVE_WINDOW),
        input.replyToMessageId ? mediaByMessage(pool, scope, input.replyToMessageId) : undefined,
        input.alias ? mediaByAlias(pool, scope, input.alias) : undefined,
      ]);
      const resolution = resolveMedia({ recent, replyTo, byAlias, aliasRequested: input.alias });
      if (!resolution.ok) {
        throw new NotFoundError(resolution.message, { reason: resolution.reason, recentAliases: recent.map((m) => m.alias) });
      }
      return { media: resolution.media, resolvedBy: resolution.resolvedBy, otherRecentAliases: resolution.otherRecentAliases };
    }),
  ];
}
