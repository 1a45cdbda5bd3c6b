import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import moduleCycles from './eslint-rules/module-cycles.js';

// Module walls (docs/ARCHITECTURE.md): a module reaches another only through its index.ts, and so
// does everything outside the modules (app.ts, cli/). Tests may open a module's files to test them.
const INTO_ANOTHER_MODULE = '^\\.\\./(?!\\.\\.)[^/]+/(?!index\\.js$)[^/]+$';
const INTO_A_MODULE_FROM_OUTSIDE = '(^|/)modules/[^/]+/(?!index\\.js$)[^/]+$';
const wall = (regex, message) => ['error', { patterns: [{ regex, message }] }];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'test/generated-client/', 'console/src/api/schema.d.ts', 'src/domain/stix-pattern/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always'],
      // A file over 500 lines is two concerns: split it (x.<concern>.ts).
      'max-lines': ['error', { max: 500 }],
    },
  },
  {
    // The console runs in the browser, and draws leak data written by strangers: as text only.
    files: ['console/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']", message: 'Render values as text: React escapes them; HTML from data is an XSS.' },
        { selector: "AssignmentExpression[left.property.name=/^(innerHTML|outerHTML)$/]", message: 'Set textContent, never HTML.' },
        { selector: "CallExpression[callee.property.name=/^(insertAdjacentHTML|write|writeln)$/]", message: 'Never write HTML from data.' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX, threatmon: { rules: { 'module-cycles': moduleCycles } } },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      // Circles of files (values); threatmon/module-cycles adds circles of modules, types included.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'threatmon/module-cycles': 'error',
      'no-restricted-imports': wall(INTO_A_MODULE_FROM_OUTSIDE, "Import a module through its index.ts (src/modules/<name>/index.js), not one of its files."),
    },
  },
  {
    files: ['src/modules/*/**/*.ts'],
    rules: {
      'no-restricted-imports': wall(INTO_ANOTHER_MODULE, "Import another module through its index.ts ('../<module>/index.js'), not one of its files."),
    },
  },
);
