/**
 * An attempt suspended after a Redis outage that may have followed its add
 * (state 'retry'): the next request with the key takes the same attempt over
 * at once, so its job id is the first request's, and a different body is
 * still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL } from '@vouch/testing';
import { claimIdempotencyKey, readIdempotencyKey, releaseIdempotencyKey, suspendIdempotencyKey } from '../src/idempotency.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

describe('a suspended Idempotency-Key attempt', () => {
  let gw: GatewayUnderTest;
  let pool: Pool;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('idem_suspend');
    pool = createPool({ url: TEST_DATABASE_URL, schema: gw.schema, applicationName: 'idem-suspend', max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await gw?.stop();
  });

  it('is taken over at once under the same attempt; a released one gets a new attempt', async () => {
    const first = await claimIdempotencyKey(pool, 'acme', 'k1', 'ledger.recordEvidence', 'hash-a');
    expect(first.kind).toBe('new');
    const attempt = (first as { attempt: string }).attempt;
    // While pending, a duplicate waits on it.
    expect(await claimIdempotencyKey(pool, 'acme', 'k1', 'ledger.recordEvidence', 'hash-a')).toEqual({ kind: 'pending', attempt });

    await suspendIdempotencyKey(pool, 'acme', 'k1', attempt);
    expect(await readIdempotencyKey(pool, 'acme', 'k1')).toEqual({ state: 'retry', attempt });
    expect(await claimIdempotencyKey(pool, 'acme', 'k1', 'ledger.recordEvidence', 'hash-b')).toEqual({ kind: 'mismatch', operation: 'ledger.recordEvidence' });
    expect(await claimIdempotencyKey(pool, 'acme', 'k1', 'ledger.recordEvidence', 'hash-a')).toEqual({ kind: 'new', attempt });
    expect(await readIdempotencyKey(pool, 'acme', 'k1')).toEqual({ state: 'pending', attempt });

    // Suspending an attempt that is no longer the key's changes nothing.
    await releaseIdempotencyKey(pool, 'acme', 'k1', attempt);
    const second = await claimIdempotencyKey(pool, 'acme', 'k1', 'ledger.recordEvidence', 'hash-a');
    expect(second.kind).toBe('new');
    expect((second as { attempt: string }).attempt).not.toBe(attempt);
    await suspendIdempotencyKey(pool, 'acme', 'k1', attempt);
    expect(await readIdempotencyKey(pool, 'acme', 'k1')).toEqual({ state: 'pending', attempt: (second as { attempt: string }).attempt });
  });
});
