/**
 * Command-line parsing for the file commands against a host (issue 41): `exec-rx cp [options] SRC DST`
 * (`ENV:/abs/path` names the remote side, `-` stdin or stdout) and `exec-rx files ls|stat|rm|mkdir
 * ENV:/path`, with the host and token found as `ls` and `logs` find them. Throws {@link UsageError}.
 */
import { parseArgs } from 'node:util';
import type { HostAccess, ReadText } from './host-args';
import { hostAccess } from './host-args';
import { isSafeId } from '../wire/safe-id';
import { asUsage, UsageError } from './usage-error';
import { readFileSync } from 'node:fs';

/** A file of an environment: `ENV:/abs/path`. */
export interface RemotePath {
  readonly kind: 'remote';
  readonly environmentId: string;
  /** Absolute on the executor (POSIX `/…`, or `C:\…`). */
  readonly path: string;
}

/** One side of a copy: an environment's file, a local path, or `-` (stdin as the source, stdout as the destination). */
export type CopyEnd = RemotePath | { readonly kind: 'local'; readonly path: string } | { readonly kind: 'stdio' };

/** What `exec-rx cp` was asked to do: one side remote, the other local or `-`. */
export interface CpOptions {
  readonly access: HostAccess;
  readonly source: CopyEnd;
  readonly destination: CopyEnd;
  /** Files in flight at once. @default 8 */
  readonly parallel: number;
}

/** What `exec-rx files` was asked to do. */
export type FilesOptions =
  | { readonly action: 'ls' | 'stat'; readonly access: HostAccess; readonly targets: readonly RemotePath[]; readonly json: boolean }
  | { readonly action: 'rm'; readonly access: HostAccess; readonly targets: readonly RemotePath[]; readonly recursive: boolean }
  | { readonly action: 'mkdir'; readonly access: HostAccess; readonly targets: readonly RemotePath[]; readonly parents: boolean };

/** `cp`'s default `--parallel`. */
export const DEFAULT_PARALLEL = 8;
const MAX_PARALLEL = 64;

/** The usage of `cp` and `files`, a part of the whole usage text. */
export const FILES_USAGE = `  exec-rx cp [--parallel N] [--host URL] [--token-file FILE] SRC DST
      copies between an environment and here: ENV:/abs/path names an environment's file or directory,
      the other side is a local path, or - (stdin as SRC: one remote file; stdout as DST: one remote file).
      Directories are copied recursively (mkdir as needed); into an existing directory a file or directory
      goes under its own name. Bytes only: not modes, owners, times or symlinks (a local symlink to a file
      is followed, one to a directory skipped with a note; a remote symlink is read as its target).
      --parallel N       files in flight at once (default 8, at most 64)
      A progress line (bytes, rate, ETA) on stderr when it is a terminal. Exits 0 when all was copied,
      23 when some files were and others not (a line each), 1 when nothing could be.
  exec-rx files ls|stat|rm|mkdir [options] ENV:/path...
      ls: a directory's entries like ls -l (TYPE SIZE MODIFIED NAME; l for a symlink, ? for neither file
      nor directory), a file's own line; stat: one entry's fields. --json: one JSON document instead.
      --json             ls and stat: the host's entries as JSON
      --recursive, -r    rm: a directory with what is under it (else only an empty one)
      --parents, -p      mkdir: the missing parents too, and no error when it exists
    ls, logs, cp and files: the host from --host or EXEC_RX_HOST (a comma list for the replicas of one
    cluster), the operator token from --token-file or EXEC_RX_TOKEN.`;

/** `ENV:/path` when `arg` is one; `undefined` for anything else (a local path). */
export function remotePathOf(arg: string): RemotePath | undefined {
  const match = /^([^:/\\]+):(\/.*|[A-Za-z]:[\\/].*)$/.exec(arg);
  if (match === null) return undefined;
  const [, environmentId = '', path = ''] = match;
  if (!isSafeId(environmentId)) {
    throw new UsageError(`${JSON.stringify(arg)}: the environment id before ":" must be letters, digits, ".", "_" or "-" (a local path with a colon: write ./${arg})`);
  }
  if (path.includes('\u0000')) throw new UsageError(`${JSON.stringify(arg)}: a path cannot hold NUL`);
  return { kind: 'remote', environmentId, path };
}

/** One side of a copy. */
function endOf(arg: string): CopyEnd {
  if (arg === '-') return { kind: 'stdio' };
  if (arg === '') throw new UsageError('cp: an empty path');
  return remotePathOf(arg) ?? { kind: 'local', path: arg };
}

const CP_OPTIONS = {
  host: { type: 'string', multiple: true },
  'token-file': { type: 'string' },
  parallel: { type: 'string' },
} as const;

/** Parses `exec-rx cp` arguments (after `cp`). */
export function parseCpArgs(args: readonly string[], env: NodeJS.ProcessEnv, read: ReadText = (path) => readFileSync(path, 'utf8')): CpOptions {
  const { values, positionals } = asUsage(() => parseArgs({ args: [...args], options: CP_OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length !== 2) throw new UsageError('cp takes a source and a destination: exec-rx cp SRC DST');
  const source = endOf(positionals[0] ?? '');
  const destination = endOf(positionals[1] ?? '');
  const remote = [source, destination].filter((end) => end.kind === 'remote').length;
  if (remote === 0) throw new UsageError("cp: one side must be an environment's path, ENV:/abs/path");
  if (remote === 2) throw new UsageError("cp: only one side may be an environment's path (a copy within an environment: exec-rx run -- cp)");
  if (source.kind === 'stdio' && destination.kind === 'stdio') throw new UsageError('cp: - cannot be both sides');
  const parallel = values.parallel === undefined ? DEFAULT_PARALLEL : Number(values.parallel);
  if (!/^\d+$/.test(values.parallel ?? '1') || parallel < 1 || parallel > MAX_PARALLEL) throw new UsageError(`--parallel expects a whole number from 1 to ${MAX_PARALLEL}`);
  return { access: hostAccess(values.host, values['token-file'], env, read), source, destination, parallel };
}

const FILES_OPTIONS = {
  host: { type: 'string', multiple: true },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
  recursive: { type: 'boolean', short: 'r' },
  parents: { type: 'boolean', short: 'p' },
} as const;

const ACTIONS = ['ls', 'stat', 'rm', 'mkdir'] as const;

/** Parses `exec-rx files` arguments (after `files`). */
export function parseFilesArgs(args: readonly string[], env: NodeJS.ProcessEnv, read: ReadText = (path) => readFileSync(path, 'utf8')): FilesOptions {
  const [action, ...rest] = args;
  const known = ACTIONS.find((name) => name === action);
  if (known === undefined) throw new UsageError(action === undefined ? 'files needs ls, stat, rm or mkdir' : `files: unknown action ${JSON.stringify(action)}`);
  const { values, positionals } = asUsage(() => parseArgs({ args: rest, options: FILES_OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length === 0) throw new UsageError(`files ${known} needs at least one ENV:/path`);
  const targets = positionals.map((arg) => {
    const remote = remotePathOf(arg);
    if (remote === undefined) throw new UsageError(`files ${known}: ${JSON.stringify(arg)} is not ENV:/abs/path`);
    return remote;
  });
  const only = (flag: 'json' | 'recursive' | 'parents', actions: readonly string[]): void => {
    if (values[flag] === true && !actions.includes(known)) throw new UsageError(`files ${known} takes no --${flag}`);
  };
  only('json', ['ls', 'stat']);
  only('recursive', ['rm']);
  only('parents', ['mkdir']);
  const access = hostAccess(values.host, values['token-file'], env, read);
  switch (known) {
    case 'ls':
    case 'stat':
      return { action: known, access, targets, json: values.json === true };
    case 'rm':
      return { action: known, access, targets, recursive: values.recursive === true };
    case 'mkdir':
      return { action: known, access, targets, parents: values.parents === true };
  }
}
