// Registration: the gateway's writes to its media tables. Registered media is read with @vouch/media's mediaReader, which the vision-router shares.
import type { MediaItem } from '@vouch/contracts';
import { MEDIA_ITEM_COLUMNS, mediaItemFromRow, mediaTables, type CheckedImage, type MediaScope } from '@vouch/media';
import { withTransaction, type Pool, type Queryable } from '@vouch/platform';

export interface NewMediaRef {
  messageId?: string | undefined;
  replyToMessageId?: string | undefined;
  caption?: string | undefined;
}

/** A registration as a MediaItem, with its hash to tell a repeat of the same bytes from a conflict. */
const SELECT_ITEM = `SELECT ${MEDIA_ITEM_COLUMNS}, b.sha256 FROM ${mediaTables()}`;

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
        const item = mediaItemFromRow(existing);
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
    return { kind: 'registered', item: mediaItemFromRow(rows[0]!) };
  });
}
