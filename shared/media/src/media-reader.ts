import pg from 'pg';
import type { MediaItem, Surface } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';

/** A chat scope inside a tenant: every read of media is confined to one. */
export interface MediaScope {
  tenant: string;
  surface: Surface;
  chatKey: string;
}

/**
 * Every read of the gateway's media tables. Only the gateway writes them;
 * the vision-router may read them (docs/architecture.md, "Data"). Blobs are
 * the tenant's own (gateway migration 1764460800004): a registration's bytes
 * are the media_blobs row with the same (tenant, sha256), so every join is on
 * both. Hashes and bytes stay inside the services; a MediaItem carries neither.
 */
export interface MediaReader {
  /** The scope's media, newest first. */
  recent(scope: MediaScope, limit: number): Promise<MediaItem[]>;
  /** The image registered with a message in the scope, if any. */
  byMessage(scope: MediaScope, messageId: string): Promise<MediaItem | undefined>;
  /** The image with an alias (img-N) in the scope, if any. */
  byAlias(scope: MediaScope, alias: string): Promise<MediaItem | undefined>;
  /** The bytes behind an alias, for the services that analyse the image; never put them, or their hash, in an answer. */
  bytes(scope: MediaScope, alias: string): Promise<Buffer | undefined>;
}

/** The columns mediaItemFromRow reads, from mediaTables' registration `r` and blob `b`. */
export const MEDIA_ITEM_COLUMNS =
  'r.alias_no, r.surface, r.chat_key, r.message_id, r.reply_to_message_id, r.caption, r.registered_at, b.mime_type, b.byte_size, b.width, b.height';

/**
 * The registrations `r` joined to their tenant's blobs `b`, in `schema`, or
 * without one in the schema the connection's search_path names (the
 * gateway's own pool).
 */
export function mediaTables(schema?: string): string {
  const prefix = schema === undefined ? '' : `${pg.escapeIdentifier(schema)}.`;
  return `${prefix}media_refs r JOIN ${prefix}media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256`;
}

/** A row of MEDIA_ITEM_COLUMNS as the MediaItem the operations answer with. */
export function mediaItemFromRow(row: Record<string, unknown>): MediaItem {
  return {
    alias: `img-${row.alias_no as number}`,
    kind: 'image',
    mimeType: row.mime_type as MediaItem['mimeType'],
    byteSize: row.byte_size as number,
    width: row.width as number,
    height: row.height as number,
    surface: row.surface as Surface,
    chatKey: row.chat_key as string,
    messageId: (row.message_id as string | null) ?? null,
    replyToMessageId: (row.reply_to_message_id as string | null) ?? null,
    caption: (row.caption as string | null) ?? null,
    registeredAt: (row.registered_at as Date).toISOString(),
  };
}

function aliasNumber(alias: string): number {
  return Number(alias.replace(/^img-/, ''));
}

/**
 * The media reader over `db`: the gateway reads its own schema through its
 * pool's search_path and passes no `schema`; the vision-router names the
 * gateway's (GATEWAY_DB_SCHEMA).
 */
export function mediaReader(db: Queryable, schema?: string): MediaReader {
  const tables = mediaTables(schema);
  const inScope = `WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3`;
  const item = `SELECT ${MEDIA_ITEM_COLUMNS} FROM ${tables} ${inScope}`;
  const scoped = (scope: MediaScope) => [scope.tenant, scope.surface, scope.chatKey];
  return {
    async recent(scope, limit) {
      const { rows } = await db.query(`${item} ORDER BY r.alias_no DESC LIMIT $4`, [...scoped(scope), limit]);
      return rows.map(mediaItemFromRow);
    },
    async byMessage(scope, messageId) {
      const { rows } = await db.query(`${item} AND r.message_id = $4`, [...scoped(scope), messageId]);
      return rows[0] ? mediaItemFromRow(rows[0]) : undefined;
    },
    async byAlias(scope, alias) {
      const { rows } = await db.query(`${item} AND r.alias_no = $4`, [...scoped(scope), aliasNumber(alias)]);
      return rows[0] ? mediaItemFromRow(rows[0]) : undefined;
    },
    async bytes(scope, alias) {
      const { rows } = await db.query<{ bytes: Buffer }>(`SELECT b.bytes FROM ${tables} ${inScope} AND r.alias_no = $4`, [...scoped(scope), aliasNumber(alias)]);
      return rows[0]?.bytes;
    },
  };
}
