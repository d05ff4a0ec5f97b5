// Lint exists here for the rules a reviewer cannot keep by eye: workflow code stays deterministic,
// and configuration is read in one place.
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'test-output/**', 'api/player/*.js', 'dashboard/**', 'dist/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Read configuration through lib/config/ (lib/config/index.ts).' },
      ],
    },
  },
  {
    files: ['lib/config/index.ts', 'cli/config.ts', 'ops/**', 'test/**', 'bench/**', 'deploy/check/**', 'eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Workflow code is replayed: no I/O, no Node built-ins, no clients. Types are fine.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code must not use Node built-ins.', allowTypeImports: true })),
          patterns: [
            { regex: '(^|/)(lib/(db|storage|net|media)(/(?!ladder$|args$|cap$|audio$)[^/]+)?|activities(/[^/]+)*)$', message: 'Workflows reach I/O only through activities (import type); of lib/media only the pure ladder, args, cap and audio.', allowTypeImports: true },
            { group: ['knex', 'pg', '@aws-sdk/*', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'fluent-ffmpeg', 'pino'], message: 'Not in workflow code.', allowTypeImports: true },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'process', message: 'Workflow code must not read the process.' }, { name: 'require', message: 'Use imports.' }],
    },
  },
);
