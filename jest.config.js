// One Jest configuration for the whole workspace. Tests run as native ESM (the `test` script
// passes --experimental-vm-modules) and TypeScript is stripped by SWC; types are checked by
// `pnpm typecheck`, not here. Workspace packages resolve to their sources through the
// `@gateway/source` export condition, so no build step is needed before testing.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  testEnvironmentOptions: {
    customExportConditions: ['@gateway/source', 'node', 'node-addons'],
  },
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/scripts'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      },
    ],
  },
  globalSetup: '<rootDir>/scripts/jest-global-setup.js',
  globalTeardown: '<rootDir>/scripts/jest-global-teardown.js',
  // The one time limit of every test and hook. Tests and hooks set none of their own: on a
  // busy two-core machine a first start of the embedded database, a browser or four split
  // processes can take minutes, and a test that hangs still fails, naming itself.
  testTimeout: 240_000,
  // Three workers on two cores: much of a test's time is spent waiting on the processes it
  // starts (gateways, browsers, Redis setups, databases), and a third worker fills that wait.
  maxWorkers: 3,
  // At the end of the run a worker's event loop drains (no handle is left open) and the
  // process then frees its heap before it ends: on a busy two-core machine that takes one to
  // three seconds between the worker's 'exit' event and its parent seeing it go. Jest's
  // default grace is half a second, after which it kills the worker and reports a leak.
  workerGracefulExitTimeout: 10_000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
