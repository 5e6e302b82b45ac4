import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The shape of src/ as rules (.dependency-cruiser.cjs; docs/architecture.md, "Boundaries"), checked by
 * dependency-cruiser. The cycles between module folders left to remove are listed in
 * .dependency-cruiser-known-violations.json (`npm run boundaries:baseline`): nothing may be added to that list, and
 * what is fixed must leave it. (dependency-cruiser's own --ignore-known does not apply to folder-level rules, so the
 * comparison is made here.)
 */

const ROOT = path.resolve(__dirname, '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const CLI = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string }>;
}

/** The rules' violations over `cwd`'s src/ (dependency-cruiser exits non-zero when there are some). */
function violations(cwd: string): Violation[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [CLI, 'src', '--config', CONFIG, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

const named = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`;

describe('the import rules of src/ (.dependency-cruiser.cjs)', () => {
  let found: string[];
  let known: string[];
  beforeAll(() => {
    found = violations(ROOT).map(named).sort();
    known = (JSON.parse(readFileSync(path.join(ROOT, '.dependency-cruiser-known-violations.json'), 'utf8')) as Violation[]).map(named).sort();
  }, 120000);

  it('breaks none beyond the known cycles between module folders', () => {
    expect(found.filter((v) => !known.includes(v))).toEqual([]);
  });

  it('keeps no fixed cycle in the list of known ones (the list only shrinks)', () => {
    expect(known.filter((v) => !found.includes(v))).toEqual([]);
    expect(known.every((v) => v.startsWith('no-cycle-between-module-folders:'))).toBe(true);
  });

  it('fails on each kind of forbidden import (a tree made for the test)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'boundaries-'));
    try {
      const files: Record<string, string> = {
        'tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "strict": true } }',
        // platform imports a module
        'src/platform/clock.ts': "import { now } from '../modules/alpha/alpha.service';\nexport const clock = now;\n",
        // a module reaches another's internals, and the two folders import each other
        'src/modules/alpha/alpha.service.ts': "import { helper } from '../beta/helpers';\nexport const now = () => helper();\n",
        'src/modules/beta/helpers.ts': "export const helper = () => 1;\n",
        'src/modules/beta/beta.service.ts': "import { now } from '../alpha/alpha.service';\nexport const later = () => now() + 1;\n",
        // a module imports the demo data
        'src/modules/beta/beta.output.ts': "import { DEMO } from '../../seed/demo';\nexport const example = DEMO;\n",
        'src/seed/demo.ts': "export const DEMO = 'demo';\n",
      };
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      }
      const rules = [...new Set(violations(dir).map((v) => v.rule.name))].sort();
      expect(rules).toEqual(['demo-data-only-from-entry-points', 'module-through-its-public-files', 'no-cycle-between-module-folders', 'platform-imports-no-module']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120000);
});
