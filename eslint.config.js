// One linter (ESLint + typescript-eslint) and one formatter (Prettier, checked by `npm run lint`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'data/**', 'tools/mongo-standin/target/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Headers: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, and only types from activities.
    files: ['workflows/**/*.ts'],
    // Tests of the workflows run outside the sandbox, in node's test runner.
    ignores: ['**/*.unit.test.ts', '**/*.model.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflows must not use Node built-ins (determinism).' },
            {
              group: ['../activities/*', '../activities'],
              allowTypeImports: true,
              message: 'Workflows may import only types from activities; call them through proxyActivities.',
            },
            {
              group: ['../store/*', '../services/*', '../models/*', '../api/*', '../runtime/*'],
              message: 'Workflows reach I/O only through activities.',
            },
          ],
          paths: [
            'fs',
            'path',
            'os',
            'crypto',
            'child_process',
            'http',
            'https',
            'net',
            'worker_threads',
            'process',
            'buffer',
            'stream',
            'util',
            'events',
            'timers',
          ],
        },
      ],
    },
  },
  {
    // The floors (README, Architecture): the bottom floors know nothing of persistence. Their unit
    // tests may build fixtures through the store.
    files: ['core/**/*.ts', 'extractors/**/*.ts', 'snapshot/**/*.ts', 'config/**/*.ts', 'models/**/*.ts'],
    ignores: ['**/*.unit.test.ts', '**/*.model.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', '**/services/*', '**/api/*', '**/runtime/*', '**/activities/*'],
              message: 'core/, extractors/, snapshot/, config/ and models/ sit below the store: import domain types from core/.',
            },
          ],
        },
      ],
    },
  },
  {
    // The API presents domain records; persistence shapes (`_id`, driver types) stay behind services.
    files: ['api/**/*.ts'],
    ignores: ['**/*.unit.test.ts', '**/*.model.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*'],
              message: 'api/ reaches data through services and presents domain types from core/, never store types.',
            },
          ],
        },
      ],
    },
  },
  {
    // Above the store every layer sees domain records with `id`: `_id` and the store's `*Doc` row
    // types stay in store/ (the persistence shapes; see store/stored.ts).
    files: ['api/**/*.ts', 'services/**/*.ts', 'search/**/*.ts', 'activities/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "Identifier[name='_id']", message: "`_id` is the store's: records above store/ carry `id`." },
        { selector: "Literal[value='_id']", message: "`_id` is the store's: records above store/ carry `id`." },
      ],
    },
  },
  {
    files: ['services/**/*.ts', 'search/**/*.ts', 'activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*'],
              importNamePattern: 'Doc$',
              message: 'Store row types (`*Doc`) stay in store/: use the domain record the repository returns.',
            },
          ],
        },
      ],
    },
  },
  {
    // The store is persistence only: the rules that decide what to write sit above it (core/procedures/ and the like).
    files: ['store/**/*.ts'],
    ignores: ['**/*.unit.test.ts', '**/*.model.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/extractors/*', '**/extractors/**', '**/services/*', '**/search/*', '**/api/*', '**/activities/*', '**/runtime/*'],
              message: 'store/ holds typed persistence only: domain rules go in core/ (or extractors/), called by services and activities.',
            },
          ],
        },
      ],
    },
  },
  prettier,
);
