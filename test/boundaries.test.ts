import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { inFileTree } from './support/file-tree';

/**
 * The shape of src/ as rules (.dependency-cruiser.cjs; docs/architecture.md, "Boundaries"), checked by
 * dependency-cruiser: src/ breaks none, and a tree made for the test breaks each.
 */

const ROOT = path.resolve(__dirname, '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const CLI = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
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

const named = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}`;

describe('the import rules of src/ (.dependency-cruiser.cjs)', () => {
  it('are all kept by src/', () => {
    expect(violations(ROOT).map(named)).toEqual([]);
  }, 120000);

  it('fail on each kind of forbidden import, and let entities relate both ways (a tree made for the test)', () => {
    const files: Record<string, string> = {
      'tsconfig.json': '{ "compilerOptions": { "module": "commonjs", "strict": true } }',
      // platform imports a module
      'src/platform/clock.ts': "import { now } from '../modules/organizations/organization.service';\nexport const clock = now;\n",
      // a module reaches another's internals, which is also a later folder in the order
      'src/modules/organizations/organization.service.ts': "import { helper } from '../projects/helpers';\nexport const now = () => helper();\n",
      'src/modules/projects/helpers.ts': "export const helper = () => 1;\n",
      // a later folder uses an earlier one's service: allowed
      'src/modules/projects/project.service.ts': "import { now } from '../organizations/organization.service';\nexport const later = () => now() + 1;\n",
      // a module imports the demo data
      'src/modules/projects/project.output.ts': "import { DEMO } from '../../seed/demo';\nexport const example = DEMO;\n",
      'src/seed/demo.ts': "export const DEMO = 'demo';\n",
      // platform reaches the data model through the entry points' file
      'src/platform/orm.ts': "import { MODEL } from '../../mikro-orm.config';\nexport const model = MODEL;\n",
      'mikro-orm.config.ts': "export const MODEL = {};\n",
      // two entities relate both ways: allowed; an entity reaching a later folder's service: not
      'src/modules/projects/project.entity.ts': "import type { Organization } from '../organizations/organization.entity';\nexport class Project { organization?: Organization; }\n",
      'src/modules/organizations/organization.entity.ts': "import type { Project } from '../projects/project.entity';\nimport type { later } from '../projects/project.service';\nexport class Organization { projects?: Project[]; next?: typeof later; }\n",
      // a folder the order does not name
      'src/modules/newcomer/newcomer.service.ts': "import { clock } from '../../platform/clock';\nexport const at = clock;\n",
    };
    expect(inFileTree(files, (dir) => violations(dir).map(named).sort())).toEqual([
      'demo-data-only-from-entry-points: src/modules/projects/project.output.ts -> src/seed/demo.ts',
      'module-folder-in-the-order: src/modules/newcomer/newcomer.service.ts -> src/platform/clock.ts',
      'module-through-its-public-files: src/modules/organizations/organization.service.ts -> src/modules/projects/helpers.ts',
      'modules-in-one-direction: src/modules/organizations/organization.entity.ts -> src/modules/projects/project.service.ts',
      'modules-in-one-direction: src/modules/organizations/organization.service.ts -> src/modules/projects/helpers.ts',
      'platform-imports-no-module: src/platform/clock.ts -> src/modules/organizations/organization.service.ts',
      'platform-imports-no-module: src/platform/orm.ts -> mikro-orm.config.ts',
    ]);
  }, 120000);
});
