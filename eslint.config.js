// ESLint (flat config) for the whole repository: `npm run lint` runs `eslint . --max-warnings 0`.
//
// Formatting is Prettier's job (.prettierrc.json, `npm run format:check`): no stylistic rule is enabled here, so
// eslint-config-prettier is not needed. Every rule below is an error; zero warnings is the bar.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const TS = ['**/*.ts', '**/*.cts', '**/*.mts'];

// Import boundaries and cycles are checked by dependency-cruiser (.dependency-cruiser.cjs, `npm run lint:imports`).

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'fixtures/', 'coverage/', 'otel/', 'schemas/', 'contrib/', 'docs/'] },

  js.configs.recommended,

  // TypeScript everywhere (src/, test/, vitest.config.ts): type-aware through the project service.
  {
    files: TS,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // vitest.config.ts sits outside tsconfig.json's include (it is not compiled); lint it with default options.
        projectService: { allowDefaultProject: ['vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The codebase marks deliberately unused parameters (a mapper's uniform signature) and bindings with a leading _.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // Off: `async` without `await` is used on purpose, to implement Promise-returning interfaces (Sink.flush) and
      // to turn a synchronous throw into a rejection. A missing await that matters is caught by no-floating-promises.
      '@typescript-eslint/require-await': 'off',
      // Relaying a caught value (`catch (err) { reject(err) }`) passes on what was thrown, as a rethrow would.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],

      // From strict-type-checked, where it pays (bug classes, few findings):
      // `'a' + maybeUndefined` writes "undefined" into a string.
      '@typescript-eslint/restrict-plus-operands': [
        'error',
        { allowAny: false, allowBoolean: false, allowNullish: false, allowNumberAndString: false, allowRegExp: false },
      ],
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'error',
      // Beyond the presets, bug classes that cost nothing today:
      // a switch without `default` over a union (AepType, hook names) must list every member.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `return promise` inside try/catch skips the catch; `return await` there.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // Deprecated APIs of the dependencies (OpenTelemetry moves fast) show up at lint time, not at the next major.
      '@typescript-eslint/no-deprecated': 'error',

      // Left off from strict-type-checked, deliberately:
      // - no-non-null-assertion: with noUncheckedIndexedAccess the code uses `!` where an index is known to exist.
      // - no-unnecessary-condition: the validators re-check values that were cast from parsed input, and loops test
      //   fields that change across an await; the rule reports both as unnecessary.
      // - no-confusing-void-expression / no-meaningless-void-operator / no-invalid-void-type: `return void f()` and
      //   `void | Promise<void>` (a sink may finish synchronously) are the house style.
      // - restrict-template-expressions stays at the recommended options: numbers and booleans in messages are fine.
      // - prefer-nullish-coalescing (not enabled): `||` is deliberate where an empty string means unset.
    },
  },

  // Runtime code: no console (diagnostics go through the pino logger; user-facing CLI output writes to
  // process.stdout/stderr explicitly).
  {
    files: ['src/**'],
    rules: { 'no-console': 'error' },
  },
  // The shim is CommonJS compiled to .cjs; it loads node:os lazily (only when HOME is unset) to keep its start cheap.
  {
    files: ['src/shim/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },

  // Tests and their tools read JSON (HTTP replies, JSONL history, OTLP payloads, spawned processes' output) and
  // assert on it: there `any` is allowed and the no-unsafe-* family is off, because a wrong shape fails the
  // assertion at run time, which is exactly what the test is for. Promise rules (no-floating-promises,
  // no-misused-promises, await-thenable) stay on: an un-awaited assertion is a test that cannot fail.
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // Plain JavaScript (this file, test preloads and the fixture recorder's hook): no type information, Node globals.
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: Object.fromEntries(['process', 'Buffer', 'console', 'MessageChannel', 'URL', 'setTimeout', 'clearTimeout'].map((g) => [g, 'readonly'])),
    },
  },
  // The live view's page (ui/): browser ES modules served as they are (no build), with the browser's globals.
  {
    files: ['ui/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'location',
          'history',
          'sessionStorage',
          'fetch',
          'TextDecoderStream',
          'AbortController',
          'AbortSignal',
          'DOMException',
          'URL',
          'requestAnimationFrame',
          'setTimeout',
          'clearTimeout',
          'setInterval',
        ].map((g) => [g, 'readonly']),
      ),
    },
    rules: { 'no-console': 'error', 'no-eval': 'error', 'no-implied-eval': 'error', 'no-new-func': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: Object.fromEntries(['require', 'module', 'exports', '__dirname', '__filename'].map((g) => [g, 'readonly'])),
    },
  },
);
