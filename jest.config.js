/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // Every spec file asserts in an afterAll that it leaves nothing running.
  setupFilesAfterEnv: ['<rootDir>/spec/support/leak-check.ts'],
  // Integration specs start real executors: two workers on a 2-core machine.
  maxWorkers: 2,
  testTimeout: 60000,
};
