import type { OperationDef } from './operation.js';
import type { QueueName } from './queues.js';
import { artifactExtract, artifactExtractDeterministic, artifactGrep, artifactMaterialize, artifactRead } from './operations/artifact.js';
import { BOARD_OPERATIONS } from './operations/board.js';
import { jobsGet } from './operations/jobs.js';
import { ledgerGet, ledgerOpen, ledgerPacket, ledgerProposeCompletion, ledgerRecordEvidence, ledgerRender } from './operations/ledger.js';
import { mediaRecent, mediaRegister, mediaResolve } from './operations/media.js';
import { systemPing, systemStatus } from './operations/system.js';
import { visionAnalyze, visionEvidence, visionPacket } from './operations/vision.js';

/**
 * The operation table: every operation that crosses a process boundary, once.
 * The gateway's routes, the OpenAPI document and the agent tool manifest are
 * derived from it; a new operation is one entry here plus its handler.
 */
export const OPERATIONS: readonly OperationDef[] = [
  systemPing,
  systemStatus,
  jobsGet,
  mediaRegister,
  mediaRecent,
  mediaResolve,
  ledgerOpen,
  ledgerRecordEvidence,
  ledgerProposeCompletion,
  ledgerGet,
  ledgerPacket,
  ledgerRender,
  artifactRead,
  artifactMaterialize,
  artifactGrep,
  artifactExtractDeterministic,
  artifactExtract,
  visionEvidence,
  visionAnalyze,
  visionPacket,
  ...BOARD_OPERATIONS,
];

/** Looks an operation up by name in a table (the project's by default). */
export function findOperation(name: string, table: readonly OperationDef[] = OPERATIONS): OperationDef | undefined {
  return table.find((op) => op.name === name);
}

/** The operations a service must handle on its queue. system.ping is answered by the worker bootstrap itself. */
export function operationsForQueue(queue: QueueName, table: readonly OperationDef[] = OPERATIONS): OperationDef[] {
  return table.filter((op) => 'queue' in op.owner && op.owner.queue === queue);
}

/** Operations the gateway answers itself, without a queue. */
export function gatewayOperations(table: readonly OperationDef[] = OPERATIONS): OperationDef[] {
  return table.filter((op) => 'process' in op.owner && op.owner.process === 'gateway');
}

/**
 * Checks the table's own invariants: unique names, unique routes, path
 * parameters present in the input, an example that is a valid input. Throws
 * naming every problem.
 */
export function assertTableConsistent(table: readonly OperationDef[] = OPERATIONS): void {
  const problems: string[] = [];
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const op of table) {
    if (names.has(op.name)) problems.push(`operation ${op.name} is declared twice`);
    names.add(op.name);
    const route = `${op.http.method} ${op.http.path}`;
    if (routes.has(route)) problems.push(`route ${route} is declared twice (again by ${op.name})`);
    routes.add(route);
    const shape = (op.input as { shape?: Record<string, unknown> }).shape;
    for (const param of pathParams(op.http.path)) {
      if (!shape || !(param in shape)) problems.push(`${op.name}: path parameter :${param} is not a field of its input`);
    }
    if (op.mode === 'job' && 'process' in op.owner) problems.push(`${op.name}: a gateway-owned operation cannot be a job`);
    const example = op.input.safeParse(op.example);
    if (!example.success) problems.push(`${op.name}: its example is not a valid input (${example.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')})`);
  }
  if (problems.length) throw new Error(`operation table is inconsistent: ${problems.join('; ')}`);
}

/** The `:name` parameters of a route path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z][A-Za-z0-9]*)/g)].map((m) => m[1] as string);
}
