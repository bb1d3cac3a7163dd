// @ts-check
/**
 * The API reference's files (issue 40), written by scripts/build-ui.mjs into `<ui outdir>/api-docs/`: the
 * host serves `index.html` at `/api/v1/docs` (never cached) and the other files under `/api/v1/docs/`
 * (cached for a year, like the dashboard's: each name carries a hash of its content).
 *
 * - `swagger-ui-bundle-[hash].js` and `swagger-ui-[hash].css`: swagger-ui-dist's files, copied from
 *   node_modules (no CDN), without their `sourceMappingURL` (the maps are not shipped); the bundle's
 *   license note `swagger-ui-bundle-[hash].js.LICENSE.txt` beside it (its first line names it);
 * - `api-docs-[hash].js`: our script (src/ui/api-docs.ts, esbuild), which renders the document read-only;
 * - `index.html`: references them relatively (`docs/…` from `/api/v1/docs`), no inline script or style;
 * - `LICENSE` and `NOTICE`: swagger-ui-dist's (Apache-2.0), shipped in the package, not served.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as esbuild from 'esbuild';
import { BROWSER_BUNDLE } from './browser-bundle.mjs';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 8 characters of A-Z2-7 from the SHA-256 of `bytes` (the alphabet of esbuild's `[hash]`). */
function hashOf(bytes) {
  const digest = createHash('sha256').update(bytes).digest();
  let bits = 0n;
  for (let i = 0; i < 5; i += 1) bits = (bits << 8n) | BigInt(digest[i] ?? 0);
  let out = '';
  for (let i = 7; i >= 0; i -= 1) out += BASE32[Number((bits >> BigInt(i * 5)) & 31n)];
  return out;
}

/** `text` without a trailing `sourceMappingURL` comment (JS `//#` or CSS `/*#`). */
const withoutSourceMap = (text) => text.replace(/\n?(?:\/\/# sourceMappingURL=[^\n]*|\/\*# sourceMappingURL=[^\n]*?\*\/)\s*$/, '\n');

/**
 * Writes the API reference's files into `outdir` (made if missing) from the package at `root`; returns
 * the names written.
 * @param {string} root
 * @param {string} outdir
 * @returns {Promise<string[]>}
 */
export async function buildApiDocs(root, outdir) {
  mkdirSync(outdir, { recursive: true });
  const dist = dirname(createRequire(join(root, 'package.json')).resolve('swagger-ui-dist/package.json'));
  const read = (name) => readFileSync(join(dist, name), 'utf8');

  // The bundle's first line names its license note: it names the hashed copy instead (the hash is of the rest).
  const LICENSE_LINE = /^\/\*! For license information please see swagger-ui-bundle\.js\.LICENSE\.txt \*\/\n/;
  const bundleSource = read('swagger-ui-bundle.js');
  if (!LICENSE_LINE.test(bundleSource)) throw new Error('build-api-docs: swagger-ui-bundle.js does not start with its license line');
  const bundleBody = withoutSourceMap(bundleSource.replace(LICENSE_LINE, ''));
  const bundle = `swagger-ui-bundle-${hashOf(bundleBody)}.js`;
  writeFileSync(join(outdir, bundle), `/*! For license information please see ${bundle}.LICENSE.txt */\n${bundleBody}`);
  writeFileSync(join(outdir, `${bundle}.LICENSE.txt`), read('swagger-ui-bundle.js.LICENSE.txt'));

  const css = withoutSourceMap(read('swagger-ui.css'));
  const style = `swagger-ui-${hashOf(css)}.css`;
  writeFileSync(join(outdir, style), css);

  for (const name of ['LICENSE', 'NOTICE']) writeFileSync(join(outdir, name), read(name));

  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [{ in: 'src/ui/api-docs.ts', out: 'api-docs' }],
    ...BROWSER_BUNDLE,
    outdir,
    legalComments: 'none',
  });
  const script = Object.keys(result.metafile.outputs).map((file) => file.split('/').pop() ?? '').find((name) => /^api-docs-[A-Z0-9]+\.js$/.test(name));
  if (script === undefined) throw new Error('build-api-docs: esbuild wrote no api-docs-[hash].js');

  // No inline script or style: the page's CSP allows scripts and styles from 'self' only. Relative
  // references (`docs/…` from `/api/v1/docs`), so a proxy's path prefix is kept.
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>exec-rx host: operator API reference</title>
<link rel="stylesheet" href="docs/${style}">
<script defer src="docs/${bundle}"></script>
<script defer src="docs/${script}"></script>
</head>
<body>
<div id="swagger-ui"><noscript>The API reference needs JavaScript; the document itself is at <a href="openapi.json">openapi.json</a>.</noscript></div>
</body>
</html>
`;
  writeFileSync(join(outdir, 'index.html'), html);
  return ['index.html', style, bundle, `${bundle}.LICENSE.txt`, script, 'LICENSE', 'NOTICE'];
}
