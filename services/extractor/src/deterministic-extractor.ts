import { hostname } from 'node:os';
import { DETERMINISTIC_EXTRACTOR, extractDeterministically } from './domain/deterministic-extract.js';
import type { Extractor } from './extract-artifact.js';

/** The deterministic extractor: no model, no GPU, runs on any node, and says so in its identity. */
export function createDeterministicExtractor(node: string = hostname()): Extractor {
  return {
    identity: () => ({ kind: 'deterministic', name: DETERMINISTIC_EXTRACTOR.name, version: DETERMINISTIC_EXTRACTOR.version, model: null, node, gpuUuid: null }),
    async propose({ lines, requirements }) {
      return { results: extractDeterministically(lines, requirements), windows: 0, largestPromptChars: 0 };
    },
  };
}
