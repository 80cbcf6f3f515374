// Lint rules that catch what bites in Temporal code: floating promises, type-only imports, and Node built-ins or
// other non-deterministic modules in workflow code (which runs in a sandbox and is replayed).
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code and the pure modules it imports: everything here is evaluated in every cached workflow, so it
    // stays free of Node built-ins and of heavy modules (zod is used at the edges only: follow-up/input.ts is the
    // client's schema).
    files: ['src/workflows/**/*.ts', 'src/follow-up/**/*.ts', 'src/agent-api/job.ts'],
    ignores: ['src/follow-up/input.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code must not use Node built-ins.' })),
            {
              name: 'zod',
              message:
                'Keep zod out of the workflow bundle: validate at the edges, check with a small pure function here.',
            },
            {
              name: '../agent-api/schemas',
              allowTypeImports: true,
              message: 'The zod schemas stay out of the workflow bundle; use agent-api/job.',
            },
            {
              name: './input',
              allowTypeImports: true,
              message: "The client's zod schema stays out of the workflow bundle; use request.ts.",
            },
            {
              name: '../follow-up/input',
              allowTypeImports: true,
              message: "The client's zod schema stays out of the workflow bundle; use request.ts.",
            },
          ],
          patterns: [
            {
              group: ['../activities', '../activities/*'],
              allowTypeImports: true,
              message: 'Import activity types only (import type).',
            },
            {
              group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
              message: 'Not available in workflow code.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Workflow code must not read the environment.' },
        { name: 'fetch', message: 'Workflow code must do I/O through activities.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
      ],
    },
  },
);
