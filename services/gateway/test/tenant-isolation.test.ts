/**
 * Tenants never meet, checked for every operation of the table at once.
 *
 * Tenant A runs every operation in table order, from its example input, with
 * a canary word added to each free-text field (a string of the example that
 * holds a space: goals, summaries, captions; ids and encodings hold none).
 * Tenant B then runs every operation with the same ids. Nothing B gets back —
 * answers, job results, A's job ids probed directly — may hold A's canary,
 * and everything A reads afterwards must be exactly what it read before. A
 * new operation joins by being in the table with an example that chains with
 * its service's other examples (the same run id, board id, alias...).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationDef } from '@vouch/contracts';
import { startFullStack, type FullStack } from './full-stack.js';

/** Sends a request with a tenant's key; the body parsed where it is JSON. */
async function sendOperation(baseUrl: string, key: string, request: OperationRequest): Promise<{ status: number; text: string; body: Json }> {
  const res = await sendRequest(baseUrl, request, { authorization: `Bearer ${key}` });
  let body: Json;
  try {
    body = res.text ? JSON.parse(res.text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, text: res.text, body };
}
import { requestFor, sendRequest, type OperationRequest } from '@vouch/testing';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walks arbitrary JSON
type Json = any;

/** Operations that hold tenant data; system.* is about the deployment, jobs.get is probed with A's job ids. */
const TENANT_OPERATIONS = OPERATIONS.filter((op) => !op.name.startsWith('system.') && op.name !== 'jobs.get');
const CANARY = `canary${randomBytes(6).toString('hex')}`;

/** The example with the canary appended to every free-text string, where the input schema still accepts it. */
function withCanary(op: OperationDef): Record<string, unknown> {
  const mark = (value: Json): Json => {
    if (typeof value === 'string') return value.includes(' ') ? `${value} ${CANARY}` : value;
    if (Array.isArray(value)) return value.map(mark);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mark(v)]));
    return value;
  };
  const marked = mark(structuredClone(op.example));
  return op.input.safeParse(marked).success ? marked : (op.example as Record<string, unknown>);
}

interface Answer {
  op: string;
  status: number;
  text: string;
  jobId?: string;
}

describe('tenant isolation over the whole operation table', () => {
  let stack: FullStack;
  let keyA: string;
  let keyB: string;
  const answersA: Answer[] = [];
  const answersB: Answer[] = [];

  /** Runs an operation as a tenant; a job is waited for and its final state recorded too. */
  async function run(op: OperationDef, key: string, input: Record<string, unknown>): Promise<Answer> {
    const res = await sendOperation(stack.gw.url, key, requestFor(op, input));
    const answer: Answer = { op: op.name, status: res.status, text: res.text };
    if (res.status === 202) {
      const jobId = (res.body as { jobId: string }).jobId;
      const done = await sendOperation(stack.gw.url, key, { method: 'GET', path: `/v1/jobs/${jobId}?wait=30` });
      answer.jobId = jobId;
      answer.text += `\n${done.text}`;
    }
    return answer;
  }

  const reads = () => TENANT_OPERATIONS.filter((op) => op.http.method === 'GET');

  beforeAll(async () => {
    stack = await startFullStack('tenant_isolation');
    keyA = await stack.gw.createKey('tenant-a');
    keyB = await stack.gw.createKey('tenant-b', 'jobs:read,media:write,media:read,ledger:write,ledger:read,artifacts:write,artifacts:read,system:read,vision:write,vision:read,admin');
    for (const op of TENANT_OPERATIONS) answersA.push(await run(op, keyA, withCanary(op)));
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('lets tenant A use every operation, with its canary in the data', () => {
    const failed = answersA.filter((a) => a.status >= 500);
    expect(failed).toEqual([]);
    expect(answersA.some((a) => a.text.includes(CANARY))).toBe(true);
  });

  it('shows tenant B nothing of A\'s data through any operation, with A\'s ids, and changes nothing A reads', async () => {
    const before = await Promise.all(reads().map((op) => run(op, keyA, withCanary(op))));
    for (const op of TENANT_OPERATIONS) answersB.push(await run(op, keyB, op.example as Record<string, unknown>));
    const leaks = answersB.filter((a) => a.text.includes(CANARY)).map((a) => a.op);
    expect(leaks).toEqual([]);
    expect(answersB.filter((a) => a.status >= 500)).toEqual([]);
    const after = await Promise.all(reads().map((op) => run(op, keyA, withCanary(op))));
    // A problem document names its request; that id differs between two identical reads.
    const comparable = (answers: Answer[]) => answers.map((a) => [a.op, a.status, a.text.replace(/"requestId":"[^"]*"/g, '"requestId":"-"')]);
    expect(comparable(after)).toEqual(comparable(before));
  }, 120_000);

  it('hides every job of A from B, as if it did not exist', async () => {
    const jobIds = answersA.flatMap((a) => (a.jobId ? [a.jobId] : []));
    expect(jobIds.length).toBeGreaterThan(0);
    for (const jobId of jobIds) {
      const res = await sendOperation(stack.gw.url, keyB, { method: 'GET', path: `/v1/jobs/${jobId}` });
      expect(res.status, jobId).toBe(404);
      expect(res.text).not.toContain(CANARY);
      const missing = await sendOperation(stack.gw.url, keyB, { method: 'GET', path: `/v1/jobs/${jobId.slice(0, -4)}beef` });
      expect((res.body as Json).detail.replace(jobId, 'ID')).toBe((missing.body as Json).detail.replace(`${jobId.slice(0, -4)}beef`, 'ID'));
    }
  });

  it('keeps the queue dashboard closed to B\'s admin key', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await sendOperation(stack.gw.url, keyB, { method: 'GET', path });
      expect(res.status).toBe(403);
      expect(res.text).not.toContain(CANARY);
    }
  });
});
