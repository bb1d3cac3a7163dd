/**
 * The paths the file routes take (`?path=`, `source`, `destination`): an absolute native path of the
 * executor, POSIX (`/srv/data/a.txt`) or Windows (`C:\data\a.txt`, `C:/data/a.txt`). What is refused,
 * with 400 `INVALID_PATH`, before anything reaches the executor: an empty path, a relative one, one that
 * holds NUL, one with a `..` segment (`.` segments and repeated separators are harmless and kept), one
 * longer than {@link MAX_PATH_BYTES} bytes of UTF-8, and the root itself where a name is needed.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApiProblem } from '../problem';

/** The longest path taken, in bytes of UTF-8 (Linux's PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

const WINDOWS_ABSOLUTE = /^[A-Za-z]:[\\/]/;

/** A path checked by {@link checkedPath}: the text as given and how it is written. */
export interface FilePath {
  /** The native path as the client gave it. */
  readonly native: string;
  /** `windows` for a drive path (`C:\…`), `posix` for `/…`. */
  readonly style: 'posix' | 'windows';
}

/** The separators of a path's style. */
const separators = (style: FilePath['style']): RegExp => (style === 'windows' ? /[\\/]+/ : /\/+/);

/**
 * `raw` as a {@link FilePath}; throws ApiProblem 400 `INVALID_PATH` (naming `what`, never echoing a path
 * with NUL in it) for what the module's doc refuses. `undefined` (the parameter is missing) is refused too.
 */
export function checkedPath(raw: string | undefined, what = 'path'): FilePath {
  const invalid = (why: string): ApiProblem => new ApiProblem(400, 'INVALID_PATH', `${what} ${why}`);
  if (raw === undefined || raw === '') throw invalid('is required: an absolute path on the executor');
  if (raw.includes('\0')) throw invalid('may not hold NUL');
  if (Buffer.byteLength(raw, 'utf8') > MAX_PATH_BYTES) throw invalid(`may be at most ${MAX_PATH_BYTES} bytes`);
  const style = raw.startsWith('/') ? 'posix' : WINDOWS_ABSOLUTE.test(raw) ? 'windows' : undefined;
  if (style === undefined) throw invalid('must be absolute (/… on POSIX, C:\\… on Windows)');
  if (raw.split(separators(style)).some((segment) => segment === '..')) throw invalid('may not hold a .. segment');
  return { native: raw, style };
}

/** The segments of `path` without the empty and `.` ones (for Windows the drive is the first). */
function segmentsOf(path: FilePath): string[] {
  return path.native.split(separators(path.style)).filter((segment) => segment !== '' && segment !== '.');
}

/** The separator `path` is written with. */
const separatorOf = (path: FilePath): string => (path.style === 'windows' ? '\\' : '/');

/** The path with `.` segments and repeated or trailing separators removed (`/a/./b/` → `/a/b`). */
export function normalized(path: FilePath): FilePath {
  const segments = segmentsOf(path);
  if (path.style === 'posix') return { native: `/${segments.join('/')}`, style: 'posix' };
  const [drive = '', ...rest] = segments;
  return { native: `${drive}\\${rest.join('\\')}`, style: 'windows' };
}

/** The last segment (`a.txt` of `/srv/a.txt`); `''` for the root. */
export function baseName(path: FilePath): string {
  const segments = segmentsOf(path);
  if (path.style === 'windows' && segments.length <= 1) return '';
  return segments[segments.length - 1] ?? '';
}

/** The parent directory (`/srv` of `/srv/a.txt`); the root's parent is the root. */
export function parentOf(path: FilePath): FilePath {
  const segments = segmentsOf(path);
  const sep = separatorOf(path);
  if (path.style === 'posix') return { native: `/${segments.slice(0, -1).join('/')}`, style: 'posix' };
  const [drive = '', ...rest] = segments;
  return { native: `${drive}\\${rest.slice(0, -1).join(sep)}`, style: 'windows' };
}

/** `name` inside the directory `dir`. */
export function childOf(dir: FilePath, name: string): FilePath {
  const base = normalized(dir).native;
  const sep = separatorOf(dir);
  return { native: base.endsWith(sep) ? `${base}${name}` : `${base}${sep}${name}`, style: dir.style };
}

/** Whether `path` is the root (`/`, `C:\`): nothing above it, no name of its own. */
export const isRoot = (path: FilePath): boolean => baseName(path) === '';

/** The `file://` URI the executor takes for `path` (a Windows path as `file:///C:/…`). */
export function uriOf(path: FilePath): string {
  if (path.style === 'posix') return pathToFileURL(path.native).href;
  const [drive = '', ...rest] = segmentsOf(path);
  return `file:///${drive}/${rest.map(encodeURIComponent).join('/')}`;
}

/** The native path of a `file://` URI the executor answered with (`fs/canonicalize`, `fs/walk`), in the style of `like`. */
export function nativeOf(uri: string, like: FilePath['style']): FilePath {
  if (like === 'posix') return { native: fileURLToPath(uri), style: 'posix' };
  const rest = decodeURIComponent(new URL(uri).pathname).replace(/^\/+/, '');
  return { native: rest.replace(/\//g, '\\'), style: 'windows' };
}

/** Whether `inner` is `outer` or lies under it (both canonical; Windows compares without case). */
export function isWithin(inner: FilePath, outer: FilePath): boolean {
  const fold = (p: FilePath): string[] => segmentsOf(p).map((s) => (p.style === 'windows' ? s.toLowerCase() : s));
  if (inner.style !== outer.style) return false;
  const a = fold(inner);
  const b = fold(outer);
  return b.length <= a.length && b.every((segment, i) => segment === a[i]);
}
