/**
 * Paths and sizes for the Files view. Paths are the executor's native absolute paths: POSIX (`/a/b`) or
 * Windows (`C:\a\b`, either slash); the view never resolves `..` (the host refuses it anyway).
 */

/** The text view's cap: files larger than this are not read into the page (download them instead). */
export const TEXT_VIEW_MAX_BYTES = 1024 * 1024;

const WINDOWS_ROOT = /^[A-Za-z]:[\\/]/;

/** The separator `path` uses. */
const separatorOf = (path: string): string => (!WINDOWS_ROOT.test(path) ? '/' : path.includes('\\') ? '\\' : '/');

/** The root of `path` (`/` or `C:\`). */
const rootOf = (path: string): string => (WINDOWS_ROOT.test(path) ? path.slice(0, 3) : '/');

/** `path` without a trailing separator (a root stays as it is). */
export function normalized(path: string): string {
  const root = rootOf(path);
  let end = path.length;
  while (end > root.length && (path[end - 1] === '/' || path[end - 1] === '\\')) end -= 1;
  return path.slice(0, end);
}

/** Whether `path` is absolute (the only kind the host takes). */
export const isAbsolute = (path: string): boolean => path.startsWith('/') || WINDOWS_ROOT.test(path);

/** The directory holding `path`, or undefined for a root. */
export function parentOf(path: string): string | undefined {
  const clean = normalized(path);
  const root = rootOf(clean);
  if (clean.length <= root.length) return undefined;
  const cut = Math.max(clean.lastIndexOf('/'), clean.lastIndexOf('\\'));
  return cut < root.length ? root : clean.slice(0, cut);
}

/** `name` inside `directory`. */
export function childOf(directory: string, name: string): string {
  const clean = normalized(directory);
  const separator = separatorOf(clean);
  return clean.endsWith('/') || clean.endsWith('\\') ? `${clean}${name}` : `${clean}${separator}${name}`;
}

/** The path bar's steps: the root, then each directory down to `path`, with their labels. */
export function crumbsOf(path: string): { readonly label: string; readonly path: string }[] {
  const clean = normalized(path);
  const root = rootOf(clean);
  const crumbs = [{ label: root, path: root }];
  let at = root;
  for (const segment of clean.slice(root.length).split(/[\\/]/)) {
    if (segment === '') continue;
    at = childOf(at, segment);
    crumbs.push({ label: segment, path: at });
  }
  return crumbs;
}

/** `1.5 MiB`-style size. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit] ?? ''}`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `bytes` as text when they look like text (UTF-8 and no NUL byte), else undefined. */
export function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
