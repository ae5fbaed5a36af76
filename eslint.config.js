// ESLint's flat configuration: JavaScript's and typescript-eslint's recommended rules, without
// type information (a run over the whole tree takes seconds), for src/, test/ and bench/.
// Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What Node gives every script, for the plain JavaScript files (build scripts, a preloaded module). */
const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'require',
    'module',
    '__dirname',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'repos/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore marks what is left out on purpose; `{ a, ...rest }` takes `a` out of `rest`.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Names, paths and messages are checked for control characters on purpose.
      'no-control-regex': 'off',
      // `V extends {}`: any value but null and undefined, as lru-cache asks of its values.
      '@typescript-eslint/no-empty-object-type': [
        'error',
        { allowObjectTypes: 'always', allowInterfaces: 'with-single-extends' },
      ],
      // A variable a closure reads, set once later, is not a constant.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // prom-client calls a metric's collect() with the metric as `this`.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
    },
  },
  {
    // The web console bundles these folders: zod's `z` namespace object keeps all of zod in the bundle
    // (about 100 KB more), `import * as z` only what the schemas use (docs/web-console.md).
    files: ['src/{api,client,domain,lib,ui}/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value='zod'][importKind='value'] > ImportSpecifier[imported.name='z']",
          message: "import * as z from 'zod' (the console's bundle keeps only what is used)",
        },
      ],
    },
  },
  {
    // Tests read answers of any shape as JSON.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: nodeGlobals },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
