import { createHash } from 'node:crypto';
import { BadInputError, ConflictError, NotFoundError, mediaRecent, mediaRegister, mediaResolve, VouchError, ERROR_CODES } from '@vouch/contracts';
import { decodeBase64Image, imageChecker, mediaReader, type ImageCheckOptions } from '@vouch/media';
import type { Pool } from '@vouch/platform';
import { gatewayHandler, type GatewayHandler } from '../gateway-handler.js';
import { blobStored, registerMedia } from './media-store.js';
import { resolveMedia } from './resolve-media.js';

/** How many recent images resolution considers and errors name. */
const RESOLVE_WINDOW = 10;

/** What registration holds an image to: its size, then its pixels and frames, decoded a few at a time. */
export interface MediaOptions extends ImageCheckOptions {
  maxBytes: number;
}

/** The gateway's scoped-media operations: register, recent, resolve. */
export function mediaHandlers(pool: Pool, opts: MediaOptions): GatewayHandler[] {
  const checkImage = imageChecker(opts);
  const media = mediaReader(pool);
  return [
    gatewayHandler(mediaRegister, async (input, { caller }) => {
      const bytes = decodeBase64Image(input.imageBase64);
      if (bytes.length === 0) throw new BadInputError('imageBase64 holds no bytes: send the image file, base64-encoded', [{ path: 'imageBase64', message: 'empty' }]);
      if (bytes.length > opts.maxBytes) {
        throw new VouchError(ERROR_CODES.payloadTooLarge, `the image is ${bytes.length} bytes, above the ${opts.maxBytes}-byte limit: downscale it first`, {
          fields: [{ path: 'imageBase64', message: 'too large' }],
        });
      }
      const sha256 = createHash('sha256').update(bytes).digest();
      // Bytes the tenant already stored were checked then, and are not sent to Postgres again.
      // Only the tenant's own copy counts, so bytes another tenant stored cost what new bytes cost.
      const stored = await blobStored(pool, caller.tenant, sha256);
      const blob = stored ? undefined : { bytes, image: await checkImage(bytes) };
      const scope = { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey };
      const outcome = await registerMedia(pool, scope, { messageId: input.messageId, replyToMessageId: input.replyToMessageId, caption: input.caption }, sha256, blob);
      if (outcome.kind === 'message_conflict') {
        throw new ConflictError(`message ${input.messageId} in this chat already carries ${outcome.existing.alias}, a different image: register each image with its own message id`, {
          alias: outcome.existing.alias,
        });
      }
      return { ...outcome.item, alreadyRegistered: outcome.kind === 'already_registered' };
    }),
    gatewayHandler(mediaRecent, async (input, { caller }) => ({
      items: await media.recent({ tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey }, input.limit),
    })),
    gatewayHandler(mediaResolve, async (input, { caller }) => {
      const scope = { tenant: caller.tenant, surface: input.surface, chatKey: input.chatKey };
      const [recent, replyTo, byAlias] = await Promise.all([
        media.recent(scope, RESOLVE_WINDOW),
        input.replyToMessageId ? media.byMessage(scope, input.replyToMessageId) : undefined,
        input.alias ? media.byAlias(scope, input.alias) : undefined,
      ]);
      const resolution = resolveMedia({ recent, replyTo, byAlias, aliasRequested: input.alias });
      if (!resolution.ok) {
        throw new NotFoundError(resolution.message, { reason: resolution.reason, recentAliases: recent.map((m) => m.alias) });
      }
      return { media: resolution.media, resolvedBy: resolution.resolvedBy, otherRecentAliases: resolution.otherRecentAliases };
    }),
  ];
}
