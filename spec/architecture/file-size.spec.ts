/**
 * Every source file is read at a glance: the project's own ESLint configuration caps a file of src/ at
 * 300 lines and a line at 180 characters (so no file gets past the cap by growing wider), and each cap
 * refuses what it must (the line cap is @stylistic/max-len: core ESLint's max-len is deprecated): the rules as the configuration resolves them for a file of src/, run on files
 * one line over and one character over, and on files just at the caps. ESLint runs in a child node (its
 * configuration loads by dynamic import, which jest's module system does not run).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** In a child node at the root: the caps the configuration gives `paths`, and the caps' messages on each of `texts` (linted as src/probe.ts). */
function eslintChild(paths: readonly string[], texts: readonly string[]): Promise<{ readonly rules: Record<string, unknown>[]; readonly messages: string[][] }> {
  const script = `
    const { ESLint } = require('eslint');
    const tseslint = require('typescript-eslint');
    const stylistic = require('@stylistic/eslint-plugin');
    const { join } = require('node:path');
    const [paths, texts] = JSON.parse(process.argv[1]);
    (async () => {
      const config = new ESLint({ cwd: process.cwd() });
      const rules = [];
      for (const path of paths) {
        const resolved = await config.calculateConfigForFile(join(process.cwd(), path));
        rules.push({ 'max-lines': resolved.rules['max-lines'], '@stylistic/max-len': resolved.rules['@stylistic/max-len'] });
      }
      const caps = rules[0];
      const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: true, overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { '@stylistic': stylistic }, rules: caps }] });
      const messages = [];
      for (const text of texts) {
        const [result] = await eslint.lintText(text, { filePath: join(process.cwd(), 'src/probe.ts') });
        messages.push(result.messages.map((m) => m.ruleId + ': ' + m.message));
      }
      process.stdout.write(JSON.stringify({ rules, messages }));
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  return new Promise((settle, reject) => {
    execFile(process.execPath, ['-e', script, JSON.stringify([paths, texts])], { cwd: ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`eslint child failed: ${stderr}`));
      settle(JSON.parse(stdout) as { rules: Record<string, unknown>[]; messages: string[][] });
    });
  });
}

const lines = (count: number): string => Array.from({ length: count }, (_, i) => `export const line${i} = ${i};`).join('\n');
const wide = (width: number): string => `export const wide = '${'x'.repeat(width - 23)}';`;

describe('the size of a source file', () => {
  it('is capped in src/ at 300 lines and 180 characters a line, not in spec/; a file one line or a line one character over is refused', async () => {
    expect(wide(181)).toHaveLength(181);
    const { rules, messages } = await eslintChild(['src/host/host-server.ts', 'spec/store/log-store.contract.ts'], [lines(301), lines(300), wide(181), wide(180)]);
    expect(rules).toEqual([
      { 'max-lines': [2, expect.objectContaining({ max: 300, skipBlankLines: false, skipComments: false })], '@stylistic/max-len': [2, expect.objectContaining({ code: 180 })] },
      {},
    ]);
    expect(messages).toEqual([
      ['max-lines: File has too many lines (301). Maximum allowed is 300.'],
      [],
      ['@stylistic/max-len: This line has a length of 181. Maximum allowed is 180.'],
      [],
    ]);
  });
});
