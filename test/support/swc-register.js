/**
 * `node -r ./test/support/swc-register.js src/server.ts`: runs the TypeScript sources in a real Node process
 * without a build, compiled file by file with the same swc options as jest (jest.config.js). Used by tests
 * that need the service as its own process (signals, exit codes); a tsc build would take about 10 s.
 */
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');
const jestConfig = require('../../jest.config.js');

const [, jestSwc] = Object.values(jestConfig.transform)[0];
// Dynamic import() stays one: Node loads the ESM-only packages the sources import() (the Koa integration).
const swcOptions = { ...jestSwc, module: { ...jestSwc.module, ignoreDynamic: true } };

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...swcOptions, filename, sourceMaps: 'inline' });
  module._compile(code, filename);
};

// Package files stay untouched: Node 20.19+ loads the ESM-only ones (jose) through require() itself.
module.exports = { root: path.resolve(__dirname, '../..') };
