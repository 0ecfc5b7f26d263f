import { describe, expect, it } from 'vitest';
import type { MediaItem } from '@vouch/contracts';
import { canonicalJson, requestHash } from '../src/idempotency.js';
import { resolveMedia } from '../src/media/resolve-media.js';
import { bullJobId, parsePublicJobId, publicJobId } from '../src/job-ids.js';

const item = (n: number, messageId: string | null = null): MediaItem => ({
  alias: `img-${n}`,
  kind: 'image',
  mimeType: 'image/png',
  byteSize: 10,
  width: 1,
  height: 1,
  surface: 'telegram',
  chatKey: 'c',
  messageId,
  replyToMessageId: null,
  caption: null,
  registeredAt: '2026-11-30T00:00:00.000Z',
});

describe('resolveMedia', () => {
  const recent = [item(3), item(2, 'm2'), item(1)];
  it('prefers the replied-to image over an alias and the latest', () => {
    expect(resolveMedia({ recent, replyTo: item(2, 'm2'), byAlias: item(1), aliasRequested: 'img-1' })).toMatchObject({ ok: true, resolvedBy: 'reply_to', media: { alias: 'img-2' } });
  });
  it('takes an explicit alias before the latest', () => {
    expect(resolveMedia({ recent, replyTo: undefined, byAlias: item(1), aliasRequested: 'img-1' })).toMatchObject({ ok: true, resolvedBy: 'alias', media: { alias: 'img-1' } });
  });
  it('falls back to the latest and names the others', () => {
    expect(resolveMedia({ recent, replyTo: undefined, byAlias: undefined, aliasRequested: undefined })).toEqual({ ok: true, resolvedBy: 'latest', media: item(3), otherRecentAliases: ['img-2', 'img-1'] });
  });
  it('does not guess when a named alias is missing', () => {
    expect(resolveMedia({ recent, replyTo: undefined, byAlias: undefined, aliasRequested: 'img-7' })).toEqual({
      ok: false,
      reason: 'unknown_alias',
      message: 'no image img-7 in this chat: use one of the recent aliases: img-3, img-2, img-1',
    });
  });
  it('tells the user to send an image when the chat has none', () => {
    expect(resolveMedia({ recent: [], replyTo: undefined, byAlias: undefined, aliasRequested: undefined })).toMatchObject({ ok: false, reason: 'no_media' });
  });
});

describe('idempotency fingerprints', () => {
  it('ignore key order and undefined fields', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(requestHash('op', { a: 1, b: 2 })).toBe(requestHash('op', { b: 2, a: 1 }));
    expect(requestHash('op', { a: 1 })).not.toBe(requestHash('other', { a: 1 }));
  });
  it('differ between agents: one agent\'s stored answer is never another\'s', () => {
    expect(requestHash('board.claimCard', { waitSeconds: 0 }, 'worker-1')).toBe(requestHash('board.claimCard', { waitSeconds: 0 }, 'worker-1'));
    expect(requestHash('board.claimCard', { waitSeconds: 0 }, 'worker-1')).not.toBe(requestHash('board.claimCard', { waitSeconds: 0 }, 'worker-2'));
  });
});

describe('job ids', () => {
  it('derive a stable id from tenant, operation, Idempotency-Key and attempt', () => {
    const k1 = { key: 'k1', attempt: 'a1' };
    expect(bullJobId('acme', 'ledger.open', k1)).toBe(bullJobId('acme', 'ledger.open', { ...k1 }));
    expect(bullJobId('acme', 'ledger.open', k1)).not.toBe(bullJobId('globex', 'ledger.open', k1));
    expect(bullJobId('acme', 'ledger.open', k1)).not.toBe(bullJobId('acme', 'ledger.open', { key: 'k1', attempt: 'a2' }));
    expect(bullJobId('acme', 'ledger.open', undefined)).not.toBe(bullJobId('acme', 'ledger.open', undefined));
  });
  it('carry their queue in the public id', () => {
    expect(parsePublicJobId(publicJobId('ledger-critic', 'kabc'))).toEqual({ queue: 'ledger-critic', id: 'kabc' });
    expect(parsePublicJobId('nowhere.kabc')).toBeUndefined();
  });
});
