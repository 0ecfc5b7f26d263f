import type { MediaItem, Surface } from '@vouch/contracts';
import { withTransaction, type Pool, type Queryable } from '@vouch/platform';
import type { CheckedImage } from './check-image.js';

/** A chat scope inside a tenant. */
export interface MediaScope {
  tenant: string;
  surface: Surface;
  chatKey: string;
}

export interface NewMediaRef {
  messageId?: string | undefined;
  replyToMessageId?: string | undefined;
  caption?: string | undefined;
}

const SELECT_ITEM = `
  SELECT r.alias_no, r.surface, r.chat_key, r.message_id, r.reply_to_message_id, r.caption, r.registered_at,
         b.mime_type, b.byte_size, b.width, b.height, b.sha256
  FROM media_refs r JOIN media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256`;

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

export type RegisterOutcome =
  | { kind: 'registered'; item: MediaItem }
  | { kind: 'already_registered'; item: MediaItem }
  /** The message id is taken in this scope by other bytes. */
  | { kind: 'message_conflict'; existing: MediaItem };

/** Whether the tenant already stored these bytes. Another tenant's copy does not count: tenants never share blobs. */
export async function blobStored(db: Queryable, tenant: string, sha256: Buffer): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM media_blobs WHERE tenant = $1 AND sha256 = $2`, [tenant, sha256]);
  return rows.length > 0;
}

/** Bytes to store with a registration, when the tenant does not hold them yet. */
export interface NewBlob {
  bytes: Buffer;
  image: CheckedImage;
}

/**
 * Registers the image in the scope under the next alias, in one transaction,
 * storing its bytes when `blob` carries them (the tenant's first copy;
 * content-addressed by SHA-256 within the tenant). Registering the same
 * message again returns its existing alias, and a refused message stores
 * nothing.
 */
export async function registerMedia(pool: Pool, scope: MediaScope, ref: NewMediaRef, sha256: Buffer, blob: NewBlob | undefined): Promise<RegisterOutcome> {
  return withTransaction(pool, async (tx) => {
    // Locks the scope row: concurrent registrations in one chat take turns here.
    const { rows: scopeRows } = await tx.query<{ next_alias: number }>(
      `INSERT INTO media_scopes (tenant, surface, chat_key) VALUES ($1, $2, $3)
       ON CONFLICT (tenant, surface, chat_key) DO UPDATE SET next_alias = media_scopes.next_alias
       RETURNING next_alias`,
      [scope.tenant, scope.surface, scope.chatKey],
    );
    if (ref.messageId) {
      const { rows } = await tx.query(`${SELECT_ITEM} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.message_id = $4`, [
        scope.tenant,
        scope.surface,
        scope.chatKey,
        ref.messageId,
      ]);
      const existing = rows[0];
      if (existing) {
        const item = toItem(existing);
        return (existing.sha256 as Buffer).equals(sha256) ? { kind: 'already_registered', item } : { kind: 'message_conflict', existing: item };
      }
    }
    if (blob) {
      await tx.query(
        `INSERT INTO media_blobs (tenant, sha256, mime_type, byte_size, width, height, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, sha256) DO NOTHING`,
        [scope.tenant, sha256, blob.image.mimeType, blob.bytes.length, blob.image.width, blob.image.height, blob.bytes],
      );
    }
    const aliasNo = scopeRows[0]!.next_alias;
    await tx.query(`UPDATE media_scopes SET next_alias = next_alias + 1 WHERE tenant = $1 AND surface = $2 AND chat_key = $3`, [scope.tenant, scope.surface, scope.chatKey]);
    await tx.query(
      `INSERT INTO media_refs (tenant, surface, chat_key, alias_no, sha256, message_id, reply_to_message_id, caption) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [scope.tenant, scope.surface, scope.chatKey, aliasNo, sha256, ref.messageId ?? null, ref.replyToMessageId ?? null, ref.caption ?? null],
    );
    const { rows } = await tx.query(`${SELECT_ITEM} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.alias_no = $4`, [
      scope.tenant,
      scope.surface,
      scope.chatKey,
      aliasNo,
    ]);
    return { kind: 'registered', item: toItem(rows[0]!) };
  });
}

/** The scope's media, newest first. */
export async function recentMedia(db: Queryable, scope: MediaScope, limit: number): Promise<MediaItem[]> {
  const { rows } = await db.query(`${SELECT_ITEM} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 ORDER BY r.alias_no DESC LIMIT $4`, [
    scope.tenant,
    scope.surface,
    scope.chatKey,
    limit,
  ]);
  return rows.map(toItem);
}

/** The image registered with a message in the scope, if any. */
export async function mediaByMessage(db: Queryable, scope: MediaScope, messageId: string): Promise<MediaItem | undefined> {
  const { rows } = await db.query(`${SELECT_ITEM} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.message_id = $4`, [
    scope.tenant,
    scope.surface,
    scope.chatKey,
    messageId,
  ]);
  return rows[0] ? toItem(rows[0]) : undefined;
}

/** The image with an alias in the scope, if any. */
export async function mediaByAlias(db: Queryable, scope: MediaScope, alias: string): Promise<MediaItem | undefined> {
  const aliasNo = Number(alias.replace(/^img-/, ''));
  const { rows } = await db.query(`${SELECT_ITEM} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.alias_no = $4`, [
    scope.tenant,
    scope.surface,
    scope.chatKey,
    aliasNo,
  ]);
  return rows[0] ? toItem(rows[0]) : undefined;
}

/**
 * The bytes behind an alias, for services that analyse the image (the
 * vision-router reads them). Stays inside the services: never put it in a response.
 */
export async function mediaBytes(db: Queryable, scope: MediaScope, alias: string): Promise<{ item: MediaItem; bytes: Buffer } | undefined> {
  const aliasNo = Number(alias.replace(/^img-/, ''));
  const { rows } = await db.query(`${SELECT_ITEM.replace('b.sha256', 'b.sha256, b.bytes')} WHERE r.tenant = $1 AND r.surface = $2 AND r.chat_key = $3 AND r.alias_no = $4`, [
    scope.tenant,
    scope.surface,
    scope.chatKey,
    aliasNo,
  ]);
  return rows[0] ? { item: toItem(rows[0]), bytes: rows[0].bytes as Buffer } : undefined;
}
