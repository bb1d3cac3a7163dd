/**
 * The glob of `GET …/files/find?glob=`, applied by the host to what `fs/walk` found. The syntax:
 * `*` any run of characters but `/`, `**` any run including `/` (so `**\/` is any number of directories),
 * `?` one character but `/`, `[abc]` / `[a-z]` / `[!abc]` one of (or none of) a set; any other character is
 * itself (`\` escapes the next). A glob without `/` is matched against each entry's name (`*.ts`); one with
 * `/` against its path relative to the walked directory (`src/**\/*.ts`). Case-sensitive.
 */

/** The regular expression source of one bracket class starting at `glob[at]` (`[`), and where it ends. */
function classAt(glob: string, at: number): { source: string; next: number } | undefined {
  const close = glob.indexOf(']', at + 2);
  if (close < 0) return undefined;
  let body = glob.slice(at + 1, close);
  const negated = body.startsWith('!') || body.startsWith('^');
  if (negated) body = body.slice(1);
  const escaped = body.replace(/[\\\]^]/g, (c) => `\\${c}`);
  return { source: negated ? `[^/${escaped}]` : `[${escaped}]`, next: close + 1 };
}

/** A matcher of `glob` (see the module's doc). */
export function globMatcher(glob: string): (name: string, relativePath: string) => boolean {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[' && classAt(glob, i) !== undefined) {
      const cls = classAt(glob, i);
      source += cls?.source ?? '';
      i = (cls?.next ?? i + 1) - 1;
    } else if (c === '\\' && i + 1 < glob.length) {
      i += 1;
      source += (glob[i] ?? '').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  const pattern = new RegExp(`^${source}$`, 'u');
  const byName = !glob.includes('/');
  return (name, relativePath) => pattern.test(byName ? name : relativePath);
}
