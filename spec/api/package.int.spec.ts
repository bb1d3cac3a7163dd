/**
 * The package as a user gets it: `npm pack` of the build (run `npm run build` first), installed offline
 * into a fresh project with only its declared dependencies, then loaded with plain `node` from there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as api from '../../src';
import * as client from '../../src/client';
import * as host from '../../src/host';
import type { PackedTarball } from '../support/package-install';
import { installTarballOffline, npmEnv, packTarball } from '../support/package-install';

const root = join(__dirname, '..', '..');
const NODE_TIMEOUT_MS = 30_000;
/** Interop markers in an ESM namespace of a CommonJS module, not export names. */
const INTEROP = new Set(['default', '__esModule']);

let work: string;
let project: string;
let tarball: PackedTarball;

/** Runs `node` in the project and parses what the script writes to stdout. */
function nodeIn(args: readonly string[]): unknown {
  return JSON.parse(execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8', env: npmEnv(), timeout: NODE_TIMEOUT_MS }));
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'src', 'index.js'))) throw new Error('dist/src/index.js is missing: run `npm run build` first');
  work = realpathSync(mkdtempSync(join(tmpdir(), 'exec-rx-package-')));
  tarball = packTarball(root, work);
  project = join(work, 'project');
  installTarballOffline(tarball.path, project, join(root, 'package-lock.json'));
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the build in a clone', () => {
  it('leaves the bin executable, so `npx exec-rx` runs it after `npm test` rebuilt dist', () => {
    const bin = join(root, 'dist', 'src', 'cli', 'main.js');
    expect((statSync(bin).mode & 0o111).toString(8)).toBe('111');
    const before = statSync(bin);
    // A fresh npm cache, as on a new machine: npx then installs this package into its own cache first.
    // That install must not run `prepare` (a rebuild that empties dist while other specs run the CLI).
    const cache = join(work, 'npm-cache');
    const run = spawnSync('npx', ['--offline', '--no-install', '--ignore-scripts', 'exec-rx', '--help'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...npmEnv(), npm_config_cache: cache },
      timeout: NODE_TIMEOUT_MS,
    });
    expect({ status: run.status, usage: run.stdout.split('\n')[0] }).toEqual({ status: 0, usage: 'usage:' });
    const after = statSync(bin);
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
  });
});

describe('the packed tarball', () => {
  it('holds the build, the bin, the dashboard, the OpenAPI document and its reference page, and the package files, and no specs, benchmarks or docs', () => {
    const apiDocs = ['index.html', 'LICENSE', 'NOTICE'].map((name) => `dist/ui/api-docs/${name}`);
    expect(tarball.files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/host/index.js', 'dist/src/host/index.d.ts', 'dist/src/cli/main.js', 'dist/ui/index.html', ...apiDocs, 'dist/openapi.json']));
    // The API reference (issue 40): swagger-ui-dist's bundle, its license note and style, our script, each hashed.
    const built = [/^dist\/ui\/(index\.html|app-[A-Z0-9]+\.(js|css)(\.map|\.LEGAL\.txt)?)$/, /^dist\/ui\/api-docs\/(index\.html|LICENSE|NOTICE|(swagger-ui-bundle|swagger-ui|api-docs)-[A-Z0-9]+\.(js|css)(\.LICENSE\.txt)?)$/];
    expect(tarball.files.filter((file) => !file.startsWith('dist/src/') && file !== 'package.json' && file !== 'README.md' && file !== 'dist/openapi.json' && !built.some((name) => name.test(file)))).toEqual([]);
    expect(tarball.files.filter((file) => file.startsWith('dist/ui/api-docs/')).map((file) => file.replace(/-[A-Z0-9]{8}\./, '-[hash].')).sort()).toEqual(
      [...apiDocs, ...['swagger-ui-bundle-[hash].js', 'swagger-ui-bundle-[hash].js.LICENSE.txt', 'swagger-ui-[hash].css', 'api-docs-[hash].js'].map((name) => `dist/ui/api-docs/${name}`)].sort(),
    );
    expect(tarball.files.filter((file) => /(^|\/)(spec|bench|docs)\//.test(file) || /\.spec\./.test(file))).toEqual([]);
  });

  it('installs offline with exactly its runtime dependencies, and links the bin', () => {
    const listed = nodeIn(['-e', "const fs = require('fs'); process.stdout.write(JSON.stringify({ modules: fs.readdirSync('node_modules').filter((n) => !n.startsWith('.')).sort(), bin: fs.realpathSync('node_modules/.bin/exec-rx') }))"]);
    expect(listed).toEqual({
      // @openai/codex is an optional peer: not installed; rxjs is a peer that npm installs for an app that
      // has none, and tslib comes with it; bufferutil (optional, for
      // ws' native unmask) brings node-gyp-build, which loads its prebuilt binary; prom-client (the host's
      // metrics) brings @opentelemetry/api and tdigest, which brings bintrees; pino (the host's logs) brings
      // @pinojs/redact, atomic-sleep, on-exit-leak-free, pino-abstract-transport (with split2),
      // pino-std-serializers, process-warning, quick-format-unescaped, real-require, safe-stable-stringify,
      // sonic-boom and thread-stream; @types/ws (the main entry's declarations name ws' WebSocket: without
      // it a user's tsc fails) brings @types/node, which brings undici-types; ioredis (the replicas' Redis
      // client, loaded only with a Redis url) brings @ioredis/commands, cluster-key-slot, debug (with ms),
      // denque, redis-errors, redis-parser and standard-as-callback.
      modules: [
        '@ioredis', '@opentelemetry', '@pinojs', '@types', 'atomic-sleep', 'aws4', 'bintrees', 'bufferutil', 'cluster-key-slot', 'debug', 'denque', 'eventsource-parser', 'exec-rx', 'fp-ts', 'io-ts', 'ioredis',
        'ms', 'node-gyp-build', 'on-exit-leak-free', 'pino', 'pino-abstract-transport', 'pino-std-serializers', 'process-warning', 'prom-client', 'quick-format-unescaped', 'real-require', 'redis-errors', 'redis-parser',
        'rxjs', 'safe-stable-stringify', 'sonic-boom', 'split2', 'standard-as-callback', 'tdigest', 'thread-stream', 'tslib', 'undici-types', 'ws',
      ],
      bin: join(project, 'node_modules', 'exec-rx', 'dist', 'src', 'cli', 'main.js'),
    });
  });
});

describe('rxjs, a peer dependency', () => {
  it('is declared as a peer (>=7.8 <8), not as a dependency of its own', () => {
    const manifest = nodeIn(['-e', "process.stdout.write(JSON.stringify(require('exec-rx/package.json')))"]) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    expect({ own: manifest.dependencies?.['rxjs'], peer: manifest.peerDependencies?.['rxjs'] }).toEqual({ own: undefined, peer: '>=7.8 <8' });
  });

  it('resolves to the app\'s own copy: one rxjs, so instanceof Observable holds across the two', () => {
    const script = [
      "const { Observable } = require('rxjs');",
      "const { HostClient } = require('exec-rx/client');",
      "const fromExecRx = require.resolve('rxjs', { paths: [require.resolve('exec-rx')] });",
      "const fs = require('fs');",
      'process.stdout.write(JSON.stringify({',
      "  same: fromExecRx === require.resolve('rxjs'),",
      "  nested: fs.existsSync('node_modules/exec-rx/node_modules/rxjs'),",
      // A cold stream (nothing is dialled until subscribed), made by exec-rx, checked with the app's rxjs.
      "  observable: new HostClient({ url: 'http://127.0.0.1:9', token: 'x'.repeat(16) }).environments$ instanceof Observable,",
      '}));',
    ].join('\n');
    expect(nodeIn(['-e', script])).toEqual({ same: true, nested: false, observable: true });
  });
});

describe('the installed package', () => {
  it('loads every entry from CommonJS, with the same names as the source', () => {
    const script = [
      "const main = require('exec-rx');",
      "const host = require('exec-rx/host');",
      "const client = require('exec-rx/client');",
      'process.stdout.write(JSON.stringify({',
      "  from: require.resolve('exec-rx'),",
      '  main: Object.keys(main).sort(),',
      '  host: Object.keys(host).sort(),',
      '  client: Object.keys(client).sort(),',
      '  kinds: [typeof main.EnvironmentManager.fromAcceptedWebsocket, typeof main.RpcConnection, typeof host.startHostServer, typeof host.loadHostCredentials, host.DIRECT_TRANSPORT, typeof client.HostClient],',
      "  code: new main.TransportClosedError('remote', 1006, 'x').code,",
      '}));',
    ].join('\n');
    expect(nodeIn(['-e', script])).toEqual({
      from: join(project, 'node_modules', 'exec-rx', 'dist', 'src', 'index.js'),
      main: Object.keys(api).sort(),
      host: Object.keys(host).sort(),
      client: Object.keys(client).sort(),
      kinds: ['function', 'function', 'function', 'function', 'direct_jsonrpc_v1', 'function'],
      code: 'TRANSPORT_CLOSED',
    });
  });

  it('loads every entry from ESM (named imports and import()), with the same names as the source', () => {
    writeFileSync(
      join(project, 'load.mjs'),
      [
        "import { startHostServer, loadHostCredentials } from 'exec-rx/host';",
        "import { EnvironmentManager, ExecClientError } from 'exec-rx';",
        "import { HostClient } from 'exec-rx/client';",
        "const client = await import('exec-rx/client');",
        "const main = await import('exec-rx');",
        "const host = await import('exec-rx/host');",
        `const names = (m) => Object.keys(m).filter((k) => !${JSON.stringify([...INTEROP])}.includes(k)).sort();`,
        'process.stdout.write(JSON.stringify({',
        '  main: names(main),',
        '  host: names(host),',
        '  client: names(client),',
        '  kinds: [typeof startHostServer, typeof loadHostCredentials, typeof EnvironmentManager.connect, typeof ExecClientError, typeof HostClient],',
        '}));',
      ].join('\n'),
    );
    expect(nodeIn(['load.mjs'])).toEqual({
      main: Object.keys(api).sort(),
      host: Object.keys(host).sort(),
      client: Object.keys(client).sort(),
      kinds: ['function', 'function', 'function', 'function', 'function'],
    });
  });

  it('main entry loads no server code: neither aws4 nor any dist/src/host or dist/src/cli module', () => {
    const loadedBy = (entry: string): string =>
      [
        `require(${JSON.stringify(entry)});`,
        'const keys = Object.keys(require.cache).map((k) => k.split(require("path").sep).join("/"));',
        'process.stdout.write(JSON.stringify({',
        "  count: keys.filter((k) => k.includes('/node_modules/exec-rx/dist/src/')).length,",
        "  server: keys.filter((k) => /\\/node_modules\\/aws4\\/|\\/exec-rx\\/dist\\/src\\/(host|cli)\\//.test(k)).map((k) => k.slice(k.lastIndexOf('node_modules/') + 13)),",
        '}));',
      ].join('\n');
    const main = nodeIn(['-e', loadedBy('exec-rx')]) as { count: number; server: string[] };
    expect(main.count).toBeGreaterThan(20);
    expect(main.server).toEqual([]);
    // The same check sees server code where there is some: exec-rx/host loads aws4 and itself.
    const hostLoaded = nodeIn(['-e', loadedBy('exec-rx/host')]) as { count: number; server: string[] };
    expect(hostLoaded.server).toEqual(expect.arrayContaining(['aws4/aws4.js', 'exec-rx/dist/src/host/index.js', 'exec-rx/dist/src/host/sigv4.js']));
  });

  it('the CLI says how to get an executor when the optional @openai/codex is not installed', () => {
    const run = spawnSync(process.execPath, [join(project, 'node_modules', '.bin', 'exec-rx'), 'run', '--', 'true'], {
      cwd: project,
      encoding: 'utf8',
      env: npmEnv(),
      timeout: NODE_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 255, stdout: '' });
    expect(run.stderr).toMatch(
      /^exec-rx: no codex executor binary found for \S+ \(package @openai\/codex-\S+\)\. Install one with `npm install @openai\/codex@0\.171\.0`, or use --connect ws:\/\/HOST:PORT to reach an executor that is already listening\.\n$/,
    );
  });
});
