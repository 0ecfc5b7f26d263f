import { createHash } from 'node:crypto';
import type { ArtifactRange, Fidelity } from '@vouch/contracts';

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** sha256Hex of bytes as a generator that yields after each `sliceBytes` hashed (run it with runInSlices, @vouch/platform). */
export function* sha256HexInSlices(data: Uint8Array, sliceBytes: number): Generator<void, string, void> {
  const hash = createHash('sha256');
  for (let at = 0; at < data.length; at += sliceBytes) {
    hash.update(data.subarray(at, at + sliceBytes));
    if (at + sliceBytes < data.length) yield;
  }
  return hash.digest('hex');
}

function rangeKey(range: ArtifactRange | null): string {
  return range ? `${range.unit}:${range.start}-${range.end}` : 'whole';
}

/**
 * An artifact's id is derived from everything that makes it one read: a
 * re-run of the same job, or the same read sent again, lands on the same row.
 * The tenant is part of the input, so equal reads in two tenants never share
 * an id.
 */
export function artifactIdFor(key: { tenant: string; workspace: string; path: string; revision: number; hash: string; range: ArtifactRange | null; fidelity: Fidelity }): string {
  const material = [key.tenant, key.workspace, key.path, String(key.revision), key.hash, rangeKey(key.range), key.fidelity].join('\u0000');
  return `art-${sha256Hex(material).slice(0, 24)}`;
}

/** Ids of things a job creates (edges, extracts): one per job, whatever BullMQ re-runs. */
export function jobScopedId(prefix: string, tenant: string, jobId: string, salt = ''): string {
  return `${prefix}-${sha256Hex(`${tenant}\u0000${jobId}\u0000${salt}`).slice(0, 24)}`;
}
