import { defineConfig } from 'vitest/config';

// Every workspace package's tests, in three tiers (`npm test` runs all three;
// `npm run test:unit`, `test:integration` and `test:system` one each):
//
//   unit         pure code, HTTP servers in the process at most: no Redis, no
//                Postgres, no child process. Files share their workers
//                (isolate: false), which halves the tier's time.
//   integration  the real local Redis and Postgres, in this process, each file
//                under its own BullMQ prefix and Postgres schema. Every test
//                file not named below is here, so a new file runs isolated
//                until it is placed.
//   system       child processes, the full stack, chaos, MCP over stdio, the
//                standalone clone.
//
// Files share the one local Redis and Postgres, so they may run in parallel;
// two forks keep a 2-core machine responsive.

const ALL = ['shared/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'harness/test/**/*.test.ts', 'deploy/test/**/*.test.ts'];

/** Tests that touch neither Redis, Postgres nor a child process. */
export const UNIT = [
  'deploy/test/deploy-config.test.ts',
  'deploy/test/promql.test.ts',
  'harness/test/harness-judge.test.ts',
  'services/board-dispatcher/test/board-diagnostics-mutants.test.ts',
  'services/board-dispatcher/test/board-domain-mutants.test.ts',
  'services/board-dispatcher/test/board-domain.test.ts',
  'services/board-dispatcher/test/board-replay-mutants.test.ts',
  'services/board-dispatcher/test/board-replay.property.test.ts',
  'services/board-dispatcher/test/board-show-page.property.test.ts',
  'services/board-dispatcher/test/board-synthesis.test.ts',
  'services/board-dispatcher/test/dispatcher-decisions.test.ts',
  'services/board-dispatcher/test/verify-corpus.test.ts',
  'services/extractor/test/body-digest.test.ts',
  'services/extractor/test/count-chars.test.ts',
  'services/extractor/test/extract-anchors.test.ts',
  'services/extractor/test/grep-engine.test.ts',
  'services/extractor/test/prompt-bound.test.ts',
  'services/extractor/test/read-revisions.test.ts',
  'services/gateway/test/gateway-logic.test.ts',
  'services/gateway/test/operation-costs.test.ts',
  'services/gateway/test/upload-limits.test.ts',
  'services/ledger-critic/test/critic-corpus.test.ts',
  'services/ledger-critic/test/critic-packet-mutants.test.ts',
  'services/ledger-critic/test/critic-packet.test.ts',
  'services/ledger-critic/test/ledger-bad-input.test.ts',
  'services/ledger-critic/test/ledger-commands-mutants.test.ts',
  'services/ledger-critic/test/ledger-operations.test.ts',
  'services/ledger-critic/test/ledger-replay-mutants.test.ts',
  'services/ledger-critic/test/ledger-verdict-mutants.test.ts',
  'services/ledger-critic/test/llm-quote-support.test.ts',
  'services/ledger-critic/test/render-ledger-mutants.test.ts',
  'services/ledger-critic/test/render-ledger.test.ts',
  'services/vision-router/test/config.test.ts',
  'services/vision-router/test/observe-image.test.ts',
  'services/vision-router/test/ocr-pool.test.ts',
  'services/vision-router/test/plan-evidence.test.ts',
  'services/vision-router/test/read-text.test.ts',
  'services/vision-router/test/run-ladder.test.ts',
  'shared/contracts/test/lines-within-bytes.test.ts',
  'shared/contracts/test/mcp-catalog.test.ts',
  'shared/contracts/test/operation-table.test.ts',
  'shared/contracts/test/result-budget.test.ts',
  'shared/judge/test/blind-4-readings.test.ts',
  'shared/judge/test/fooled-approvals.test.ts',
  'shared/judge/test/candidates.test.ts',
  'shared/judge/test/derive-claims-mutants.test.ts',
  'shared/judge/test/extract-features.test.ts',
  'shared/judge/test/observation-features.test.ts',
  'shared/judge/test/issue-16-patterns.test.ts',
  'shared/judge/test/fast-replies.test.ts',
  'shared/judge/test/blind-5-readings.test.ts',
  'shared/judge/test/judge-card.test.ts',
  'shared/judge/test/lexicon.test.ts',
  'shared/judge/test/quoted-support-mutants.test.ts',
  'shared/judge/test/quoted-support.test.ts',
  'shared/judge/test/read-values.test.ts',
  'shared/judge/test/reconcile-claims-mutants.test.ts',
  'shared/judge/test/result-scope.test.ts',
  'shared/judge/test/probed-readings.test.ts',
  'shared/judge/test/stated-order.test.ts',
  'shared/media/test/check-image.test.ts',
  'shared/media/test/decode-base64.test.ts',
  'shared/media/test/image-limits.test.ts',
  'shared/media/test/media-reader.test.ts',
  'shared/platform/test/config.test.ts',
  'shared/platform/test/logger.test.ts',
  'shared/platform/test/ollama-call.test.ts',
  'shared/platform/test/ops-server.test.ts',
  'shared/platform/test/tenant-label.test.ts',
  'shared/testing/test/go-json-decode.test.ts',
  'shared/testing/test/images.test.ts',
  'shared/testing/test/ollama-failures.test.ts',
  'shared/testing/test/ollama-test-server.test.ts',
];

/** Tests that start processes, the full stack or a clone. */
export const SYSTEM = [
  'deploy/test/gpu-overlay.test.ts',
  'deploy/test/gpu-pod-scripts.test.ts',
  'deploy/test/image-files.test.ts',
  'deploy/test/promtool.test.ts',
  'services/board-dispatcher/test/dispatcher-processes.test.ts',
  'services/board-dispatcher/test/redis-restart.test.ts',
  'services/extractor/test/gpu-gate-cli.test.ts',
  'services/gateway/test/keys-cli.test.ts',
  'services/gateway/test/mcp-conformance.test.ts',
  'services/gateway/test/mcp-stdio.test.ts',
  'services/gateway/test/mcp.test.ts',
  'services/gateway/test/media-memory.test.ts',
  'services/gateway/test/operation-fuzz.test.ts',
  'services/gateway/test/pgbouncer.test.ts',
  'services/gateway/test/process-config.test.ts',
  'services/gateway/test/process-lifecycle.test.ts',
  'services/gateway/test/redis-sentinel-detector.test.ts',
  'services/gateway/test/redis-sentinel-failover.test.ts',
  'services/gateway/test/tenant-budgets.test.ts',
  'services/gateway/test/tenant-floods.test.ts',
  'services/gateway/test/tenant-isolation.test.ts',
  'services/ledger-critic/test/process-startup.test.ts',
  'services/ledger-critic/test/worker-crash.test.ts',
  'services/vision-router/test/memory-returns.test.ts',
  'services/vision-router/test/worker-crash.test.ts',
  'shared/contracts/test/openapi-lint.test.ts',
  'shared/platform/test/local-stack.test.ts',
  'shared/platform/test/tenant-fairness.test.ts',
  'shared/platform/test/worker-crash.test.ts',
  'shared/testing/test/fake-nvidia-smi.test.ts',
  'shared/testing/test/standalone-clone.test.ts',
];

export default defineConfig({
  resolve: { conditions: ['@vouch/source'] },
  ssr: { resolve: { conditions: ['@vouch/source'], externalConditions: ['@vouch/source'] } },
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, isolate: false } },
      { extends: true, test: { name: 'integration', include: ALL, exclude: [...UNIT, ...SYSTEM] } },
      { extends: true, test: { name: 'system', include: SYSTEM } },
    ],
  },
});
