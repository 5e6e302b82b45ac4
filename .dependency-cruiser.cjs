/**
 * The shape of src/ as rules (docs/architecture.md, "Boundaries"). `npm run boundaries` (the report) and
 * test/boundaries.test.ts run them; the violations recorded in .dependency-cruiser-known-violations.json (the
 * baseline, `npm run boundaries:baseline`) are the debt still to pay, and nothing may be added to it.
 */
/**
 * Files of a module that other modules may import: its service, records (outputs, entities), inputs, payloads,
 * presenters and the SQL fragments others join on (`<name>.sql.ts`).
 */
const PUBLIC_FILES = '\\.(service|output|input|entity|payloads|presenter|sql)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-module',
      comment: 'src/platform is what every module uses: it imports no module, no demo data, no entry point.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|seed|cli)/|^src/(app|server)\\.ts$' },
    },
    {
      name: 'demo-data-only-from-entry-points',
      comment: 'The demo data (src/seed) is loaded by the entry point and the CLI; the API names examples from src/modules/examples.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(seed|cli)/', '^src/server\\.ts$', '\\.test\\.ts$'] },
      to: { path: '^src/seed/' },
    },
    {
      name: 'module-through-its-public-files',
      comment: `A module reaches another only through its public files (${PUBLIC_FILES}).`,
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/modules/(?!$1/)[^/]+/', pathNot: PUBLIC_FILES },
    },
    {
      name: 'no-cycle-between-module-folders',
      comment: 'Module folders depend on each other one way.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/modules/[^/]+' },
      to: { path: '^src/modules/[^/]+', circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
