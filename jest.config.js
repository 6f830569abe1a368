/** Jest runs TypeScript through swc (no type-checking here: `npm test` runs `tsc --noEmit` first). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/examples'],
  // The examples import the package by its name, as its users do.
  moduleNameMapper: { '^keelson$': '<rootDir>/src/library' },
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript', decorators: true }, transform: { decoratorMetadata: true, legacyDecorator: true } } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@marcbachmann/cel-js|jose|@kubernetes/client-node|openid-client|oauth4webapi)/)'],
  testTimeout: 60000,
  maxWorkers: 2,
};
