import { defineConfig } from 'vitest/config';

// The tests Stryker runs against each mutant (stryker.config.mjs): only the pure
// unit tests of the mutated folders. Each file here imports domain code and fixtures
// only, never a store, a queue or a server, so a mutant run needs no Redis or
// Postgres and cannot touch the shared ones. The integration suites (board-service,
// ledger-store, *-http, worker-crash, ...) stay in vitest.config.ts: they are slow
// and add no kill a pure test could not make.
export default defineConfig({
  resolve: { conditions: ['@vouch/source'] },
  ssr: { resolve: { conditions: ['@vouch/source'], externalConditions: ['@vouch/source'] } },
  test: {
    include: [
      'shared/judge/test/**/*.test.ts',
      'services/board-dispatcher/test/board-domain.test.ts',
      'services/board-dispatcher/test/board-replay.property.test.ts',
      'services/board-dispatcher/test/*-mutants.test.ts',
      'services/ledger-critic/test/critic-corpus.test.ts',
      'services/ledger-critic/test/critic-packet.test.ts',
      'services/ledger-critic/test/derive-claims.test.ts',
      'services/ledger-critic/test/ledger-bad-input.test.ts',
      'services/ledger-critic/test/ledger-replay.test.ts',
      'services/ledger-critic/test/reconcile-claims.test.ts',
      'services/ledger-critic/test/render-ledger.test.ts',
      'services/ledger-critic/test/terminal-discipline.test.ts',
      'services/ledger-critic/test/*-mutants.test.ts',
    ],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 30_000,
  },
});
