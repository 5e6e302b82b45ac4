import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { inFileTree } from './support/file-tree';

/**
 * Nothing unused stays (knip, configured by knip.jsonc): no file that no entry point reaches, no declared
 * dependency that nothing imports, no import of an undeclared one, no export that nothing imports.
 */

const ROOT = path.resolve(__dirname, '..');
const KNIP = path.join(ROOT, 'node_modules/knip/bin/knip.js');

/** knip's findings over `cwd`, one line each (knip exits non-zero when there are some). */
function findings(cwd: string): string[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [KNIP, '--reporter', 'json', '--no-progress'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  const report = JSON.parse(out) as { issues: Array<Record<string, unknown> & { file: string }> };
  return report.issues.flatMap(({ file, ...kinds }) => Object.entries(kinds).flatMap(([kind, list]) =>
    Array.isArray(list) ? list.map((item: { name: string }) => `${kind}: ${file}: ${item.name}`) : [])).sort();
}

describe('knip (knip.jsonc)', () => {
  it('finds nothing unused or undeclared in the repository', () => {
    expect(findings(ROOT)).toEqual([]);
  }, 120000);

  it('finds an unused file, export and dependency and an undeclared import, with the same configuration (a tree made for the test)', () => {
    const files: Record<string, string> = {
      'knip.jsonc': readFileSync(path.join(ROOT, 'knip.jsonc'), 'utf8'),
      'package.json': '{ "name": "t", "private": true, "dependencies": { "left-pad": "^1.3.0" } }',
      'tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "strict": true } }',
      'src/server.ts': "import chalk from 'chalk';\nimport { used } from './platform/used';\nconsole.log(chalk, used);\n",
      'src/platform/used.ts': 'export const used = 1;\nexport const forgotten = 2;\n',
      'src/modules/orphan.ts': 'export const alone = 1;\n',
    };
    expect(inFileTree(files, findings)).toEqual([
      'dependencies: package.json: left-pad',
      'exports: src/platform/used.ts: forgotten',
      'files: src/modules/orphan.ts: src/modules/orphan.ts',
      'unlisted: src/server.ts: chalk',
    ]);
  }, 120000);
});
