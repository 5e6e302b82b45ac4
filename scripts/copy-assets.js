#!/usr/bin/env node
/**
 * What the built service reads at run time besides its compiled code, copied into dist/ beside it (after tsc, by
 * `npm run build` and scripts/run-built.js): the IDE's browser files and the example documents it opens with. A
 * deployment of dist/ and node_modules/ alone (a container image) then serves the IDE; src/ and examples/ are not
 * needed (.ci/smoke-production starts it with both removed). The trusted documents' manifest is the operator's file
 * (GRAPHQL_TRUSTED_DOCUMENTS): the example one is copied too, under dist/examples/graphql/generated/.
 */
const fs = require('node:fs');
const path = require('node:path');

/** Sources (files or folders) under the root, copied to the same path under dist/. */
const ASSETS = [
  'src/platform/graphql/ide/browser',
  'examples/graphql/dashboard.graphql',
  'examples/graphql/fragments.graphql',
  'examples/graphql/ide',
  'examples/graphql/generated/persisted-documents.json',
];

function copyAssets(root) {
  for (const asset of ASSETS) {
    const from = path.join(root, asset);
    const to = path.join(root, 'dist', asset);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true });
  }
}

module.exports = { ASSETS, copyAssets };

if (require.main === module) copyAssets(path.resolve(__dirname, '..'));
