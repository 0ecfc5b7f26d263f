import {
  QUEUES,
  assertTableConsistent,
  buildOpenApiDocument,
  buildToolManifest,
  ledgerGet,
  ledgerOpen,
  ledgerPacket,
  ledgerProposeCompletion,
  ledgerRecordEvidence,
  ledgerRender,
} from '@vouch/contracts';
import { describe, expect, it } from 'vitest';

const LEDGER_OPERATIONS = [ledgerOpen, ledgerRecordEvidence, ledgerProposeCompletion, ledgerGet, ledgerPacket, ledgerRender];

describe('ledger operations', () => {
  it('are consistent entries owned by the ledger-critic queue', () => {
    expect(() => assertTableConsistent(LEDGER_OPERATIONS)).not.toThrow();
    expect(LEDGER_OPERATIONS.map((op) => [op.name, op.mode, op.http.method, op.http.path, op.scope, op.agentFacing])).toEqual([
      ['ledger.open', 'rpc', 'POST', '/v1/ledgers', 'ledger:write', true],
      ['ledger.recordEvidence', 'rpc', 'POST', '/v1/ledgers/:runId/evidence', 'ledger:write', true],
      ['ledger.proposeCompletion', 'job', 'POST', '/v1/ledgers/:runId/completion', 'ledger:write', true],
      ['ledger.get', 'rpc', 'GET', '/v1/ledgers/:runId', 'ledger:read', true],
      ['ledger.packet', 'rpc', 'GET', '/v1/ledgers/:runId/packet', 'ledger:read', false],
      ['ledger.render', 'rpc', 'GET', '/v1/ledgers/:runId/render', 'ledger:read', false],
    ]);
    for (const op of LEDGER_OPERATIONS) expect(op.owner).toEqual({ queue: QUEUES.ledgerCritic });
  });

  it('derive an OpenAPI document and tool manifest', () => {
    const doc = buildOpenApiDocument(LEDGER_OPERATIONS, { version: 'test' }) as { paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }> }>> };
    expect(Object.keys(doc.paths)).toEqual(['/v1/ledgers', '/v1/ledgers/{runId}/evidence', '/v1/ledgers/{runId}/completion', '/v1/ledgers/{runId}', '/v1/ledgers/{runId}/packet', '/v1/ledgers/{runId}/render']);
    expect(doc.paths['/v1/ledgers/{runId}/render']!.get!.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['path:runId', 'query:form']);
    expect(buildToolManifest(LEDGER_OPERATIONS).map((t) => t.function.name)).toEqual(['ledger_open', 'ledger_recordEvidence', 'ledger_proposeCompletion', 'ledger_get']);
  });

  it('coerce query strings on GET routes', () => {
    expect(ledgerPacket.input.parse({ runId: 'r-1', cycle: '2' })).toEqual({ runId: 'r-1', cycle: 2 });
    expect(ledgerRender.input.parse({ runId: 'r-1' })).toEqual({ runId: 'r-1', form: 'admin' });
    expect(ledgerRender.input.safeParse({ runId: 'r-1', form: 'telegram' }).success).toBe(false);
  });
});
