import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, runMigrations, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, useTestSchema } from '@vouch/testing';
import { MIGRATIONS_DIR } from '../src/extractor-service.js';

/**
 * The migration that moves artifact paths recorded in another Unicode
 * spelling to NFC (1764462000001_nfc-paths.sql), on rows written under the
 * first migration alone, as a service of that time would have written them.
 */
const NFD = (s: string) => s.normalize('NFD');
const NFC = (s: string) => s.normalize('NFC');
const HASH = 'a'.repeat(64);

describe('moving artifact paths to NFC', () => {
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let pool: Pool;
  let firstOnly: string;

  const head = (tenant: string, path: string, revision: number, updatedAt: string) =>
    pool.query(`INSERT INTO artifact_paths (tenant, workspace, path, revision, source_hash, updated_at) VALUES ($1, 'w', $2, $3, $4, $5)`, [tenant, path, revision, HASH, updatedAt]);
  const read = (tenant: string, id: string, path: string, revision: number, availability: string) =>
    pool.query(
      `INSERT INTO artifacts (tenant, artifact_id, workspace, path, revision, hash, fidelity, availability, byte_size, char_count, line_count)
       VALUES ($1, $2, 'w', $3, $4, $5, 'full', $6, 1, 1, 1)`,
      [tenant, id, path, revision, HASH, availability],
    );
  const reread = (tenant: string, path: string, to: number, id: string) =>
    pool.query(
      `INSERT INTO artifact_rereads (tenant, workspace, path, from_revision, to_revision, reason, artifact_id, superseded) VALUES ($1, 'w', $2, $3, $4, 'changed', $5, 1)`,
      [tenant, path, to - 1, to, id],
    );

  beforeAll(async () => {
    schema = await useTestSchema('nfcpaths');
    firstOnly = await mkdtemp(join(tmpdir(), 'vouch-migrations-'));
    await copyFile(join(MIGRATIONS_DIR, '1764462000000_artifacts.sql'), join(firstOnly, '1764462000000_artifacts.sql'));
    await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: firstOnly });
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 2 });
    for (const tenant of ['t1', 't2']) await pool.query(`INSERT INTO artifact_bodies (tenant, sha256, body, byte_size, char_count, line_count) VALUES ($1, $2, 'x', 1, 1, 1)`, [tenant, HASH]);

    // One spelling only, decomposed: it is renamed, nothing else changes.
    await head('t1', NFD('docs/café.txt'), 2, '2026-01-01T00:00:00Z');
    await read('t1', 'a-cafe-1', NFD('docs/café.txt'), 1, 'superseded');
    await read('t1', 'a-cafe-2', NFD('docs/café.txt'), 2, 'available');
    await reread('t1', NFD('docs/café.txt'), 2, 'a-cafe-2');
    // Two spellings, the composed one written last: it stays the head.
    await head('t1', NFD('notes/résumé.md'), 3, '2026-01-01T00:00:00Z');
    await read('t1', 'a-res-nfd', NFD('notes/résumé.md'), 3, 'available');
    await reread('t1', NFD('notes/résumé.md'), 2, 'a-res-nfd');
    await reread('t1', NFD('notes/résumé.md'), 3, 'a-res-nfd');
    await head('t1', NFC('notes/résumé.md'), 2, '2026-02-01T00:00:00Z');
    await read('t1', 'a-res-nfc', NFC('notes/résumé.md'), 2, 'available');
    await reread('t1', NFC('notes/résumé.md'), 2, 'a-res-nfc');
    // Two spellings, the decomposed one written last: it becomes the head, spelled in NFC.
    await head('t1', NFC('naïve.txt'), 1, '2026-01-01T00:00:00Z');
    await read('t1', 'a-nai-nfc', NFC('naïve.txt'), 1, 'available');
    await head('t1', NFD('naïve.txt'), 4, '2026-03-01T00:00:00Z');
    await read('t1', 'a-nai-nfd', NFD('naïve.txt'), 4, 'available');
    // Another tenant's file of the same name is its own.
    await head('t2', NFD('notes/résumé.md'), 1, '2026-01-01T00:00:00Z');
    await read('t2', 'b-res', NFD('notes/résumé.md'), 1, 'available');

    // Two spellings, neither in NFC ("ṩ" decomposed, and as "ṡ" with the dot below apart), with one revision each in the
    // reread log: the one recorded last moves, the other keeps its spelling.
    await pool.query(`INSERT INTO artifact_bodies (tenant, sha256, body, byte_size, char_count, line_count) VALUES ('t3', $1, 'x', 1, 1, 1)`, [HASH]);
    await head('t3', 's\u0323\u0307.md', 2, '2026-01-01T00:00:00Z');
    await read('t3', 'c-1', 's\u0323\u0307.md', 2, 'available');
    await reread('t3', 's\u0323\u0307.md', 2, 'c-1');
    await head('t3', '\u1e61\u0323.md', 2, '2026-02-01T00:00:00Z');
    await read('t3', 'c-2', '\u1e61\u0323.md', 2, 'available');
    await pool.query(
      `INSERT INTO artifact_rereads (tenant, workspace, path, from_revision, to_revision, reason, artifact_id, superseded, recorded_at) VALUES ('t3', 'w', $1, 1, 2, 'changed', 'c-2', 1, '2027-01-01T00:00:00Z')`,
      ['\u1e61\u0323.md'],
    );

    expect(await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR })).toEqual(['1764462000001_nfc-paths']);
  });
  afterAll(async () => {
    await pool?.end();
    await schema?.cleanup();
    await rm(firstOnly, { recursive: true, force: true });
  });

  const heads = async () =>
    (await pool.query<{ tenant: string; path: string; revision: number }>(`SELECT tenant, path, revision FROM artifact_paths ORDER BY tenant, path`)).rows;
  const reads = async () =>
    Object.fromEntries((await pool.query<{ artifact_id: string; path: string; availability: string }>(`SELECT artifact_id, path, availability FROM artifacts`)).rows.map((r) => [r.artifact_id, [r.path, r.availability]]));

  it('leaves one head per file and tenant, spelled in NFC, with the revision of the head written last', async () => {
    expect(await heads()).toEqual([
      { tenant: 't1', path: NFC('docs/café.txt'), revision: 2 },
      { tenant: 't1', path: NFC('naïve.txt'), revision: 4 },
      { tenant: 't1', path: NFC('notes/résumé.md'), revision: 2 },
      { tenant: 't2', path: NFC('notes/résumé.md'), revision: 1 },
      { tenant: 't3', path: '\u1e69.md', revision: 2 },
    ]);
  });

  it('keeps every read, under the NFC name, and supersedes the current reads of the spelling that lost its head', async () => {
    expect(await reads()).toEqual({
      'a-cafe-1': [NFC('docs/café.txt'), 'superseded'],
      'a-cafe-2': [NFC('docs/café.txt'), 'available'],
      'a-res-nfd': [NFC('notes/résumé.md'), 'superseded'],
      'a-res-nfc': [NFC('notes/résumé.md'), 'available'],
      'a-nai-nfc': [NFC('naïve.txt'), 'superseded'],
      'a-nai-nfd': [NFC('naïve.txt'), 'available'],
      'b-res': [NFC('notes/résumé.md'), 'available'],
      'c-1': ['\u1e69.md', 'superseded'],
      'c-2': ['\u1e69.md', 'available'],
    });
  });

  it('keeps every reread, under the NFC name unless the log already holds that revision for it', async () => {
    const rows = (await pool.query<{ path: string; to_revision: number; artifact_id: string }>(`SELECT path, to_revision, artifact_id FROM artifact_rereads ORDER BY artifact_id, to_revision`)).rows;
    expect(rows).toEqual([
      { path: NFC('docs/café.txt'), to_revision: 2, artifact_id: 'a-cafe-2' },
      { path: NFC('notes/résumé.md'), to_revision: 2, artifact_id: 'a-res-nfc' },
      { path: NFD('notes/résumé.md'), to_revision: 2, artifact_id: 'a-res-nfd' },
      { path: NFC('notes/résumé.md'), to_revision: 3, artifact_id: 'a-res-nfd' },
      { path: 's\u0323\u0307.md', to_revision: 2, artifact_id: 'c-1' },
      { path: '\u1e69.md', to_revision: 2, artifact_id: 'c-2' },
    ]);
  });
});
