// @ts-check
/**
 * `node scripts/write-openapi.mjs [path ...]`: writes the operator API's OpenAPI document (what a host
 * serves at `/api/v1/openapi.json`), read from the compiled `dist/src/host/api/openapi.js`, to each path
 * (default `dist/openapi.json`). `npm run build` writes `dist/openapi.json` (shipped in the package);
 * `npm run openapi` compiles and writes `docs/openapi.json` too, which a spec holds equal to the source.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
/** @type {{ openApiText: () => string }} */
const { openApiText } = require(join(root, 'dist', 'src', 'host', 'api', 'openapi.js'));
const text = openApiText();
const targets = process.argv.length > 2 ? process.argv.slice(2) : ['dist/openapi.json'];
for (const target of targets) {
  const path = resolve(root, target);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.log(`openapi: wrote ${target} (${text.length} bytes)`);
}
