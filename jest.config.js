/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // spec/browser and spec/heavy run as steps of their own (jest.browser.config.js and jest.heavy.config.js,
  // after this one in `npm test`).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/spec/browser/', '<rootDir>/spec/heavy/'],
  // Every spec file asserts in an afterAll that it leaves nothing running.
  setupFilesAfterEnv: ['<rootDir>/spec/support/leak-check.ts'],
  // Integration specs start real executors: two workers on a 2-core machine.
  maxWorkers: 2,
  testTimeout: 60000,
  // .ci/run reads the counts (scripts/jest-summary-reporter.js writes them only when asked).
  reporters: ['default', ['<rootDir>/scripts/jest-summary-reporter.js', { name: 'main' }]],
};
