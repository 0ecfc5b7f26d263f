import pg from 'pg';
import type { MediaItem, Surface } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';

/**
 * Every read this service makes of the gateway's media tables (DESIGN.md
 * lets the vision-router read them; only the gateway writes them). The
 * schema is configuration (GATEWAY_DB_SCHEMA): `gateway` in production, the
 * gateway-under-test's schema in tests. Blobs are the tenant's own (gateway
 * migration 1764460800004): a registration's bytes are the media_blobs row
 * with the same (tenant, sha256), so every join is on both. Hashes and bytes
 * stay inside the service; a MediaItem carries neither.
 */
export interface MediaScope {
  tenant: string;
  surface: Surface;
  chatKey: string;
}

export interface GatewayMediaReader {
  recent(scope: MediaScope, limit: number): Promise<MediaItem[]>;
  byMessage(scope: MediaScope, messageId: string): Promise<MediaItem | undefined>;
  byAlias(scope: MediaScope, alias: string): Promise<MediaItem | undefined>;
  /** The bytes behind an alias; never put them, or their hash, in an answer. */
  bytes(scope: MediaScope, alias: string): Promise<Buffer | undefined>;
}

function toItem(row: Record<string, unknown>): MediaItem {
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

export function gatewayMediaReader(db: Queryable, gatewaySchema: string): GatewayMediaReader {
  const schema = pg.escapeIdentifier(gatewaySchema);
  const item = `
    SELECT r.alias_no, r.surface, r.chat_key, r.message_id, r.reply_to_message_id, r.caption, r.registered_at,
           b.mime_type, b.byte_size, b.width, b.height
    FROM ${schema}.media_refs r JOIN ${schema}.media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256
    WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3`;
  const scoped = (scope: MediaScope) => [scope.tenant, scope.surface, scope.chatKey];
  return {
    async recent(scope, limit) {
      const { rows } = await db.query(`${item} ORDER BY r.alias_no DESC LIMIT $4`, [...scoped(scope), limit]);
      return rows.map(toItem);
    },
    async byMessage(scope, messageId) {
      const { rows } = await db.query(`${item} AND r.message_id = $4`, [...scoped(scope), messageId]);
      return rows[0] ? toItem(rows[0]) : undefined;
    },
    async byAlias(scope, alias) {
      const { rows } = await db.query(`${item} AND r.alias_no = $4`, [...scoped(scope), aliasNumber(alias)]);
      return rows[0] ? toItem(rows[0]) : undefined;
    },
    async bytes(scope, alias) {
      const { rows } = await db.query<{ bytes: Buffer }>(
        `SELECT b.bytes FROM ${schema}.media_refs r JOIN ${schema}.media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256
         WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.alias_no = $4`,
        [...scoped(scope), aliasNumber(alias)],
      );
      return rows[0]?.bytes;
    },
  };
}
