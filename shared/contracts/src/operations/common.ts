import { z } from 'zod';
import { text } from '../text.js';
import { ERROR_CODES } from '../errors.js';

/** The error codes as a schema, for outputs that carry a failure. */
export const ErrorCodeSchema = z.enum(Object.values(ERROR_CODES) as [string, ...string[]]);

/** The surfaces agent gateways call from. */
export const SurfaceSchema = z.enum(['telegram', 'tui', 'api']);
export type Surface = z.infer<typeof SurfaceSchema>;

/** A chat, TUI session or API session key: opaque to vouch, bounded and printable. */
export const ChatKeySchema = text()
  .min(1, 'chatKey must not be empty: pass the chat id or session key the media belongs to')
  .max(200, 'chatKey is at most 200 characters')
  .regex(/^[\x21-\x7e]+$/, 'chatKey must be printable ASCII with no spaces');

/** A message id on the surface (Telegram message_id, a TUI turn id). */
export const MessageIdSchema = text().min(1).max(100).regex(/^[\x21-\x7e]+$/, 'message ids are printable ASCII with no spaces');

/** A public-safe media alias, e.g. `img-3`. */
export const MediaAliasSchema = text().regex(/^img-[1-9][0-9]{0,8}$/, 'a media alias looks like img-3: list them with media.recent');

/** ISO-8601 timestamp with offset, as every API returns times. */
export const IsoTimeSchema = z.iso.datetime({ offset: true });

/** Up to this many seconds an operation's caller may ask the gateway to wait. */
export const MAX_WAIT_SECONDS = 60;
