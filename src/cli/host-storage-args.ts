/**
 * `exec-rx host`'s output-log flags: where the data dir is (`--data-dir DIR`, `none` to keep output in
 * memory), and the bounds of what it keeps (`--log-quota`, `--log-total`, `--log-retention`).
 */
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError } from './usage-error';

/** The output-log flags as given (each `undefined` when absent). */
export interface StorageFlags {
  readonly 'data-dir'?: string | undefined;
  readonly 'log-quota'?: string | undefined;
  readonly 'log-total'?: string | undefined;
  readonly 'log-retention'?: string | undefined;
}

/** What the host keeps on disk: nothing (`dataDir: undefined`, output in memory), or a data dir with its bounds. */
export interface StorageOptions {
  /** The data dir, absolute; `undefined` for `--data-dir none`. */
  readonly dataDir: string | undefined;
  /** Per-process quota in bytes (`undefined`: the log's default, 1 GiB). */
  readonly quotaBytes: number | undefined;
  /** Total bound in bytes (`undefined`: the smaller of 10 GiB and half the free space). */
  readonly totalBytes: number | undefined;
  /** How long a closed process's log is kept, in ms (`undefined`: 7 days). */
  readonly retentionMs: number | undefined;
}

const SIZE = /^(\d+)(?:\s*(B|K|KB|KiB|M|MB|MiB|G|GB|GiB|T|TB|TiB))?$/i;
const POWERS: Readonly<Record<string, number>> = { '': 0, b: 0, k: 1, kb: 1, kib: 1, m: 2, mb: 2, mib: 2, g: 3, gb: 3, gib: 3, t: 4, tb: 4, tib: 4 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A size: bytes, or a number with K, M, G or T (powers of 1024; `MiB` and `MB` alike). */
export function parseSize(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const match = SIZE.exec(text.trim());
  const power = POWERS[(match?.[2] ?? '').toLowerCase()];
  const value = match === null || power === undefined ? NaN : Number(match[1]) * 1024 ** power;
  if (!Number.isSafeInteger(value) || value < min) throw new UsageError(`${flag} expects a size of at least ${min} bytes (e.g. 512MiB, 1G, 1048576)`);
  return value;
}

/** A duration: a whole number with ms, s, m, h or d. */
export function parseDuration(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = DURATION.exec(text.trim());
  const unit = match?.[2] === undefined ? undefined : UNIT_MS[match[2]];
  const value = match === null || unit === undefined ? NaN : Number(match[1]) * unit;
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`${flag} expects a duration such as 7d, 12h, 30m or 90s`);
  return value;
}

/**
 * The data dir: `--data-dir` (resolved against `cwd`; `none` keeps output in memory), else `exec-rx`
 * under `$XDG_STATE_HOME`, else under `~/.local/state` (XDG Base Directory: state that outlives a
 * restart but is not worth backing up).
 */
export function dataDirOf(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  if (flag === 'none') return undefined;
  if (flag !== undefined) {
    if (flag === '') throw new UsageError('--data-dir expects a directory, or none');
    return resolve(cwd, flag);
  }
  const stateHome = env['XDG_STATE_HOME'];
  if (stateHome !== undefined && isAbsolute(stateHome)) return join(stateHome, 'exec-rx');
  const home = env['HOME'];
  if (home === undefined || !isAbsolute(home)) throw new UsageError('no data dir: HOME is not set; pass --data-dir DIR (or none)');
  return join(home, '.local', 'state', 'exec-rx');
}

/** Checks the flags that need no environment (sizes, durations, bounds without a data dir); returns them. */
export function checkStorageFlags(flags: StorageFlags): StorageFlags {
  parseSize('--log-quota', flags['log-quota'], 1024 * 1024);
  parseSize('--log-total', flags['log-total'], 1024 * 1024);
  parseDuration('--log-retention', flags['log-retention']);
  const bounded = flags['log-quota'] !== undefined || flags['log-total'] !== undefined || flags['log-retention'] !== undefined;
  if (flags['data-dir'] === 'none' && bounded) throw new UsageError(NONE_WITH_BOUNDS);
  return { 'data-dir': flags['data-dir'], 'log-quota': flags['log-quota'], 'log-total': flags['log-total'], 'log-retention': flags['log-retention'] };
}

const NONE_WITH_BOUNDS = '--log-quota, --log-total and --log-retention bound the data dir: they do not go with --data-dir none';

/** The output-log options of `exec-rx host` from its flags; bounds with `--data-dir none` are refused. */
export function storageOptions(flags: StorageFlags, env: NodeJS.ProcessEnv, cwd: string): StorageOptions {
  const dataDir = dataDirOf(flags['data-dir'], env, cwd);
  const options: StorageOptions = {
    dataDir,
    quotaBytes: parseSize('--log-quota', flags['log-quota'], 1024 * 1024),
    totalBytes: parseSize('--log-total', flags['log-total'], 1024 * 1024),
    retentionMs: parseDuration('--log-retention', flags['log-retention']),
  };
  if (dataDir === undefined && (options.quotaBytes !== undefined || options.totalBytes !== undefined || options.retentionMs !== undefined)) {
    throw new UsageError(NONE_WITH_BOUNDS);
  }
  return options;
}
