/**
 * Packing the built package and installing the tarball into a fresh project, offline, from the npm cache
 * `npm ci` filled — the way a user gets it, minus the registry.
 *
 * `npm install --offline <tarball>` does not work here: npm 11 resolves a new dependency from the full
 * registry document of each package, while `npm ci` caches only the abbreviated one (and the tarballs).
 * So the project gets a lockfile instead, built from the tarball's own `dependencies` (and required peers),
 * with each package's version and integrity taken from this repository's package-lock.json, and
 * `npm ci --offline` installs exactly that from the cache. A dependency the tarball does not declare is
 * not installed.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

/** Bound on every npm child process. */
export const NPM_TIMEOUT_MS = 120_000;

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The environment for npm children: ours without the `npm_*` variables an outer `npm test` sets (they
 * would point the child at this repository), except the cache and user config locations.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') || keep.has(key.toLowerCase())));
}

/** What `npm pack` made. */
export interface PackedTarball {
  readonly path: string;
  /** Paths inside the package (`dist/src/index.js`, `package.json`, ...). */
  readonly files: readonly string[];
}

/** Packs `packageDir` as it is (`--ignore-scripts`: no build) into `destination`. */
export function packTarball(packageDir: string, destination: string): PackedTarball {
  const out = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: packageDir,
    encoding: 'utf8',
    env: npmEnv(),
    timeout: NPM_TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [packed] = JSON.parse(out) as readonly { readonly filename: string; readonly files: readonly { readonly path: string }[] }[];
  if (packed === undefined) throw new Error('npm pack reported nothing');
  return { path: join(destination, packed.filename), files: packed.files.map((file) => file.path) };
}

interface LockEntry {
  readonly version?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
  readonly [key: string]: unknown;
}

interface Manifest extends LockEntry {
  readonly name: string;
  readonly version: string;
}

/**
 * The packages a manifest needs installed: its dependencies, its optional dependencies (npm installs them
 * wherever they build; `bufferutil` ships prebuilt binaries) and its peers that are not optional.
 */
const requiredOf = (entry: LockEntry): string[] => [
  ...Object.keys(entry.dependencies ?? {}),
  ...Object.keys(entry.optionalDependencies ?? {}),
  ...Object.keys(entry.peerDependencies ?? {}).filter((name) => entry.peerDependenciesMeta?.[name]?.optional !== true),
];

/** The lock entry `name` resolves to from `from` (a `node_modules/...` location, `''` for the root), as Node would look it up. */
function locate(packages: Readonly<Record<string, LockEntry>>, from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    const location = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
    if (packages[location] !== undefined) return location;
    if (dir === '') return undefined;
  }
}

/**
 * Creates `projectDir` depending on the tarball only, and installs it offline (`npm ci --offline
 * --ignore-scripts`). Throws when a dependency the tarball declares is not in `repositoryLockPath`.
 */
export function installTarballOffline(tarball: string, projectDir: string, repositoryLockPath: string): void {
  mkdirSync(projectDir, { recursive: true });
  const manifest = JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8', timeout: NPM_TIMEOUT_MS })) as Manifest;
  const repository = (JSON.parse(readFileSync(repositoryLockPath, 'utf8')) as { readonly packages: Readonly<Record<string, LockEntry>> }).packages;
  const spec = `file:${relative(projectDir, tarball).split('\\').join('/')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'exec-rx-package-check', version: '1.0.0', dependencies: { [manifest.name]: spec } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      ...pick(manifest, ['license', 'dependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines']),
    },
  };
  const pending: { readonly from: string; readonly name: string }[] = requiredOf(manifest).map((name) => ({ from: '', name }));
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const location = locate(repository, next.from, next.name);
    const entry = location === undefined ? undefined : repository[location];
    if (location === undefined || entry === undefined) throw new Error(`${next.name} (needed by ${next.from || basename(tarball)}) is not in ${repositoryLockPath}`);
    if (packages[location] !== undefined) continue;
    packages[location] = entry;
    pending.push(...requiredOf(entry).map((name) => ({ from: location, name })));
  }
  writeFileSync(join(projectDir, 'package.json'), `${JSON.stringify({ name: 'exec-rx-package-check', version: '1.0.0', private: true, dependencies: { [manifest.name]: spec } }, null, 2)}\n`);
  writeFileSync(join(projectDir, 'package-lock.json'), `${JSON.stringify({ name: 'exec-rx-package-check', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
  execFileSync(npm, ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', projectDir], {
    cwd: projectDir,
    env: npmEnv(),
    timeout: NPM_TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function pick(entry: LockEntry, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => entry[key] !== undefined).map((key) => [key, entry[key]]));
}
