/**
 * A jest reporter for .ci/run: when EXEC_RX_JEST_SUMMARY_DIR is set, each jest step of `npm test` (the
 * main run and the browser step) writes `<dir>/<name>.json` with its passed, failed and total test
 * counts, so CI can print one closing line over both steps while running the README's command as is.
 * Without the variable it does nothing.
 */
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

class SummaryReporter {
  /** @param {unknown} _globalConfig @param {{ name?: string }} options */
  constructor(_globalConfig, options) {
    this.name = (options && options.name) || 'jest';
  }

  /** @param {unknown} _contexts @param {{ numPassedTests: number, numFailedTests: number, numTotalTests: number, numRuntimeErrorTestSuites: number, success: boolean, startTime: number }} results */
  onRunComplete(_contexts, results) {
    const dir = process.env.EXEC_RX_JEST_SUMMARY_DIR;
    if (dir === undefined || dir === '') return;
    mkdirSync(dir, { recursive: true });
    const summary = {
      name: this.name,
      passed: results.numPassedTests,
      failed: results.numFailedTests,
      total: results.numTotalTests,
      suitesFailedToRun: results.numRuntimeErrorTestSuites,
      success: results.success,
      seconds: Math.round((Date.now() - results.startTime) / 1000),
    };
    writeFileSync(join(dir, `${this.name}.json`), `${JSON.stringify(summary)}\n`);
  }
}

module.exports = SummaryReporter;
