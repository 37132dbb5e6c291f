// ESLint for the repo's own JS (scripts/check-js.sh): mistakes only; the layout is Prettier's (.prettierrc.json).
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['**/node_modules/', 'build/', 'dist/', 'cpp/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      'prefer-const': 'error',
      'no-var': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
  // The library runs in browsers, workers and Node; the demo in browsers and its workers; tests hand callbacks to a
  // browser page (page.evaluate) and run workers.
  {
    files: ['web/**', 'tests/**'],
    languageOptions: { globals: { ...globals.browser, ...globals.worker } },
  },
];
