import type { z } from 'zod';
import { VouchError, ERROR_CODES, HTTP_STATUS_BY_CODE, type ErrorCode, type FieldIssue } from './errors.js';
import type { OperationDef } from './operation.js';
import { JobHandleSchema, jobsGet, type JobHandle } from './operations/jobs.js';
import { pathParams } from './table.js';

export interface VouchClientOptions {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface CallOptions {
  /** Makes a POST safe to retry: the gateway replays the first answer. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * A typed client of the gateway, derived from the operation table: the route,
 * the query or body, and the result type all come from the operation entry.
 * Problems come back as VouchError with the gateway's code, detail and fields.
 */
export class VouchClient {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: VouchClientOptions) {
    this.fetchImpl = opts.fetch ?? fetch;
  }

  /** Runs an rpc operation and returns its validated result. */
  async rpc<Op extends OperationDef>(op: Op, input: z.input<Op['input']>, options: CallOptions = {}): Promise<z.output<Op['output']>> {
    if (op.mode !== 'rpc') throw new Error(`${op.name} is a job operation: use start() and result()`);
    return op.output.parse(await this.send(op, input as Record<string, unknown>, options)) as z.output<Op['output']>;
  }

  /** Starts a job operation and returns its handle. */
  async start<Op extends OperationDef>(op: Op, input: z.input<Op['input']>, options: CallOptions = {}): Promise<JobHandle> {
    if (op.mode !== 'job') throw new Error(`${op.name} is an rpc operation: use rpc()`);
    return JobHandleSchema.parse(await this.send(op, input as Record<string, unknown>, options));
  }

  /**
   * Waits up to waitSeconds for a job and returns its validated result; a
   * failed job throws its VouchError, an unfinished one a TIMEOUT VouchError.
   */
  async result<Op extends OperationDef>(op: Op, handle: JobHandle, waitSeconds = 30): Promise<z.output<Op['output']>> {
    const job = jobsGet.output.parse(await this.send(jobsGet, { jobId: handle.jobId, wait: waitSeconds }, {}));
    if (job.state === 'completed') return op.output.parse(job.result) as z.output<Op['output']>;
    if (job.state === 'failed' && job.error) {
      throw new VouchError(job.error.code as ErrorCode, job.error.message, job.error.fields ? { fields: job.error.fields } : {});
    }
    throw new VouchError(ERROR_CODES.timeout, `job ${handle.jobId} is still ${job.state} after ${waitSeconds} s: call result() again`, { details: { jobId: handle.jobId } });
  }

  private async send(op: OperationDef, input: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    const params = pathParams(op.http.path);
    const path = op.http.path.replace(/:([A-Za-z][A-Za-z0-9]*)/g, (_, name: string) => encodeURIComponent(String(input[name] ?? '')));
    const rest = Object.fromEntries(Object.entries(input).filter(([k, v]) => !params.includes(k) && v !== undefined));
    const url = new URL(path, this.opts.baseUrl);
    const headers: Record<string, string> = { authorization: `Bearer ${this.opts.apiKey}`, accept: 'application/json' };
    let body: string | undefined;
    if (op.http.method === 'POST') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(rest);
      if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    } else {
      for (const [k, v] of Object.entries(rest)) url.searchParams.set(k, String(v));
    }
    const res = await this.fetchImpl(url, { method: op.http.method, headers, ...(body !== undefined ? { body } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    const text = await res.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (res.ok) return parsed;
    const problem = (parsed ?? {}) as { code?: string; detail?: string; fields?: FieldIssue[]; details?: Record<string, unknown> };
    const code = (problem.code && problem.code in HTTP_STATUS_BY_CODE ? problem.code : ERROR_CODES.internal) as ErrorCode;
    throw new VouchError(code, problem.detail ?? `${op.name} failed with HTTP ${res.status}`, {
      ...(problem.fields ? { fields: problem.fields } : {}),
      details: { ...(problem.details ?? {}), httpStatus: res.status },
    });
  }
}
