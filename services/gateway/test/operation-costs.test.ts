/** The cost model (operation-costs.ts): pure, so checked without servers. */
import { describe, expect, it } from 'vitest';
import { OPERATIONS, artifactExtract, artifactGrep, boardReviewCard, ledgerGet, ledgerProposeCompletion, visionAnalyze, visionEvidence, type OperationDef } from '@vouch/contracts';
import fc from 'fast-check';
import { COST_WEIGHTS, LLM_TOKEN_ESTIMATES, OPERATION_COSTS, actualExtraCost, costUnits, estimateCost, jsonBytes } from '../src/operation-costs.js';

const parsed = (op: OperationDef, input: unknown) => op.input.parse(input) as Record<string, unknown>;
const bytesOf = (input: unknown) => Buffer.byteLength(JSON.stringify(input));

describe('jsonBytes', () => {
  // Characters JSON.stringify escapes: quotes, backslashes, controls, lone surrogates.
  // eslint-disable-next-line no-control-regex
  const ESCAPED = /["\\\u0000-\u001f]|\p{Cs}/u;
  const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)]) : []);

  it('property: the bytes JSON.stringify writes when nothing needs escaping, and never more', () => {
    const text = fc.string({ unit: 'binary' });
    const value = fc.oneof(fc.jsonValue({ stringUnit: 'binary' }), fc.dictionary(text, fc.option(text, { nil: undefined })), fc.array(fc.option(fc.integer(), { nil: undefined })));
    fc.assert(
      fc.property(value, (v) => {
        const written = Buffer.byteLength(JSON.stringify(v));
        if (strings(v).some((x) => ESCAPED.test(x))) expect(jsonBytes(v)).toBeLessThanOrEqual(written);
        else expect(jsonBytes(v)).toBe(written);
      }),
      { numRuns: 500 },
    );
  });
});

describe('cost units', () => {
  it('charge the call, then each measure by its weight, rounded up', () => {
    expect(costUnits({})).toBe(1);
    expect(costUnits({ inputBytes: 16 * 1024 })).toBe(2);
    expect(costUnits({ inputBytes: 16 * 1024 + 1 })).toBe(3);
    expect(costUnits({ pixels: 1_000_000 })).toBe(101);
    expect(costUnits({ scanBytes: 1024 * 1024 })).toBe(17);
    expect(costUnits({ llmTokens: 5 })).toBe(6);
    expect(costUnits({ inputBytes: 1, pixels: 1, scanBytes: 1, llmTokens: 1 })).toBe(5);
    expect(costUnits({ inputBytes: -5, pixels: Number.NaN })).toBe(1);
  });

  it('name only operations of the table, and give every operation\'s example a whole positive cost', () => {
    const names = new Set(OPERATIONS.map((op) => op.name));
    expect(Object.keys(OPERATION_COSTS).filter((name) => !names.has(name))).toEqual([]);
    for (const op of OPERATIONS) {
      const cost = estimateCost(op, parsed(op, op.example));
      expect(Number.isSafeInteger(cost) && cost >= 1, op.name).toBe(true);
    }
  });
});

describe('estimates by operation', () => {
  it('charge an operation without a model its input\'s bytes and the call', () => {
    const input = parsed(ledgerGet, { runId: 'r'.repeat(100) });
    expect(estimateCost(ledgerGet, input)).toBe(1 + Math.ceil(bytesOf(input) / COST_WEIGHTS.inputBytesPerUnit));
  });

  it('charge vision the pixels of its image, and a model\'s tokens unless only observation or OCR was asked for', () => {
    const prompt = 'What text is in this image?';
    for (const op of [visionAnalyze, visionEvidence]) {
      const base = { prompt, surface: 'telegram', chatKey: 'chat-42', alias: 'img-1' };
      const text = parsed(op, { ...base, requestedDetail: 'text' });
      const full = parsed(op, { ...base, requestedDetail: 'full' });
      const inputUnits = (input: unknown) => Math.ceil(bytesOf(input) / COST_WEIGHTS.inputBytesPerUnit);
      expect(estimateCost(op, text, { imagePixels: 12_000_000 })).toBe(1 + inputUnits(text) + 1_200);
      expect(estimateCost(op, parsed(op, { ...base, requestedDetail: 'low' }), {})).toBe(1 + inputUnits(text) - 0);
      expect(estimateCost(op, full, { imagePixels: 12_000_000 })).toBe(1 + inputUnits(full) + 1_200 + LLM_TOKEN_ESTIMATES.auxiliaryVision + Math.ceil(prompt.length / 4));
    }
  });

  it('charge an extraction a window of model tokens per requirement, up to the extractor\'s windows', () => {
    const reqs = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}` }));
    const three = parsed(artifactExtract, { artifactId: 'art-0f3a9c2d4e5b6a7980112233', requirements: reqs(3) });
    const twenty = parsed(artifactExtract, { artifactId: 'art-0f3a9c2d4e5b6a7980112233', requirements: reqs(20) });
    expect(estimateCost(artifactExtract, three)).toBe(1 + 1 + 3 * 950);
    expect(estimateCost(artifactExtract, twenty)).toBe(1 + 1 + 8 * 950);
  });

  it('charge the verifier\'s tokens to an automatic review only, and the critic\'s to every proposal', () => {
    const review = { boardId: 'b', cardId: 'c-1' };
    const auto = estimateCost(boardReviewCard, parsed(boardReviewCard, { ...review, decision: 'auto' }));
    const approve = estimateCost(boardReviewCard, parsed(boardReviewCard, { ...review, decision: 'approve' }));
    expect(auto - approve).toBe(LLM_TOKEN_ESTIMATES.verifierCard);
    const proposal = parsed(ledgerProposeCompletion, { runId: 'r', summary: 'x'.repeat(400) });
    expect(estimateCost(ledgerProposeCompletion, proposal)).toBe(1 + 1 + LLM_TOKEN_ESTIMATES.criticPacket + Math.ceil(bytesOf(proposal) / 4));
  });

  it('add a grep\'s scanned bytes once it answers, and nothing for an answer that does not say', () => {
    expect(actualExtraCost(artifactGrep, { provenance: { scannedBytes: 64 * 1024 * 100 } })).toBe(100);
    expect(actualExtraCost(artifactGrep, { provenance: { scannedBytes: 1 } })).toBe(1);
    expect(actualExtraCost(artifactGrep, { provenance: { scannedBytes: 'lots' } })).toBe(0);
    expect(actualExtraCost(artifactGrep, null)).toBe(0);
    expect(actualExtraCost(ledgerGet, { provenance: { scannedBytes: 1e9 } })).toBe(0);
  });
});
