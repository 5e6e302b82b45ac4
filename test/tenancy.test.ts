import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Tenancy is written once (src/platform/database/tenancy.ts, issue 23): every statement and ORM filter that limits
 * rows to the caller's organizations says so with `ownedBy` or `inOrganizations`. A hand-written variant of the
 * condition anywhere else fails here, with where it stands, so that a newcomer finds every tenancy condition by
 * those two names (migrations, which define the schema, are not requests' statements).
 */

const ROOT = path.resolve(__dirname, '../src');
const TENANCY = path.join(ROOT, 'platform/database/tenancy.ts');

/** Ways of writing the condition by hand, as they stood before it had one home. */
const HAND_WRITTEN: Array<[string, RegExp]> = [
  ['organization_id = any(...)', /organization_id\s*=\s*any\s*\(/i],
  ['organization_id in (select ...)', /organization_id\s+in\s*\(\s*select/i],
  ['an ORM $in filter on the caller\'s organizations', /\$in\s*:\s*[\w.]*adminOrganizationIds/],
  ['the caller\'s organizations as a JSON parameter', /JSON\.stringify\([\w.]*adminOrganizationIds/],
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'migrations' ? [] : sources(full);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [full] : [];
  });
}

describe('tenancy', () => {
  it('is stated with ownedBy or inOrganizations, never written by hand', () => {
    const found: string[] = [];
    for (const file of sources(ROOT).filter((f) => f !== TENANCY)) {
      const text = readFileSync(file, 'utf8');
      for (const [what, pattern] of HAND_WRITTEN) {
        const m = pattern.exec(text);
        if (m) found.push(`${path.relative(ROOT, file)}:${text.slice(0, m.index).split('\n').length}: ${what}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('is used by every module that reads tenants\' rows', () => {
    // The condition's two names, where the modules state it: a module that stopped using them has either no tenant
    // rows any more or a condition of its own, which the test above would have caught.
    const users = sources(ROOT).filter((f) => /\b(ownedBy|inOrganizations)\(/.test(readFileSync(f, 'utf8')));
    const modules = new Set(users.map((f) => path.relative(ROOT, f).split(path.sep).slice(0, 2).join('/')));
    expect([...modules].sort()).toEqual(expect.arrayContaining([
      'modules/changes', 'modules/companies', 'modules/documents', 'modules/invitations', 'modules/leveling',
      'modules/organizations', 'modules/partner-roles', 'modules/projects', 'modules/statistics', 'modules/templates',
      'modules/tools', 'modules/trades',
    ]));
  });
});
