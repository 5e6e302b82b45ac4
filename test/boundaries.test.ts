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

/** The rules' findings over `cwd`'s src/ (dependency-cruiser exits non-zero when there are violations). */
function cruise(cwd: string): { violations: Violation[]; totalCruised: number } {
  let out: string;
  try {
    out = execFileSync(process.execPath, [CLI, 'src', '--config', CONFIG, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[]; totalCruised: number } }).summary;
}

const violations = (cwd: string) => cruise(cwd).violations;

const named = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}`;

describe('the import rules of src/ (.dependency-cruiser.cjs)', () => {
  it('are all kept by src/', () => {
    const { violations: found, totalCruised } = cruise(ROOT);
    // Every file of src/ was read and resolved (a broken tsconfig would leave nothing to break the rules).
    expect(totalCruised).toBeGreaterThan(250);
    expect(found.map(named)).toEqual([]);
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
      // two entities relate both ways: allowed; an entity reaching a service: not
      'src/modules/projects/project.entity.ts': "import type { Organization } from '../organizations/organization.entity';\nexport class Project { organization?: Organization; }\n",
      'src/modules/organizations/organization.entity.ts': "import type { Project } from '../projects/project.entity';\nimport type { later } from '../projects/project.service';\nexport class Organization { projects?: Project[]; next?: typeof later; }\n",
      // a folder uses a later folder's entity (the data model): allowed
      'src/modules/organizations/organization.presenter.ts': "import type { Project } from '../projects/project.entity';\nexport const shown = (p: Project) => p;\n",
      // a shared file beside the folders reaches a folder's service
      'src/modules/access.ts': "import { later } from './projects/project.service';\nexport const check = later;\n",
      // a folder imports what assembles the folders: the entity list, or the loaders for their values (their type is allowed)
      'src/modules/entities.ts': "export * from './projects/project.entity';\n",
      'src/modules/loaders.ts': "export const createLoaders = () => ({});\nexport type Loaders = ReturnType<typeof createLoaders>;\n",
      'src/modules/projects/project.resolver.ts': "import { Project } from '../entities';\nimport { createLoaders, type Loaders } from '../loaders';\nexport const make = (): Loaders => createLoaders();\nexport const P = Project;\n",
      'src/modules/projects/project.payloads.ts': "import type { Loaders } from '../loaders';\nexport type Ctx = { loaders: Loaders };\n",
      // a folder the order does not name
      'src/modules/newcomer/newcomer.service.ts': "import { clock } from '../../platform/clock';\nexport const at = clock;\n",
    };
    expect(inFileTree(files, (dir) => violations(dir).map(named).sort())).toEqual([
      'composition-above-the-folders: src/modules/projects/project.resolver.ts -> src/modules/entities.ts',
      'composition-above-the-folders: src/modules/projects/project.resolver.ts -> src/modules/loaders.ts',
      'demo-data-only-from-entry-points: src/modules/projects/project.output.ts -> src/seed/demo.ts',
      'entities-import-entities: src/modules/organizations/organization.entity.ts -> src/modules/projects/project.service.ts',
      'module-folder-in-the-order: src/modules/newcomer/newcomer.service.ts -> src/platform/clock.ts',
      'module-through-its-public-files: src/modules/organizations/organization.service.ts -> src/modules/projects/helpers.ts',
      'modules-in-one-direction: src/modules/organizations/organization.entity.ts -> src/modules/projects/project.service.ts',
      'modules-in-one-direction: src/modules/organizations/organization.service.ts -> src/modules/projects/helpers.ts',
      'platform-imports-no-module: src/platform/clock.ts -> src/modules/organizations/organization.service.ts',
      'platform-imports-no-module: src/platform/orm.ts -> mikro-orm.config.ts',
      'shared-files-below-the-folders: src/modules/access.ts -> src/modules/projects/project.service.ts',
    ]);
  }, 120000);
});
