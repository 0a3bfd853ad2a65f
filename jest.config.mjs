// Jest runs in ESM mode (NestJS 12 is ESM-only); @swc/jest strips types and keeps decorator metadata.
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    // The build is CommonJS, where a module finds files beside it through __dirname; ESM has import.meta.dirname.
    transform: { legacyDecorator: true, decoratorMetadata: true, optimizer: { globals: { vars: { __dirname: 'import.meta.dirname' } } } },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  rootDir: '.',
  testEnvironment: 'node',
  // End-to-end suites start servers and databases on 2 shared cores: 5 s is too tight for their hooks.
  testTimeout: 30_000,
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  moduleNameMapper: {
    '^@app/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    // The SDK under its published name, as its examples and the docs import it.
    '^@session-broker/sdk$': '<rootDir>/libs/sdk/src/index.ts',
  },
  testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
