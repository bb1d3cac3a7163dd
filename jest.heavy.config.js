/**
 * The heavy step (issue 41): spec/heavy/*.spec.ts move a gibibyte or thousands of files through a real
 * host and executor, and one of them bounds a latency while it does. Alone, one file at a time
 * (`--runInBand`), after the main jest run in `npm test`: beside the main run's two workers they made the
 * machine their bottleneck (and the other specs' timing theirs).
 */
/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec/heavy'],
  testMatch: ['**/*.spec.ts'],
  setupFilesAfterEnv: ['<rootDir>/spec/support/leak-check.ts'],
  maxWorkers: 1,
  testTimeout: 600000,
  reporters: ['default', ['<rootDir>/scripts/jest-summary-reporter.js', { name: 'heavy' }]],
};
