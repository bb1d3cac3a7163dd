/**
 * `--files-root DIR` (`FilesOptions.roots`): the trees of an executor the file routes may touch. Before a
 * call the path is canonicalized on the executor (`fs/canonicalize`: symlinks resolved), or, for a path
 * that does not exist yet, its nearest existing ancestor is (and the rest appended), and the result must lie
 * under one of the roots, canonicalized on that executor too: a symlink that leads out of a root is refused
 * 403 `OUTSIDE_FILES_ROOT`, like any path outside.
 *
 * What remains: the check and the call are two requests. Whoever can write inside a root (the agent) can
 * swap a checked component for a symlink between them, and `fs/open` has no flag that refuses to follow
 * one (the `sandbox` parameter of `fs/*` is not used here: see docs/operator-api.md). So a root bounds
 * what a client names, not what a racing writer on the executor redirects.
 */
import { ApiProblem } from '../problem';
import type { FileCalls } from './file-calls';
import type { FilePath } from './file-path';
import { baseName, childOf, isRoot, isWithin, nativeOf, parentOf } from './file-path';

/** The canonical path of `path`: of itself, or of its nearest existing ancestor with the rest appended. */
async function canonicalOf(calls: FileCalls, path: FilePath): Promise<FilePath> {
  const missing: string[] = [];
  let at = path;
  for (;;) {
    try {
      const canonical = nativeOf(await calls.canonicalize(at), path.style);
      return missing.reduceRight((dir, name) => childOf(dir, name), canonical);
    } catch (error: unknown) {
      if (!(error instanceof ApiProblem && error.code === 'FILE_NOT_FOUND') || isRoot(at)) throw error;
      missing.push(baseName(at));
      at = parentOf(at);
    }
  }
}

/** The roots of one host (see the module's doc); none: every path passes. */
export class FileRoots {
  /** The roots' canonical forms per environment object (a new generation canonicalizes again). */
  private readonly canonical = new WeakMap<object, Promise<FilePath[]>>();

  constructor(private readonly roots: readonly FilePath[]) {}

  /** Whether there are roots to check. */
  get confined(): boolean {
    return this.roots.length > 0;
  }

  /** Throws ApiProblem 403 `OUTSIDE_FILES_ROOT` unless `path` lies under a root (canonically); resolves at once without roots. */
  async check(calls: FileCalls, path: FilePath): Promise<void> {
    if (this.roots.length === 0) return;
    const roots = await this.rootsOn(calls);
    const canonical = await canonicalOf(calls, path);
    if (!roots.some((root) => isWithin(canonical, root))) {
      throw new ApiProblem(403, 'OUTSIDE_FILES_ROOT', `${path.native} is outside this host's files roots (resolved: ${canonical.native})`);
    }
  }

  /** The roots as the executor of `calls` resolves them (a root that is missing there confines to nothing). */
  private rootsOn(calls: FileCalls): Promise<FilePath[]> {
    const known = this.canonical.get(calls.environment);
    if (known !== undefined) return known;
    const resolving = Promise.all(
      this.roots.map(async (root) => {
        try {
          return [nativeOf(await calls.canonicalize(root), root.style)];
        } catch {
          return [];
        }
      }),
    ).then((lists) => lists.flat());
    // A failure to resolve is not kept: the next request asks again.
    resolving.then((list) => (list.length < this.roots.length ? this.canonical.delete(calls.environment) : undefined), () => this.canonical.delete(calls.environment));
    this.canonical.set(calls.environment, resolving);
    return resolving;
  }
}
