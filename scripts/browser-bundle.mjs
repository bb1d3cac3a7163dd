/**
 * What every browser bundle of ours is built with (the dashboard, scripts/build-ui.mjs; the API
 * reference's script, scripts/build-api-docs.mjs): esbuild, hashed names, one minified ES2022 IIFE, type
 * settings from tsconfig.ui.json, the metafile (each script finds its hashed outputs there), warnings only.
 * Each adds its entry points, output dir, source maps and legal comments.
 */
export const BROWSER_BUNDLE = {
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2022'],
  tsconfig: 'tsconfig.ui.json',
  metafile: true,
  logLevel: 'warning',
};
