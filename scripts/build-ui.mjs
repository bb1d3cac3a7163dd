// @ts-check
/**
 * `npm run build` (its last step): bundles the dashboard (src/ui/main.ts and src/ui/app.css, which
 * imports xterm's CSS) with esbuild into dist/ui/: `app-[hash].js` and `app-[hash].css`, minified, each
 * with its source map as a file beside it, and a generated `index.html` that references them. The host
 * serves `index.html` at `/` (never cached) and the hashed files under `/ui/` (cached for a year).
 * `--outdir DIR` writes them elsewhere (a spec builds into a temporary folder).
 * The API reference (`/api/v1/docs`, Swagger UI) goes into its `api-docs/` folder: see ./build-api-docs.mjs.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { buildApiDocs } from './build-api-docs.mjs';
import { BROWSER_BUNDLE } from './browser-bundle.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdirAt = process.argv.indexOf('--outdir');
const outdir = outdirAt > 0 && process.argv[outdirAt + 1] !== undefined ? resolve(process.argv[outdirAt + 1]) : join(root, 'dist', 'ui');

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: [
    { in: 'src/ui/main.ts', out: 'app' },
    { in: 'src/ui/app.css', out: 'app' },
  ],
  ...BROWSER_BUNDLE,
  outdir,
  sourcemap: 'linked',
  legalComments: 'linked',
});

const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = outputs.find((name) => /^app-[A-Z0-9]+\.js$/.test(name));
const style = outputs.find((name) => /^app-[A-Z0-9]+\.css$/.test(name));
if (script === undefined || style === undefined) throw new Error(`build-ui: expected app-[hash].js and app-[hash].css, got ${outputs.join(', ')}`);

// No inline script or style: the page's CSP allows scripts from 'self' only.
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>exec-rx host</title>
<link rel="stylesheet" href="/ui/${style}">
<script defer src="/ui/${script}"></script>
</head>
<body>
<div id="app"><noscript>The exec-rx dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
writeFileSync(join(outdir, 'index.html'), html);
console.log(`build-ui: ${outdir}: index.html, ${outputs.join(', ')}`);
const docs = await buildApiDocs(root, join(outdir, 'api-docs'));
console.log(`build-ui: ${join(outdir, 'api-docs')}: ${docs.join(', ')}`);
