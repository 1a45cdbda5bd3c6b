import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The project's own ESLint configuration, run over a small tree that breaks each module wall once:
 * if a rule stops working (a plugin update, a changed pattern), this fails.
 */
describe('npm run lint holds the module walls', () => {
  let dir: string;
  let results: ESLint.LintResult[];
  const errorsIn = (file: string) =>
    (results.find((r) => r.filePath === path.join(dir, file))?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-lint-'));
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
      'src/modules/alpha/index.ts': "export { alpha } from './alpha.service.js';\n",
      'src/modules/alpha/alpha.service.ts': 'export const alpha = 1;\n',
      // Into another module's file instead of its index.
      'src/modules/beta/index.ts': "import { alpha } from '../alpha/alpha.service.js';\nexport const beta = alpha + 1;\n",
      // Through the index: allowed.
      'src/modules/epsilon/index.ts': "import { alpha } from '../alpha/index.js';\nexport const epsilon = alpha + 2;\n",
      // A circle between two modules, one side by type only.
      'src/modules/gamma/index.ts': "import { delta } from '../delta/index.js';\nexport type Gamma = { n: number };\nexport const gamma = delta;\n",
      'src/modules/delta/index.ts': "import type { Gamma } from '../gamma/index.js';\nexport const delta: Gamma = { n: 1 };\n",
      // A circle of files inside one module.
      'src/modules/zeta/zeta.a.ts': "import { b } from './zeta.b.js';\nexport const a = () => b;\n",
      'src/modules/zeta/zeta.b.ts': "import { a } from './zeta.a.js';\nexport const b = () => a;\n",
      // From outside the modules, into a module's file.
      'src/cli/main.ts': "import { alpha } from '../modules/alpha/alpha.service.js';\nexport const cli = alpha;\n",
      'src/long.ts': Array.from({ length: 501 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n',
    };
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const eslint = new ESLint({ cwd: dir, overrideConfigFile: path.join(ROOT, 'eslint.config.js') });
    results = await eslint.lintFiles(['src/**/*.ts']);
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("refuses an import of another module's file, from a module or from outside the modules", () => {
    expect(errorsIn('src/modules/beta/index.ts')).toEqual([expect.stringMatching(/^no-restricted-imports: .*through its index\.ts/)]);
    expect(errorsIn('src/cli/main.ts')).toEqual([expect.stringMatching(/^no-restricted-imports: .*through its index\.ts/)]);
  });

  it('refuses an import circle, type-only imports included', () => {
    expect(errorsIn('src/modules/gamma/index.ts')).toEqual([expect.stringMatching(/^threatmon\/module-cycles: Module circle: gamma -> delta -> gamma/)]);
    expect(errorsIn('src/modules/delta/index.ts')).toEqual([expect.stringMatching(/^threatmon\/module-cycles: Module circle: delta -> gamma -> delta/)]);
  });

  it('refuses a circle of files, inside a module too', () => {
    expect(errorsIn('src/modules/zeta/zeta.a.ts')).toEqual([expect.stringMatching(/^import-x\/no-cycle: Dependency cycle/)]);
    expect(errorsIn('src/modules/zeta/zeta.b.ts')).toEqual([expect.stringMatching(/^import-x\/no-cycle: Dependency cycle/)]);
  });

  it('refuses a file over 500 lines', () => {
    expect(errorsIn('src/long.ts')).toEqual([expect.stringMatching(/^max-lines: File has too many lines \(501\)/)]);
  });

  it('passes what keeps to the walls', () => {
    for (const ok of ['src/modules/alpha/index.ts', 'src/modules/alpha/alpha.service.ts', 'src/modules/epsilon/index.ts']) expect(errorsIn(ok), ok).toEqual([]);
  });
});
