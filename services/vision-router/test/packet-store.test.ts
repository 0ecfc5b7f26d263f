import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvidencePacket } from '@vouch/contracts';
import { createPool, runMigrations, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, useTestSchema } from '@vouch/testing';
import type { LadderOutcome } from '../src/domain/run-ladder.js';
import { cacheEvidence, cachedEvidence, countPackets, packetById, packetIdFor, pruneOldEvidence, savePacket } from '../src/packet-store.js';
import { MIGRATIONS_DIR } from '../src/vision-router-service.js';

const packet = (tenant: string, jobId: string, summary: string) => ({ packetId: packetIdFor(tenant, jobId), summary }) as unknown as EvidencePacket;
const OUTCOME = { stages: [], evidence: {}, coverage: { met: true, unmet: [], notes: [] }, failures: [] } as LadderOutcome;

describe('the packet store', () => {
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let pool: Pool;
  beforeAll(async () => {
    schema = await useTestSchema('vision_store');
    await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema });
  });
  afterAll(async () => {
    await pool?.end();
    await schema?.cleanup();
  });

  it('stores one packet per job: a second run of the job gets the first run\'s packet back', async () => {
    const first = await savePacket(pool, { tenant: 'acme', jobId: 'j1', operation: 'vision.evidence', packet: packet('acme', 'j1', 'first') });
    const again = await savePacket(pool, { tenant: 'acme', jobId: 'j1', operation: 'vision.evidence', packet: packet('acme', 'j1', 'second') });
    expect(again).toEqual(first);
    expect(again.summary).toBe('first');
    expect(await countPackets(pool, 'acme')).toBe(1);
    expect(await packetById(pool, 'acme', first.packetId)).toEqual(first);
    expect(await packetById(pool, 'globex', first.packetId)).toBeUndefined();
    // The same job id in another tenant is another job.
    expect(packetIdFor('globex', 'j1')).not.toBe(first.packetId);
  });

  it('keys cached evidence by tenant, content hash and need', async () => {
    const sha = Buffer.alloc(32, 7);
    await cacheEvidence(pool, { tenant: 'acme', contentSha256: sha, needKey: 'need-a', packetId: 'vp_a', outcome: OUTCOME });
    await cacheEvidence(pool, { tenant: 'acme', contentSha256: sha, needKey: 'need-a', packetId: 'vp_b', outcome: OUTCOME });
    expect(await cachedEvidence(pool, 'acme', sha, 'need-a')).toEqual({ packetId: 'vp_a', outcome: OUTCOME });
    expect(await cachedEvidence(pool, 'acme', sha, 'need-b')).toBeUndefined();
    expect(await cachedEvidence(pool, 'globex', sha, 'need-a')).toBeUndefined();
    expect(await cachedEvidence(pool, 'acme', Buffer.alloc(32, 8), 'need-a')).toBeUndefined();
  });

  it('forgets packets and cached evidence older than the retention, and keeps the rest', async () => {
    await savePacket(pool, { tenant: 'acme', jobId: 'old', operation: 'vision.evidence', packet: packet('acme', 'old', 'old') });
    await pool.query(`UPDATE vision_packets SET created_at = now() - interval '40 days' WHERE job_id = 'old'`);
    await pool.query(`UPDATE vision_evidence_cache SET created_at = now() - interval '40 days' WHERE packet_id = 'vp_a'`);
    expect(await pruneOldEvidence(pool, 30)).toEqual({ packets: 1, cached: 1 });
    expect(await countPackets(pool, 'acme')).toBe(1);
  });
});
