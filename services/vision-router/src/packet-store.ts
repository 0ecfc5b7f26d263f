import { createHash } from 'node:crypto';
import type { EvidencePacket } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';
import type { LadderOutcome } from './domain/run-ladder.js';

/** The packet id of a job: derived, so every run of one job names the same packet. */
export function packetIdFor(tenant: string, jobId: string): string {
  return `vp_${createHash('sha256').update(`${tenant}\0${jobId}`).digest('hex').slice(0, 24)}`;
}

export async function packetByJob(db: Queryable, tenant: string, jobId: string): Promise<EvidencePacket | undefined> {
  const { rows } = await db.query<{ packet: EvidencePacket }>(`SELECT packet FROM vision_packets WHERE tenant = $1 AND job_id = $2`, [tenant, jobId]);
  return rows[0]?.packet;
}

export async function packetById(db: Queryable, tenant: string, packetId: string): Promise<EvidencePacket | undefined> {
  const { rows } = await db.query<{ packet: EvidencePacket }>(`SELECT packet FROM vision_packets WHERE tenant = $1 AND packet_id = $2`, [tenant, packetId]);
  return rows[0]?.packet;
}

/** Stores a job's packet; when a run of the same job stored one first, returns that one instead. */
export async function savePacket(db: Queryable, record: { tenant: string; jobId: string; operation: string; packet: EvidencePacket }): Promise<EvidencePacket> {
  const { rows } = await db.query<{ packet: EvidencePacket }>(
    `INSERT INTO vision_packets (tenant, packet_id, job_id, operation, packet) VALUES ($1, $2, $3, $4, $5::jsonb)
     ON CONFLICT (tenant, job_id) DO NOTHING RETURNING packet`,
    [record.tenant, record.packet.packetId, record.jobId, record.operation, JSON.stringify(record.packet)],
  );
  if (rows[0]) return rows[0].packet;
  return (await packetByJob(db, record.tenant, record.jobId))!;
}

/** What the cache keeps: the ladder's outcome and the packet it first went into. */
export interface CachedEvidence {
  packetId: string;
  outcome: LadderOutcome;
}

export async function cachedEvidence(db: Queryable, tenant: string, contentSha256: Buffer, needKey: string): Promise<CachedEvidence | undefined> {
  const { rows } = await db.query<{ packet_id: string; evidence: LadderOutcome }>(
    `SELECT packet_id, evidence FROM vision_evidence_cache WHERE tenant = $1 AND content_sha256 = $2 AND need_key = $3`,
    [tenant, contentSha256, needKey],
  );
  return rows[0] ? { packetId: rows[0].packet_id, outcome: rows[0].evidence } : undefined;
}

export async function cacheEvidence(db: Queryable, entry: { tenant: string; contentSha256: Buffer; needKey: string; packetId: string; outcome: LadderOutcome }): Promise<void> {
  await db.query(
    `INSERT INTO vision_evidence_cache (tenant, content_sha256, need_key, packet_id, evidence) VALUES ($1, $2, $3, $4, $5::jsonb)
     ON CONFLICT (tenant, content_sha256, need_key) DO NOTHING`,
    [entry.tenant, entry.contentSha256, entry.needKey, entry.packetId, JSON.stringify(entry.outcome)],
  );
}

/**
 * Forgets packets and cached evidence older than `days`. A packet must
 * outlive every re-run BullMQ could still make of its job (failed jobs are
 * kept a week), so the retention is at least 8 days.
 */
export async function pruneOldEvidence(db: Queryable, days: number): Promise<{ packets: number; cached: number }> {
  const packets = await db.query(`DELETE FROM vision_packets WHERE created_at < now() - make_interval(days => $1)`, [days]);
  const cached = await db.query(`DELETE FROM vision_evidence_cache WHERE created_at < now() - make_interval(days => $1)`, [days]);
  return { packets: packets.rowCount ?? 0, cached: cached.rowCount ?? 0 };
}

/** Rows in the two tables for a tenant, for tests and the exactly-once check. */
export async function countPackets(db: Queryable, tenant: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM vision_packets WHERE tenant = $1`, [tenant]);
  return Number(rows[0]!.n);
}
