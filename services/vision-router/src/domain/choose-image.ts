import type { MediaItem } from '@vouch/contracts';

/**
 * Whether "the latest image" is a guess: when other images arrived within
 * `windowMs` of the latest one (an album, a burst of screenshots) nothing
 * says which the user means, so the caller must ask. Older images do not
 * compete: a new image sent after an old one is the one a question is about.
 * Returns the competing images, newest first, or [] when the latest is clear.
 */
export function competingImages(recent: readonly MediaItem[], windowMs: number): MediaItem[] {
  const [latest] = recent;
  if (!latest) return [];
  const latestAt = Date.parse(latest.registeredAt);
  const close = recent.filter((m) => latestAt - Date.parse(m.registeredAt) <= windowMs);
  return close.length > 1 ? close : [];
}

/** The question a choose_image answer asks. */
export function chooseImageQuestion(candidates: readonly MediaItem[]): string {
  const list = candidates.map((m) => (m.caption ? `${m.alias} ("${m.caption.slice(0, 60)}")` : m.alias)).join(', ');
  return `${candidates.length} images arrived together in this chat: ${list}. Which one do you mean? Call again with alias, or with replyToMessageId of the message that carried it.`;
}
