import type { ArtifactRange, Availability, Fidelity, Artifact } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';
import type { PathHead } from './domain/plan-read.js';

/**
 * Postgres I/O of the extractor, and nothing else. Every query names the
 * tenant: no read or write ever crosses tenants. Decisions live in domain/.
 */

export interface PathKey {
  tenant: string;
  workspace: string;
  path: string;
}

/** A first read of a path raced another first read of it: nothing was written; plan again. */
export class PathRaced extends Error {}

export interface ArtifactRow {
  artifact_id: string;
  workspace: string;
  path: string;
  revision: number;
  hash: string;
  range: ArtifactRange | null;
  fidelity: Fidelity;
  availability: Availability;
  byte_size: number;
  char_count: number;
  line_count: number;
  recorded_at: Date;
}

const ARTIFACT_COLUMNS = 'artifact_id, workspace, path, revision, hash, range, fidelity, availability, byte_size, char_count, line_count, recorded_at';

export function toArtifact(row: ArtifactRow): Artifact {
  return {
    artifactId: row.artifact_id,
    workspace: row.workspace,
    path: row.path,
    hash: row.hash,
    revision: row.revision,
    range: row.range,
    fidelity: row.fidelity,
    availability: row.availability,
    byteSize: row.byte_size,
    charCount: row.char_count,
    lineCount: row.line_count,
    recordedAt: row.recorded_at.toISOString(),
  };
}

/** The path's head, locked for the rest of the transaction; undefined for a path never read. */
export async function lockPathHead(tx: Queryable, key: PathKey): Promise<PathHead | undefined> {
  const { rows } = await tx.query<{ revision: number; source_hash: string | null; gone: boolean }>(
    'SELECT revision, source_hash, gone FROM artifact_paths WHERE tenant = $1 AND workspace = $2 AND path = $3 FOR UPDATE',
    [key.tenant, key.workspace, key.path],
  );
  const row = rows[0];
  return row && { revision: row.revision, sourceHash: row.source_hash, gone: row.gone };
}

/** Moves (or creates) the path's head. Creating throws PathRaced when another first read got there first. */
export async function writePathHead(tx: Queryable, key: PathKey, head: PathHead, existed: boolean): Promise<void> {
  if (existed) {
    await tx.query('UPDATE artifact_paths SET revision = $4, source_hash = $5, gone = $6, updated_at = now() WHERE tenant = $1 AND workspace = $2 AND path = $3', [
      key.tenant,
      key.workspace,
      key.path,
      head.revision,
      head.sourceHash,
      head.gone,
    ]);
    return;
  }
  const inserted = await tx.query(
    'INSERT INTO artifact_paths (tenant, workspace, path, revision, source_hash, gone) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
    [key.tenant, key.workspace, key.path, head.revision, head.sourceHash, head.gone],
  );
  if (inserted.rowCount === 0) throw new PathRaced(`first read of ${key.workspace}/${key.path} raced another`);
}

/** Stores a body once per (tenant, hash). */
export async function putBody(tx: Queryable, tenant: string, hash: string, body: Buffer, counts: { chars: number; lines: number }): Promise<void> {
  await tx.query('INSERT INTO artifact_bodies (tenant, sha256, body, byte_size, char_count, line_count) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING', [
    tenant,
    hash,
    body,
    body.length,
    counts.chars,
    counts.lines,
  ]);
}

/** Bodies by hash, within one tenant. */
export async function loadBodies(db: Queryable, tenant: string, hashes: readonly string[]): Promise<Map<string, Buffer>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await db.query<{ sha256: string; body: Buffer }>('SELECT sha256, body FROM artifact_bodies WHERE tenant = $1 AND sha256 = ANY($2::text[])', [tenant, [...hashes]]);
  return new Map(rows.map((r) => [r.sha256, r.body]));
}

export async function availableArtifacts(db: Queryable, key: PathKey): Promise<ArtifactRow[]> {
  const { rows } = await db.query<ArtifactRow>(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE tenant = $1 AND workspace = $2 AND path = $3 AND availability = 'available' ORDER BY recorded_at, artifact_id`,
    [key.tenant, key.workspace, key.path],
  );
  return rows;
}

/** Inserts the artifact unless it exists (a repeated read); returns it and whether it was new. */
export async function insertArtifact(
  tx: Queryable,
  tenant: string,
  a: Omit<ArtifactRow, 'recorded_at' | 'availability'>,
): Promise<{ row: ArtifactRow; created: boolean }> {
  const inserted = await tx.query<ArtifactRow>(
    `INSERT INTO artifacts (tenant, artifact_id, workspace, path, revision, hash, range, fidelity, availability, byte_size, char_count, line_count)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'available', $9, $10, $11) ON CONFLICT DO NOTHING RETURNING ${ARTIFACT_COLUMNS}`,
    [tenant, a.artifact_id, a.workspace, a.path, a.revision, a.hash, a.range === null ? null : JSON.stringify(a.range), a.fidelity, a.byte_size, a.char_count, a.line_count],
  );
  if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
  const existing = await getArtifact(tx, tenant, a.artifact_id);
  if (!existing) throw new Error(`artifact ${a.artifact_id} neither inserted nor found`);
  return { row: existing, created: false };
}

export async function getArtifact(db: Queryable, tenant: string, artifactId: string): Promise<ArtifactRow | undefined> {
  const { rows } = await db.query<ArtifactRow>(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE tenant = $1 AND artifact_id = $2`, [tenant, artifactId]);
  return rows[0];
}

/** The path's current full read, if any, else its latest current read. */
export async function currentArtifact(db: Queryable, key: PathKey): Promise<ArtifactRow | undefined> {
  const { rows } = await db.query<ArtifactRow>(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE tenant = $1 AND workspace = $2 AND path = $3 AND availability = 'available'
     ORDER BY (fidelity = 'full') DESC, recorded_at DESC, artifact_id LIMIT 1`,
    [key.tenant, key.workspace, key.path],
  );
  return rows[0];
}

/** Sets every available artifact of the path below `revision` (all, when undefined) to `to`; returns how many changed. */
export async function retireArtifacts(tx: Queryable, key: PathKey, to: 'superseded' | 'unavailable', belowRevision?: number): Promise<number> {
  const result = await tx.query(
    `UPDATE artifacts SET availability = $4, changed_at = now() WHERE tenant = $1 AND workspace = $2 AND path = $3 AND availability = 'available'${belowRevision === undefined ? '' : ' AND revision < $5'}`,
    belowRevision === undefined ? [key.tenant, key.workspace, key.path, to] : [key.tenant, key.workspace, key.path, to, belowRevision],
  );
  return result.rowCount ?? 0;
}

export async function recordReread(
  tx: Queryable,
  key: PathKey,
  r: { fromRevision: number; toRevision: number; fromHash: string | null; toHash: string | null; reason: string; artifactId: string; superseded: number },
): Promise<void> {
  await tx.query(
    `INSERT INTO artifact_rereads (tenant, workspace, path, from_revision, to_revision, from_hash, to_hash, reason, artifact_id, superseded)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
    [key.tenant, key.workspace, key.path, r.fromRevision, r.toRevision, r.fromHash, r.toHash, r.reason, r.artifactId, r.superseded],
  );
}

export async function listRereads(db: Queryable, key: PathKey): Promise<Array<{ from_revision: number; to_revision: number; from_hash: string | null; to_hash: string | null; reason: string; artifact_id: string; superseded: number }>> {
  const { rows } = await db.query(
    'SELECT from_revision, to_revision, from_hash, to_hash, reason, artifact_id, superseded FROM artifact_rereads WHERE tenant = $1 AND workspace = $2 AND path = $3 ORDER BY to_revision',
    [key.tenant, key.workspace, key.path],
  );
  return rows;
}

export interface EdgeRecord {
  edgeId: string;
  sourceArtifactId: string;
  decision: string;
  reason: string;
  bodyChars: number;
  budgetChars: number | null;
  deliveredChars: number;
  extractId: string | null;
}

export async function recordEdge(db: Queryable, tenant: string, e: EdgeRecord): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO materialization_edges (tenant, edge_id, source_artifact_id, decision, reason, body_chars, budget_chars, delivered_chars, extract_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [tenant, e.edgeId, e.sourceArtifactId, e.decision, e.reason, e.bodyChars, e.budgetChars, e.deliveredChars, e.extractId],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function listEdges(db: Queryable, tenant: string, sourceArtifactId: string): Promise<EdgeRecord[]> {
  const { rows } = await db.query<{ edge_id: string; source_artifact_id: string; decision: string; reason: string; body_chars: number; budget_chars: number | null; delivered_chars: number; extract_id: string | null }>(
    'SELECT edge_id, source_artifact_id, decision, reason, body_chars, budget_chars, delivered_chars, extract_id FROM materialization_edges WHERE tenant = $1 AND source_artifact_id = $2 ORDER BY recorded_at, edge_id',
    [tenant, sourceArtifactId],
  );
  return rows.map((r) => ({
    edgeId: r.edge_id,
    sourceArtifactId: r.source_artifact_id,
    decision: r.decision,
    reason: r.reason,
    bodyChars: r.body_chars,
    budgetChars: r.budget_chars,
    deliveredChars: r.delivered_chars,
    extractId: r.extract_id,
  }));
}

export async function findExtract(db: Queryable, tenant: string, extractId: string): Promise<unknown> {
  const { rows } = await db.query<{ result: unknown }>('SELECT result FROM extracts WHERE tenant = $1 AND extract_id = $2', [tenant, extractId]);
  return rows[0]?.result;
}

/** Records an extract once; a second writer (a re-run) gets the first one's result back. */
export async function recordExtract(db: Queryable, tenant: string, x: { extractId: string; sourceArtifactId: string; sourceHash: string; kind: string; complete: boolean; result: unknown }): Promise<unknown> {
  await db.query(
    `INSERT INTO extracts (tenant, extract_id, source_artifact_id, source_hash, extractor_kind, complete, result) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    [tenant, x.extractId, x.sourceArtifactId, x.sourceHash, x.kind, x.complete, JSON.stringify(x.result)],
  );
  return findExtract(db, tenant, x.extractId);
}

/** What a grep searches: one current artifact per distinct (path, hash), a full read preferred, in path order. */
/** A body grep searches: a path's full read when it has one, else each of its partial or capped reads. */
export interface GrepTargetRow {
  artifact_id: string;
  path: string;
  hash: string;
  byte_size: number;
  fidelity: Fidelity;
  range: ArtifactRange | null;
}

export async function grepTargets(db: Queryable, tenant: string, workspace: string, pathPrefix: string | undefined): Promise<GrepTargetRow[]> {
  const { rows } = await db.query<GrepTargetRow>(
    `SELECT DISTINCT ON (path, hash) artifact_id, path, hash, byte_size, fidelity, range FROM artifacts
     WHERE tenant = $1 AND workspace = $2 AND availability = 'available' AND ($3::text IS NULL OR starts_with(path, $3))
     ORDER BY path, hash, (fidelity = 'full') DESC, artifact_id`,
    [tenant, workspace, pathPrefix ?? null],
  );
  // A path with a full read is searched once, by its full read.
  const full = new Set<string>();
  const out: typeof rows = [];
  const byPath = new Map<string, typeof rows>();
  for (const r of rows) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  for (const [path, list] of byPath) {
    if (list.length > 1) {
      const { rows: fullRows } = await db.query<{ hash: string }>(
        `SELECT hash FROM artifacts WHERE tenant = $1 AND workspace = $2 AND path = $3 AND availability = 'available' AND fidelity = 'full' LIMIT 1`,
        [tenant, workspace, path],
      );
      if (fullRows[0]) {
        full.add(path);
        out.push(list.find((r) => r.hash === fullRows[0]!.hash) ?? list[0]!);
        continue;
      }
    }
    out.push(...list);
  }
  return out;
}
