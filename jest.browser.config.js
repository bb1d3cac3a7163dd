/**
 * The browser step (issue 23): spec/browser/*.spec.ts drive Debian's chromium (playwright-core) against the
 * built host and its page. One at a time (`--runInBand`: one chromium, one host, on a 2-core machine),
 * with their own timeout; `npm test` runs them after the main jest run.
 */
/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec/browser'],
  testMatch: ['**/*.spec.ts'],
  setupFilesAfterEnv: ['<rootDir>/spec/support/leak-check.ts'],
  maxWorkers: 1,
  // Once per run: chromium is there (or a loud failure), and its and playwright-core's versions.
  globalSetup: '<rootDir>/spec/support/browser-global-setup.ts',
  testTimeout: 120000,
  reporters: ['default', ['<rootDir>/scripts/jest-summary-reporter.js', { name: 'browser' }]],
};
