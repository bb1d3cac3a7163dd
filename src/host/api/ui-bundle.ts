/**
 * The dashboard's built files (`npm run build` bundles src/ui into `dist/ui/`: `index.html` and
 * content-hashed `app-[hash].js` / `.css`, their source maps and license notes), as the host serves
 * them: only the files of that set, by exact name (a name not in it is not found, so no request path
 * reaches another file), read once and kept. `dist/ui` is found at run time by walking up from this
 * module to the package root (from `src/` under ts-jest and from `dist/src/` alike); the operator API's
 * `uiDir` overrides it. An unbuilt bundle is looked for again on the next request.
 *
 * The API reference (`/api/v1/docs`, issue 40) is a second set of the same kind, in `dist/ui/api-docs/`
 * (scripts/build-api-docs.mjs): its own names ({@link API_DOCS_ASSET_NAME}), served by the same code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A built file: its bytes and content type. */
export interface UiAsset {
  readonly bytes: Buffer;
  readonly contentType: string;
}

/** The names a build writes beside the dashboard's index.html: `app-<hash>.<js|css>`, with `.map` or `.LEGAL.txt`. */
export const DASHBOARD_ASSET_NAME = /^app-[A-Z0-9]+\.(js|css)(\.map|\.LEGAL\.txt)?$/;

/**
 * The names a build writes beside the API reference's index.html: swagger-ui-dist's bundle and style, our
 * script, each `<name>-<hash>.<js|css>`, and the bundle's license note (`.LICENSE.txt`).
 */
export const API_DOCS_ASSET_NAME = /^(swagger-ui-bundle|swagger-ui|api-docs)-[A-Z0-9]+\.(js|css)(\.LICENSE\.txt)?$/;

/** The folder of the API reference's built files in the dashboard's folder `uiDir`: `<uiDir>/api-docs`. */
export const apiDocsDir = (uiDir: string = defaultUiDir()): string => join(uiDir, 'api-docs');

/** The content type of a built file's name. */
export function contentTypeOf(name: string): string {
  if (name.endsWith('.map')) return 'application/json; charset=utf-8';
  if (name.endsWith('.txt')) return 'text/plain; charset=utf-8';
  if (name.endsWith('.js')) return 'text/javascript; charset=utf-8';
  if (name.endsWith('.css')) return 'text/css; charset=utf-8';
  return 'text/html; charset=utf-8';
}

/** The package root above `from`: the first folder up with exec-rx's package.json; `undefined` when none. */
export function packageRootAbove(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'exec-rx') return dir;
      } catch {
        // not ours: go on up
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Where `npm run build` puts the dashboard: `<package root>/dist/ui`. */
export function defaultUiDir(): string {
  return join(packageRootAbove(__dirname) ?? process.cwd(), 'dist', 'ui');
}

/** A set of built files in one folder (the dashboard's, or the API reference's), loaded at the first request that finds them. */
export class UiBundle {
  private loaded: Promise<ReadonlyMap<string, UiAsset> | undefined> | undefined;

  constructor(
    /** The folder of the built files. */
    readonly dir: string = defaultUiDir(),
    /** The names of the set besides index.html. @default {@link DASHBOARD_ASSET_NAME} */
    readonly assetName: RegExp = DASHBOARD_ASSET_NAME,
  ) {}

  /** `index.html`, or `undefined` when the bundle is not built. */
  async index(): Promise<UiAsset | undefined> {
    return (await this.files())?.get('index.html');
  }

  /** A hashed asset by its exact name; `undefined` for any name the build did not write. */
  async asset(name: string): Promise<UiAsset | undefined> {
    if (!this.assetName.test(name)) return undefined;
    return (await this.files())?.get(name);
  }

  private async files(): Promise<ReadonlyMap<string, UiAsset> | undefined> {
    this.loaded ??= load(this.dir, this.assetName);
    const files = await this.loaded;
    // Not built (yet): look again next time.
    if (files === undefined) this.loaded = undefined;
    return files;
  }
}

/** Reads every file of the set (index.html and the names `assetName` matches) in `dir`; `undefined` when there is no index.html. */
async function load(dir: string, assetName: RegExp): Promise<ReadonlyMap<string, UiAsset> | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  if (!names.includes('index.html')) return undefined;
  const files = new Map<string, UiAsset>();
  for (const name of names) {
    if (name !== 'index.html' && !assetName.test(name)) continue;
    files.set(name, { bytes: await readFile(join(dir, name)), contentType: contentTypeOf(name) });
  }
  return files;
}
