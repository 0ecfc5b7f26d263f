// Mutation testing for the pure domain code: `npm run test:mutation`, or one folder
// or file with `npm run test:mutation -- --mutate 'services/board-dispatcher/src/domain/**/*.ts'`.
// Each mutant runs only the tests whose coverage reached it (perTest), from the
// pure unit tests listed in vitest.mutation.config.ts, so no run needs Redis or Postgres.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'shared/judge/src/**/*.ts',
    'services/board-dispatcher/src/domain/**/*.ts',
    'services/ledger-critic/src/domain/**/*.ts',
  ],
  coverageAnalysis: 'perTest',
  // One test process: the run leaves the second core of the 2-core dev machine free.
  concurrency: 1,
  tempDirName: '.stryker-tmp',
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 80, low: 70, break: null },
};
