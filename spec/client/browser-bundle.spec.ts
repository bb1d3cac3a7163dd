/**
 * exec-rx/client runs in browsers: esbuild bundles it for the browser platform (every dependency
 * inlined) and the build fails on any Node built-in in its import graph; the bundle names no Node global
 * either. The bundle's size is printed in the test name's output (`console.log` is on for this file).
 */
import { build } from 'esbuild';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ENTRY = join(__dirname, '..', '..', 'src', 'client', 'index.ts');

async function bundle(entry: string): Promise<{ readonly text: string; readonly errors: readonly string[] }> {
  try {
    const result = await build({ entryPoints: [entry], bundle: true, platform: 'browser', format: 'esm', target: 'es2022', minify: true, write: false, logLevel: 'silent' });
    return { text: result.outputFiles[0]?.text ?? '', errors: [] };
  } catch (error: unknown) {
    const errors = typeof error === 'object' && error !== null && 'errors' in error && Array.isArray(error.errors) ? (error.errors as { text: string }[]).map((e) => e.text) : [String(error)];
    return { text: '', errors };
  }
}

describe('exec-rx/client in a browser bundle', () => {
  it('bundles for the browser platform with no Node built-in, and names its size', async () => {
    const { text, errors } = await bundle(ENTRY);
    expect(errors).toEqual([]);
    const bytes = Buffer.byteLength(text);
    const gzipped = gzipSync(text).byteLength;
    process.stdout.write(`exec-rx/client browser bundle: ${bytes} bytes minified, ${gzipped} bytes gzipped\n`);
    expect(bytes).toBeGreaterThan(10_000);
    // No Node global is referenced either (a built-in import would have failed the build above).
    expect(text).not.toMatch(/\bBuffer\b|\bprocess\.(env|nextTick|versions)\b|\brequire\(/);
    expect(text).toContain('HostClient');
  });

  it('fails the build when something in the graph imports a Node built-in (the check can fail)', async () => {
    const { errors } = await bundle(join(__dirname, '..', '..', 'src', 'wire', 'base64.ts').replace('base64.ts', '../host/api/operator-tokens.ts'));
    expect(errors.join('\n')).toMatch(/node:crypto|node:fs/);
  });
});
