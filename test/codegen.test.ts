import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(__dirname, '..');
const committed = path.join(root, 'examples/graphql/generated');

describe('examples/graphql/generated (typed documents of the front end\'s operations)', () => {
  let fresh: string;
  beforeAll(async () => {
    fresh = mkdtempSync(path.join(tmpdir(), 'codegen-'));
    // The codegen of `npm run codegen`, from the committed schema.graphql and operations, written elsewhere.
    await promisify(execFile)(process.execPath, [path.join(root, 'node_modules/.bin/graphql-codegen'), '--config', 'codegen.ts', '--silent'], {
      cwd: root, env: { ...process.env, CODEGEN_OUTPUT: `${fresh}/` }, timeout: 60_000,
    });
  }, 90_000);
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it('is what `npm run codegen` generates now (run it after changing schema.graphql or examples/graphql/*.graphql)', () => {
    const files = readdirSync(fresh).sort();
    expect(files).toEqual(readdirSync(committed).sort());
    expect(files).toContain('graphql.ts');
    for (const file of files) {
      expect([file, readFileSync(path.join(committed, file), 'utf8')]).toEqual([file, readFileSync(path.join(fresh, file), 'utf8')]);
    }
  });

  it('holds a typed document for every operation of examples/graphql', () => {
    const operations = readdirSync(path.join(root, 'examples/graphql')).filter((f) => f.endsWith('.graphql'))
      .flatMap((f) => [...readFileSync(path.join(root, 'examples/graphql', f), 'utf8').matchAll(/^(?:query|mutation|subscription) (\w+)/gm)].map((m) => m[1]));
    expect(operations).toEqual(expect.arrayContaining(['Dashboard', 'ProjectPage', 'Me', 'Organizations', 'SwitchOrganization', 'CreateProject',
      'ArchiveProject', 'CreateProjectTrade', 'UpdateProjectTrade', 'DeleteProjectTrade', 'AddTemplate', 'DeleteTemplate', 'InviteContractors', 'DashboardChanges', 'TemplateChanges']));
    const generated = readFileSync(path.join(committed, 'graphql.ts'), 'utf8');
    for (const name of operations) expect([name, generated.includes(`export const ${name}Document = `)]).toEqual([name, true]);
  });
});
