import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.data/', 'jest.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  { files: ['**/*.js'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The IDE page's script runs in the browser, over the UMD globals of React, GraphiQL and graphql-ws (src/platform/graphql/ide).
  {
    files: ['src/platform/graphql/ide/browser/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser, React: 'readonly', ReactDOM: 'readonly', GraphiQL: 'readonly', graphqlWs: 'readonly' } },
  },
  // Written by `npm run codegen`, which opens each file with a blanket eslint-disable.
  { files: ['examples/graphql/generated/**'], linterOptions: { reportUnusedDisableDirectives: 'off' } },
);
