/**
 * The shape of src/ as rules (docs/architecture.md, "Boundaries"). `npm run boundaries` (the report) and
 * test/boundaries.test.ts run them, and there is no violation to tolerate.
 */
/**
 * Files of a module that other modules may import: its service, records (outputs, entities), inputs, payloads,
 * presenters and the SQL fragments others join on (`<name>.sql.ts`).
 */
const PUBLIC_FILES = '\\.(service|output|input|entity|payloads|presenter|sql)\\.ts$';

/**
 * The module folders from the bottom up: a folder imports only folders before it, so their graph has no cycle.
 * The entities are the exception: they are the data model (the tables), which any folder may use, and they import
 * only each other (a MikroORM relation is declared on both sides: a project's trades, a trade's project).
 */
const MODULE_ORDER = [
  'tools', 'statistics', 'organizations', 'companies', 'identity', 'partner-roles', 'projects', 'trades',
  'contractors', 'documents', 'templates', 'invitations', 'leveling', 'changes', 'webhooks',
];
const ENTITY = '\\.entity\\.ts$';
/** Beside the folders, files every folder may use (access checks, project locks, GraphQL enums, API examples). */
const SHARED = '^src/modules/(access|project-locks|enums|examples)\\.ts$';
/** Beside the folders, the files that assemble them (the ORM's entity list, the schema, the REST routes). */
const COMPOSITION = '^src/modules/(entities|schema|rest)\\.ts$';

function moduleOrderRules() {
  const comment = `Module folders import each other one way, in this order: ${MODULE_ORDER.join(' < ')} (entities aside).`;
  const later = (i) => `^src/modules/(${MODULE_ORDER.slice(i + 1).join('|')})/`;
  return [
    {
      name: 'module-folder-in-the-order',
      comment: 'Every module folder has its place in MODULE_ORDER.',
      severity: 'error',
      from: { path: `^src/modules/(?!(${MODULE_ORDER.join('|')})/)[^/]+/` },
      to: {},
    },
    ...MODULE_ORDER.slice(0, -1).map((folder, i) => (
      { name: 'modules-in-one-direction', comment, severity: 'error', from: { path: `^src/modules/${folder}/` }, to: { path: later(i), pathNot: ENTITY } })),
    {
      name: 'entities-import-entities',
      comment: 'The data model stands alone: an entity imports other entities and platform, nothing else of a module.',
      severity: 'error',
      from: { path: `^src/modules/.*${ENTITY}` },
      to: { path: '^src/modules/', pathNot: ENTITY },
    },
    {
      name: 'shared-files-below-the-folders',
      comment: 'The files beside the folders that every folder uses import only entities, platform and each other.',
      severity: 'error',
      from: { path: SHARED },
      to: { path: '^src/modules/[^/]+/', pathNot: ENTITY },
    },
    {
      name: 'composition-above-the-folders',
      comment: 'A folder imports no file that assembles the folders (it would import them all).',
      severity: 'error',
      from: { path: '^src/modules/[^/]+/' },
      to: { path: COMPOSITION },
    },
    {
      name: 'composition-above-the-folders',
      comment: 'The GraphQL context holds every loader: a folder names their types; only changes/ (which runs GraphQL for each update) makes a context.',
      severity: 'error',
      from: { path: '^src/modules/(?!changes/)[^/]+/' },
      to: { path: '^src/modules/(context|loaders)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
  ];
}

module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-module',
      comment: 'src/platform is what every module uses: it imports no module, no migration, no demo data, no entry point (mikro-orm.config.ts, which names the data model, is one).',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|seed|cli|migrations)/|^src/(app|server)\\.ts$|^mikro-orm\\.config\\.ts$' },
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
    ...moduleOrderRules(),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
