// Lint rules. The `core/` folders are Sans-IO: the purity rule below forbids clocks, timers, process,
// node built-ins and network clients there, so purity is enforced by a tool rather than by review.
// The call host (src/services/call-host/) is used through its index only; its core/ and adapters/ are
// its own (test/unit/layers.test.ts checks the same arrows, and the call host's side of them).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const callHostInternals = {
  group: ['**/call-host/core/**', '**/call-host/adapters/**'],
  message: 'The call host is used through src/services/call-host/index.ts, not its internals.',
};

const impureImports = {
  patterns: [
    callHostInternals,
    { group: ['node:*'], message: 'core/ is Sans-IO: no node built-ins.' },
    {
      group: ['@grpc/*', 'etcd3', 'pg', 'better-sqlite3', 'pino'],
      message: 'core/ is Sans-IO: no IO clients.',
    },
    { group: ['**/adapters/**', '**/app/**'], message: 'core/ must not depend on adapters or app.' },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'bench/.work/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/services/call-host/**', 'src/**/core/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [callHostInternals] }] },
  },
  {
    files: ['src/**/core/**/*.ts'],
    ignores: ['src/**/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', impureImports],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'core/ is Sans-IO: pass values in.' },
        { name: 'setTimeout', message: 'core/ is Sans-IO: timers are data (nextDeadline).' },
        { name: 'setInterval', message: 'core/ is Sans-IO: timers are data (nextDeadline).' },
        { name: 'setImmediate', message: 'core/ is Sans-IO.' },
        { name: 'queueMicrotask', message: 'core/ is Sans-IO.' },
        { name: 'fetch', message: 'core/ is Sans-IO.' },
        { name: 'performance', message: 'core/ is Sans-IO: `now` is an argument.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'core/ is Sans-IO: `now` is an argument.' },
        { object: 'Math', property: 'random', message: 'core/ is Sans-IO: inject randomness.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'NewExpression[callee.name="Date"][arguments.length=0]',
          message: 'core/ is Sans-IO: `now` is an argument.',
        },
      ],
    },
  },
  {
    // Generated proto types (scripts/gen-proto.mjs) are linted like the rest, so a regenerated stub passes
    // the same check as the change that regenerated it; the generator writes `any` in its grpc.Client
    // constructor types and empty interfaces for empty messages, which these two rules would refuse.
    files: ['src/generated/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
    },
  },
);
