import { z } from 'zod';
import { text } from '../text.js';
import { defineOperation } from '../operation.js';
import { ChatKeySchema, IsoTimeSchema, MediaAliasSchema, MessageIdSchema, SurfaceSchema } from './common.js';

/** Largest image the gateway stores. A bigger one is a 413 before it is decoded. */
export const MEDIA_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The longest imageBase64 text an image of `maxBytes` may take: its base64
 * digits plus an eighth for whitespace. Line-wrapped base64 is allowed and
 * must not count against the image: a CRLF every 64 characters adds 1/32,
 * which a JSON body escapes to 1/16 ("\r\n" is four characters), so an eighth
 * covers any common wrapping with room left. The image's size is checked on
 * the decoded bytes.
 */
export function mediaBase64MaxLength(maxBytes: number): number {
  const digits = Math.ceil(maxBytes / 3) * 4;
  return digits + Math.ceil(digits / 8);
}

/** Image types the gateway accepts, sniffed from the bytes. */
export const MEDIA_MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif', 'image/tiff'] as const;

/** Where media lives: a tenant's surface and chat (the tenant comes from the API key). */
export const MediaScopeSchema = z.object({
  surface: SurfaceSchema,
  chatKey: ChatKeySchema,
});

/** What a caller may see of one registered image. Never a storage key, hash or path. */
export const MediaItemSchema = z.object({
  alias: MediaAliasSchema,
  kind: z.literal('image'),
  mimeType: z.enum(MEDIA_MIME_TYPES),
  byteSize: z.number().int().positive(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  surface: SurfaceSchema,
  chatKey: text(),
  messageId: text().nullable(),
  replyToMessageId: text().nullable(),
  caption: text().nullable(),
  registeredAt: IsoTimeSchema,
});
export type MediaItem = z.infer<typeof MediaItemSchema>;

export const mediaRegister = defineOperation({
  name: 'media.register',
  summary: 'Register an image sent in a chat',
  description:
    'Stores an image an agent gateway received under its chat scope and returns a public-safe alias (img-N) to refer to it. ' +
    'The same message registered twice returns the same alias. The image type is read from the bytes.',
  owner: { process: 'gateway' },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/media' },
  scope: 'media:write',
  input: MediaScopeSchema.extend({
    messageId: MessageIdSchema.optional().describe('The id of the message that carried the image; makes the registration idempotent.'),
    replyToMessageId: MessageIdSchema.optional().describe('The id of the message this one replies to.'),
    caption: text().max(4096).optional(),
    imageBase64: text()
      .min(1, 'imageBase64 must hold the image bytes, base64-encoded')
      .max(mediaBase64MaxLength(MEDIA_MAX_BYTES), `imageBase64 is longer than a ${MEDIA_MAX_BYTES}-byte image takes, even line-wrapped: downscale the image first`)
      .describe('The raw image file bytes, standard base64 without a data: prefix; line breaks and spaces are ignored.'),
  }).strict(),
  output: MediaItemSchema.extend({ alreadyRegistered: z.boolean() }),
  agentFacing: false,
  example: { surface: 'telegram', chatKey: 'chat-42', messageId: '7', caption: 'the router label', imageBase64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' },
  errors: {
    409: 'The message id already carries a different image in this chat.',
    413: 'The decoded image is larger than the gateway\'s media limit.',
    415: 'The bytes are not a supported image type (PNG, JPEG, WebP, GIF, AVIF, TIFF).',
    429: 'Too many large uploads are in flight: retry after `Retry-After` seconds.',
  },
});

export const mediaRecent = defineOperation({
  name: 'media.recent',
  summary: 'List recent images in a chat',
  description:
    'Lists the images registered in this chat, newest first, with their aliases (img-N), sizes and the messages that carried them. ' +
    'Use an alias from here to refer to an image; never guess a file path.',
  owner: { process: 'gateway' },
  mode: 'rpc',
  http: { method: 'GET', path: '/v1/media/recent' },
  scope: 'media:read',
  input: MediaScopeSchema.extend({
    limit: z.coerce.number().int().min(1).max(100).default(10),
  }).strict(),
  output: z.object({ items: z.array(MediaItemSchema) }),
  agentFacing: true,
  example: { surface: 'telegram', chatKey: 'chat-42', limit: 5 },
});

/** How a media reference was resolved, in the order resolution tries them. */
export const MediaResolutionSchema = z.enum(['reply_to', 'alias', 'latest']);

export const mediaResolve = defineOperation({
  name: 'media.resolve',
  summary: 'Resolve which image a request is about',
  description:
    'Picks the image a request refers to within this chat: the image in the replied-to message first, then an explicit alias, ' +
    'then the latest image in the chat. Fails with the chat\'s recent aliases when there is no image to pick.',
  owner: { process: 'gateway' },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/media/resolve' },
  scope: 'media:read',
  input: MediaScopeSchema.extend({
    alias: MediaAliasSchema.optional(),
    replyToMessageId: MessageIdSchema.optional(),
  }).strict(),
  output: z.object({
    media: MediaItemSchema,
    resolvedBy: MediaResolutionSchema,
    /** Other recent aliases in the chat when the pick was "latest": the caller may confirm or choose another. */
    otherRecentAliases: z.array(MediaAliasSchema),
  }),
  agentFacing: true,
  example: { surface: 'telegram', chatKey: 'chat-42', alias: 'img-1' },
  errors: { 404: 'The chat has no image to pick, or none under that alias or reply: `details.recentAliases` lists the chat\'s images.' },
});
