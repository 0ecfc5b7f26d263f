// One lint set-up for every workspace package.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.turbo/**', '.run/**', '.stryker-tmp*/**', 'reports/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // CLIs, benchmarks and scripts talk to a person on stdout.
    files: ['bench/**', 'scripts/**', '**/src/cli/**', 'harness/**', '**/test/**', 'shared/testing/**'],
    rules: { 'no-console': 'off' },
  },
);
