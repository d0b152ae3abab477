// Lint rules for the TypeScript sources, tests and benchmarks.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-results/**', 'coverage/**', '.data/**', 'bench/.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', document: 'readonly', window: 'readonly', EventSource: 'readonly', fetch: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', performance: 'readonly', AbortController: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  // TypeScript checks names itself (typescript-eslint's advice), including Node and DOM globals.
  { files: ['**/*.ts'], rules: { 'no-undef': 'off' } },
  { files: ['bench/**', 'scripts/**', 'src/cli/**', 'test/**'], rules: { 'no-console': 'off' } },
  // The page shares the server's contract as types only: its bundle carries no zod.
  {
    files: ['src/dashboard/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/contract/*', 'zod', 'zod/*'], allowTypeImports: true, message: 'import the contract as types only (import type)' }] },
      ],
    },
  },
);
