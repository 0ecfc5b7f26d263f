import type { MediaItem } from './operations/media.js';

/** What the resolver may look at: the scope's media, newest first, and the request's hints. */
export interface MediaResolutionInput {
  recent: readonly MediaItem[];
  /** The image carried by the replied-to message, when the caller replied to one. */
  replyTo: MediaItem | undefined;
  /** The image named by an explicit alias, when one was given and exists in the scope. */
  byAlias: MediaItem | undefined;
  aliasRequested: string | undefined;
}

export type MediaResolution =
  | { ok: true; media: MediaItem; resolvedBy: 'reply_to' | 'alias' | 'latest'; otherRecentAliases: string[] }
  | { ok: false; reason: 'unknown_alias' | 'no_media'; message: string };

/**
 * The resolution order every surface shares (README, "Scoped media"): the replied-to message's
 * image first, an explicit alias second, the latest image in the chat third;
 * otherwise an error that says what to do and names the aliases that exist.
 */
export function resolveMedia(input: MediaResolutionInput): MediaResolution {
  const aliases = input.recent.map((m) => m.alias);
  if (input.replyTo) return { ok: true, media: input.replyTo, resolvedBy: 'reply_to', otherRecentAliases: [] };
  if (input.aliasRequested) {
    if (input.byAlias) return { ok: true, media: input.byAlias, resolvedBy: 'alias', otherRecentAliases: [] };
    return {
      ok: false,
      reason: 'unknown_alias',
      message: `no image ${input.aliasRequested} in this chat: ${aliases.length ? `use one of the recent aliases: ${aliases.join(', ')}` : 'send an image or reply to one first'}`,
    };
  }
  const [latest, ...others] = input.recent;
  if (latest) return { ok: true, media: latest, resolvedBy: 'latest', otherRecentAliases: others.map((m) => m.alias) };
  return { ok: false, reason: 'no_media', message: 'no image in this chat: send an image or reply to one' };
}
