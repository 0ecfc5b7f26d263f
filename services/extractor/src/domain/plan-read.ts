import type { ArtifactRange, Fidelity } from '@vouch/contracts';

/** The path's head: its current revision and what it is known to hold. */
export interface PathHead {
  revision: number;
  /** sha256 of the whole file at this revision; null when only partial reads without a file hash were recorded. */
  sourceHash: string | null;
  gone: boolean;
}

/** What one read brings. */
export interface IncomingRead {
  hash: string;
  range: ArtifactRange | null;
  fidelity: Fidelity;
  /** The whole file's hash: the body's hash for a full read, else the caller's fileSha256, else null. */
  sourceHash: string | null;
}

export type RereadReason = 'hash_changed' | 'content_changed' | 'reappeared';

export interface ReadPlan {
  revision: number;
  sourceHash: string | null;
  /** Set when this read starts a new revision of an existing path: the older artifacts are superseded. */
  reread: { reason: RereadReason; previousRevision: number; previousHash: string | null } | null;
}

/**
 * Decides which revision a read belongs to. A revision changes only on
 * evidence that the file changed: a different whole-file hash, or a partial
 * read whose bytes differ from the current full body at that range
 * (`consistentWithCurrent`, checked by the caller against stored bodies).
 * Without such evidence a read joins the current revision, so reading the
 * same file again never penalises the reader.
 */
export function planRead(head: PathHead | undefined, read: IncomingRead, consistentWithCurrent: () => boolean | undefined): ReadPlan {
  if (!head) return { revision: 1, sourceHash: read.sourceHash, reread: null };
  const next = (reason: RereadReason): ReadPlan => ({
    revision: head.revision + 1,
    sourceHash: read.sourceHash,
    reread: { reason, previousRevision: head.revision, previousHash: head.sourceHash },
  });
  if (head.gone) return next('reappeared');
  if (read.sourceHash !== null && head.sourceHash !== null) {
    return read.sourceHash === head.sourceHash ? { revision: head.revision, sourceHash: head.sourceHash, reread: null } : next('hash_changed');
  }
  // One side has no whole-file hash: compare bytes where both are known.
  const consistent = consistentWithCurrent();
  if (consistent === false) return next(read.sourceHash !== null ? 'hash_changed' : 'content_changed');
  if (consistent === undefined && read.sourceHash !== null && read.fidelity !== 'full') {
    // A partial read vouched for by a file hash, with nothing stored to check it against: trust it only
    // as a new revision, so earlier partial reads of possibly other content do not pass as this one.
    return next('hash_changed');
  }
  return { revision: head.revision, sourceHash: head.sourceHash ?? read.sourceHash, reread: null };
}

/** full without a range and not capped; partial with a range; capped when the caller's tool cut it short. */
export function fidelityOf(read: { range?: ArtifactRange | undefined; capped?: boolean | undefined }): Fidelity {
  if (read.capped) return 'capped';
  return read.range ? 'partial' : 'full';
}
