import { defineConfig } from 'vitest/config';

// One run over every workspace package. Test files share the one local Redis and
// Postgres, each under its own BullMQ prefix and Postgres schema, so files may run
// in parallel; two forks keep a 2-core machine responsive.
export default defineConfig({
  resolve: { conditions: ['@vouch/source'] },
  ssr: { resolve: { conditions: ['@vouch/source'], externalConditions: ['@vouch/source'] } },
  test: {
    include: ['shared/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'harness/test/**/*.test.ts', 'deploy/test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
