/**
 * @vouch/contracts — the single source of truth for what crosses a process
 * boundary: the operation table, queue and job names, error codes, and the
 * OpenAPI document and agent tool manifest derived from the table.
 */
export * from './queues.js';
export * from './board-claimable.js';
export * from './text.js';
export * from './errors.js';
export * from './result-budget.js';
export * from './operation.js';
export * from './table.js';
export * from './openapi.js';
export * from './problem-responses.js';
export * from './client.js';
export * from './mcp-catalog.js';
export * from './operations/common.js';
export * from './operations/system.js';
export * from './operations/media.js';
export * from './operations/jobs.js';
export * from './operations/ledger.js';
export * from './operations/artifact-path.js';
export * from './operations/artifact-schemas.js';
export * from './operations/artifact.js';
export * from './operations/vision.js';
export * from './resolve-media.js';
export * from './operations/board.js';
export * from './actor.js';
