// @ts-check
/**
 * `npm run package:check`: lints the package exactly as it would be published. Packs the built `dist/`
 * once (`npm pack --ignore-scripts`: no second build), then checks that tarball with
 *
 * - publint (strict): any message, suggestions included, fails the check;
 * - Are the Types Wrong? (`attw`, default "strict" profile): every entry point (`exec-rx`, `exec-rx/host`)
 *   must resolve to types and JavaScript that agree under node10, node16 (CommonJS and ESM importers) and
 *   bundler resolution. node10 works through `typesVersions`.
 * - the operator API's OpenAPI document: the tarball holds `dist/openapi.json` (what `npm run build`
 *   writes), the same bytes as the committed `docs/openapi.json`.
 *
 * - the dashboard: the tarball carries `dist/ui/index.html` and the hashed `dist/ui/app-*.js` / `.css` it names
 *   (the host serves them at `/`).
 * - the API reference: the tarball carries `dist/ui/api-docs/index.html`, the hashed Swagger UI files and script it
 *   names, and swagger-ui-dist's LICENSE and NOTICE (the host serves them at `/api/v1/docs`).
 *
 * Run `npm run build` first. Exits non-zero on any finding; the temporary directory is always removed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHILD_TIMEOUT_MS = 120_000;

for (const built of [['dist', 'src', 'index.js'], ['dist', 'ui', 'index.html'], ['dist', 'ui', 'api-docs', 'index.html']]) {
  if (!existsSync(join(root, ...built))) {
    console.error(`package:check: ${built.join('/')} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
}

/** The path of a dev dependency's command-line script (from its package.json `bin`). */
function binOf(packageName, command) {
  const require = createRequire(join(root, 'package.json'));
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  return join(dirname(manifestPath), typeof bin === 'string' ? bin : bin[command]);
}

const work = mkdtempSync(join(tmpdir(), 'exec-rx-package-check-'));
let failed = false;
try {
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [{ filename, entryCount, files }] = JSON.parse(packed);
  const tarball = join(work, filename);
  console.log(`packed ${filename} (${entryCount} files)`);

  // The dashboard: index.html and every file it references are in the package.
  const packedPaths = new Set(files.map((file) => file.path));
  const index = readFileSync(join(root, 'dist', 'ui', 'index.html'), 'utf8');
  const referenced = [...index.matchAll(/(?:href|src)="\/ui\/([^"]+)"/g)].map((match) => `dist/ui/${match[1]}`);
  const missing = ['dist/ui/index.html', ...referenced].filter((path) => !packedPaths.has(path));
  if (referenced.length < 2 || missing.length > 0) {
    failed = true;
    console.error(`dashboard: the package lacks ${missing.join(', ') || 'the script and style index.html references'}`);
  } else {
    console.log(`dashboard: dist/ui/index.html and ${referenced.join(', ')} are packed`);
  }

  // The API reference (issue 40): its index.html, every file it references (relatively, `docs/…`), and swagger-ui-dist's LICENSE and NOTICE.
  const docsIndex = readFileSync(join(root, 'dist', 'ui', 'api-docs', 'index.html'), 'utf8');
  const docsReferenced = [...docsIndex.matchAll(/(?:href|src)="docs\/([^"]+)"/g)].map((match) => `dist/ui/api-docs/${match[1]}`);
  const docsMissing = ['index.html', 'LICENSE', 'NOTICE'].map((name) => `dist/ui/api-docs/${name}`).concat(docsReferenced).filter((path) => !packedPaths.has(path));
  if (docsReferenced.length < 3 || docsMissing.length > 0) {
    failed = true;
    console.error(`api reference: the package lacks ${docsMissing.join(', ') || 'the scripts and style dist/ui/api-docs/index.html references'}`);
  } else {
    console.log(`api reference: dist/ui/api-docs/index.html, LICENSE, NOTICE and ${docsReferenced.join(', ')} are packed`);
  }

  if (!packedPaths.has('dist/openapi.json')) {
    failed = true;
    console.error('openapi: dist/openapi.json is not in the package (npm run build writes it; package.json `files` must list it)');
  } else if (readFileSync(join(root, 'dist', 'openapi.json'), 'utf8') !== readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')) {
    failed = true;
    console.error('openapi: dist/openapi.json differs from docs/openapi.json: run `npm run openapi` and commit docs/openapi.json');
  } else {
    console.log('openapi: dist/openapi.json is packed, equal to docs/openapi.json');
  }

  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const bytes = readFileSync(tarball);
  const { messages } = await publint({ pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) }, strict: true });
  if (messages.length === 0) {
    console.log('publint: no errors, warnings or suggestions');
  } else {
    failed = true;
    for (const message of messages) console.error(`publint ${message.type}: ${formatMessage(message, pkg, { color: false })}`);
  }

  try {
    execFileSync(process.execPath, [binOf('@arethetypeswrong/cli', 'attw'), tarball, '--format', 'table', '--no-color'], {
      cwd: root,
      stdio: 'inherit',
      timeout: CHILD_TIMEOUT_MS,
    });
  } catch {
    failed = true;
    console.error('attw: problems found (see above)');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
