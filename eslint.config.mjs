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
    // A function of the product reads in one screen: longer ones become a class with its state, or steps named for
    // what they do (issue 74; the tests, scripts and benches are exempt).
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 79 }] },
  },
  {
    // Workflow code and the kernel it imports: everything here is evaluated in every cached workflow, so it stays free
    // of Node built-ins and of heavy modules (zod is used at the edges only: client/input.ts is the client's schema).
    // In a wing (coordinator/, watch/) every file is workflow code unless its name says where else it runs.
    files: ['src/workflows/**/*.ts', 'src/kernel/**/*.ts', 'src/coordinator/**/*.ts', 'src/watch/**/*.ts'],
    ignores: ['src/**/*.activity.ts', 'src/**/*.worker.ts', 'src/**/*.client.ts'],
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
          ],
          patterns: [
            {
              group: ['**/agent-api/*'],
              allowTypeImports: true,
              message: 'The HTTP client and the zod schemas stay out of the workflow bundle; use kernel/agent-job.',
            },
            {
              group: ['**/client', '**/client/*', '**/config', '**/config/*'],
              message:
                "Client and worker settings stay out of the workflow bundle (the input's rules: kernel/request).",
            },
            {
              group: ['**/activities', '**/activities/*', '**/*.activity', '**/*.worker', '**/*.client'],
              message:
                'Workflows know activities by their contract (workflows/activity-contract.ts); worker and client code stays out of the bundle.',
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
  {
    // The CLI is a user of the library like any other: it takes what it needs from the public entry (src/index.ts)
    // only, so whatever it can do, a service can do with the library too.
    files: ['src/command-line/**/*.ts', 'src/cli.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(\\.\\.?/)+(client|kernel|workflows|agent-api|config|activities|worker|observability|secrets|loopback|schedules|encryption|notify|simulator|peers|coordinator|watch)(/.*)?$',
              message: "The CLI uses only the library's public API: import it from src/index.ts.",
            },
          ],
        },
      ],
    },
  },
);
