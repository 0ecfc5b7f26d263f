import { describe, expect, it } from 'vitest';
import { mediaItemFromRow, mediaTables } from '../src/media-reader.js';

describe('mediaItemFromRow', () => {
  const row = {
    alias_no: 3,
    surface: 'telegram',
    chat_key: 'chat-42',
    message_id: '7',
    reply_to_message_id: null,
    caption: null,
    registered_at: new Date('2025-01-02T03:04:05.678Z'),
    mime_type: 'image/png',
    byte_size: 1234,
    width: 640,
    height: 480,
  };

  it('answers a registration as the MediaItem the operations return: alias img-N, absent fields null, the time in ISO 8601', () => {
    expect(mediaItemFromRow(row)).toEqual({
      alias: 'img-3',
      kind: 'image',
      mimeType: 'image/png',
      byteSize: 1234,
      width: 640,
      height: 480,
      surface: 'telegram',
      chatKey: 'chat-42',
      messageId: '7',
      replyToMessageId: null,
      caption: null,
      registeredAt: '2025-01-02T03:04:05.678Z',
    });
  });

  it('leaves the hash and the bytes out, even when the row carries them', () => {
    const item = mediaItemFromRow({ ...row, sha256: Buffer.alloc(32), bytes: Buffer.from([1, 2, 3]) });
    expect(Object.keys(item)).not.toContain('sha256');
    expect(Object.keys(item)).not.toContain('bytes');
  });
});

describe('mediaTables', () => {
  it("reads the connection's schema without a name, and quotes a schema it is given", () => {
    expect(mediaTables()).toBe('media_refs r JOIN media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256');
    expect(mediaTables('gateway')).toBe('"gateway".media_refs r JOIN "gateway".media_blobs b ON b.tenant = r.tenant AND b.sha256 = r.sha256');
    expect(mediaTables('a"b')).toContain('"a""b".media_refs');
  });
});
