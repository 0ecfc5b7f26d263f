import type { Redis } from 'ioredis';
import type { JobEnvelope } from '@vouch/contracts';

/**
 * Large input strings travel beside their job, not inside it (a claim check).
 *
 * BullMQ keeps a job's data in its Redis hash and moves it with Lua scripts:
 * addStandardJob unpacks it, moveToActive and moveToFinished (which fetches
 * the next job) return it. Redis runs one script at a time, so with an 8 MB
 * artifact body each of those scripts held Redis for tens of milliseconds
 * (Redis's SLOWLOG under the body flood of `npm run bench:fairness`: about
 * 60 ms each, up to 215 ms, on the busy 2-core machine), and every other
 * tenant's add, fetch and slot waited for them. The body also went through
 * JSON.stringify on the gateway and JSON.parse on every fetch of the job.
 *
 * So a top-level input string of BLOB_MIN_CHARS or more is stored with a
 * plain SET under a key derived from the queue, the job id and the field,
 * and the job carries a small reference in its place. The worker reads it
 * back once it has the tenant's slot, before validating the input, and
 * deletes it when the job has ended. A SET or GET of 8 MB is a copy that
 * Redis streams through its event loop between other clients' commands,
 * not a script that stops them.
 *
 * The reference names only the field's length, never a key: the worker
 * derives the key from its own queue and the job's id, so a job can reach
 * no blob but its own.
 */

/** Strings of at least this many characters go beside the job. */
export const BLOB_MIN_CHARS = 64 * 1024;

/**
 * How long a blob outlives its job's add when nothing deletes it: past the
 * retries of a failed job (minutes), short enough that a job nobody runs
 * (its worker gone for a day) does not keep its bodies in Redis for ever.
 */
export const BLOB_TTL_S = 24 * 60 * 60;

const REF = 'vouchBlob';

/** What a job's data holds in a large string's place. */
interface BlobRef {
  [REF]: { chars: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlobRef(value: unknown): value is BlobRef {
  return isRecord(value) && Object.keys(value).length === 1 && isRecord(value[REF]) && typeof value[REF].chars === 'number';
}

export function blobKey(prefix: string, queue: string, jobId: string, field: string): string {
  return `${prefix}:${queue}:vouch-blob:${jobId}:${field}`;
}

/** The envelope to add as the job's data: its input's large strings stored beside it, a reference each in their place. */
export async function stashBlobs(redis: Redis, where: { prefix: string; queue: string; jobId: string }, envelope: JobEnvelope): Promise<JobEnvelope> {
  const { input } = envelope;
  if (!isRecord(input)) return envelope;
  const large = Object.entries(input).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].length >= BLOB_MIN_CHARS);
  if (large.length === 0) return envelope;
  const batch = redis.multi();
  const stashed: Record<string, unknown> = { ...input };
  for (const [field, value] of large) {
    batch.set(blobKey(where.prefix, where.queue, where.jobId, field), value, 'EX', BLOB_TTL_S);
    stashed[field] = { [REF]: { chars: value.length } } satisfies BlobRef;
  }
  const results = await batch.exec();
  const failed = results?.find(([err]) => err !== null);
  if (!results || failed) throw failed?.[0] ?? new Error('storing a large input beside its job was aborted');
  return { ...envelope, input: stashed };
}

/** A blob the job names is gone (it outlived BLOB_TTL_S, or was deleted): the job cannot run. */
export class BlobMissing extends Error {
  constructor(readonly fields: readonly string[]) {
    super(
      `the job's large input (${fields.join(', ')}) is no longer stored beside it: large inputs are kept ${BLOB_TTL_S / 3600} h after the request; send the request again`,
    );
  }
}

/** The fields of an input that were stored beside the job. */
export function blobFields(input: unknown): string[] {
  return isRecord(input) ? Object.keys(input).filter((field) => isBlobRef(input[field])) : [];
}

/** The job's input with each reference replaced by the string stored for it; BlobMissing when one is gone. */
export async function unstashBlobs(redis: Redis, where: { prefix: string; queue: string; jobId: string }, input: unknown): Promise<unknown> {
  const fields = blobFields(input);
  if (fields.length === 0) return input;
  const values = await Promise.all(fields.map((field) => readBlob(redis, blobKey(where.prefix, where.queue, where.jobId, field))));
  const missing = fields.filter((_, i) => values[i] === undefined);
  if (missing.length > 0) throw new BlobMissing(missing);
  const restored: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  fields.forEach((field, i) => (restored[field] = values[i]));
  return restored;
}

/**
 * Bytes of a blob read per command. One GET of 8 MB copies it all into the
 * reply at once (16 ms, up to 45 ms, in SLOWLOG on the busy machine); a
 * megabyte a command keeps each of them to a millisecond or two.
 */
export const BLOB_READ_BYTES = 1024 * 1024;

/** A blob's text, read a range at a time; undefined when it is gone. */
async function readBlob(redis: Redis, key: string): Promise<string | undefined> {
  const bytes = await redis.strlen(key);
  if (bytes === 0) return (await redis.exists(key)) === 1 ? '' : undefined;
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes; at += BLOB_READ_BYTES) parts.push(await redis.getrangeBuffer(key, at, Math.min(bytes, at + BLOB_READ_BYTES) - 1));
  const whole = Buffer.concat(parts);
  // Deleted between the reads (it expired): what was read is incomplete and never used.
  if (whole.length !== bytes || (await redis.strlen(key)) !== bytes) return undefined;
  return whole.toString('utf8');
}

/** Deletes the strings stored beside a job that has ended. */
export async function dropBlobs(redis: Redis, where: { prefix: string; queue: string; jobId: string }, input: unknown): Promise<void> {
  const fields = blobFields(input);
  if (fields.length > 0) await redis.del(...fields.map((field) => blobKey(where.prefix, where.queue, where.jobId, field)));
}
