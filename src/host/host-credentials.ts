/**
 * Where the host gets the access keys it accepts: a file, or the environment — never a command-line flag
 * (flags show up in `ps` and shell history). Values are never logged or put in an error.
 */
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../errors';
import type { AccessKeyStore } from './sigv4';

/** Environment variable naming a credentials file. */
export const CREDENTIALS_FILE_ENV = 'EXEC_RX_CREDENTIALS_FILE';
/** Environment variable carrying the access key id of one accepted pair. */
export const ACCESS_KEY_ID_ENV = 'EXEC_RX_ACCESS_KEY_ID';
/** Environment variable carrying the secret access key of that pair. */
export const SECRET_ACCESS_KEY_ENV = 'EXEC_RX_SECRET_ACCESS_KEY';

const KEY_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const SECRET = /^\S{1,256}$/;

/** Where the keys came from, and a warning to show (e.g. a file others can read); names no secret. */
export interface LoadedCredentials {
  /** The accepted access key ids and their secrets: pass them as `HostServerOptions.credentials`. */
  readonly keys: AccessKeyStore;
  /** Where they came from: the file's path, `environment`, or both joined by ` + `. */
  readonly source: string;
  /** Something to tell the operator (a credentials file others may read); names no secret. */
  readonly warning?: string;
}

/**
 * Parses credentials text: one `ACCESS_KEY_ID SECRET_ACCESS_KEY` pair per line (separated by spaces, a
 * tab, `:` or `=`); blank lines and `#` comments are ignored. Throws a ConfigError naming the bad line's
 * number only, never its content.
 */
export function parseCredentials(text: string, source: string): AccessKeyStore {
  const keys = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^([^\s:=]+)\s*[\s:=]\s*(\S+)$/.exec(line);
    const id = match?.[1];
    const secret = match?.[2];
    if (id === undefined || secret === undefined || !KEY_ID.test(id) || !SECRET.test(secret)) {
      throw new ConfigError(`${source}: line ${index + 1} is not "ACCESS_KEY_ID SECRET_ACCESS_KEY"`);
    }
    keys.set(id, secret);
  });
  return keys;
}

/** Reads a credentials file (see {@link parseCredentials}); warns when group or others may read it. */
export function loadCredentialsFile(path: string): LoadedCredentials {
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, 'utf8');
    mode = statSync(path).mode;
  } catch (error: unknown) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unreadable';
    throw new ConfigError(`cannot read credentials file ${path} (${code})`);
  }
  const keys = parseCredentials(text, path);
  const loose = process.platform !== 'win32' && (mode & 0o077) !== 0;
  return { keys, source: path, ...(loose ? { warning: `credentials file ${path} is readable by others; chmod 600 it` } : {}) };
}

/**
 * The accepted keys: the file given (flag) or named by `EXEC_RX_CREDENTIALS_FILE`, plus the pair in
 * `EXEC_RX_ACCESS_KEY_ID` / `EXEC_RX_SECRET_ACCESS_KEY`. Throws a ConfigError when there is none, or input is malformed.
 */
export function loadHostCredentials(file: string | undefined, env: NodeJS.ProcessEnv = process.env): LoadedCredentials {
  const path = file ?? env[CREDENTIALS_FILE_ENV];
  const fromFile = path === undefined || path === '' ? undefined : loadCredentialsFile(path);
  const id = env[ACCESS_KEY_ID_ENV];
  const secret = env[SECRET_ACCESS_KEY_ENV];
  if ((id === undefined) !== (secret === undefined)) throw new ConfigError(`set both ${ACCESS_KEY_ID_ENV} and ${SECRET_ACCESS_KEY_ENV}, or neither`);
  const keys = new Map(fromFile?.keys ?? []);
  if (id !== undefined && secret !== undefined) {
    for (const [k, v] of parseCredentials(`${id} ${secret}`, `${ACCESS_KEY_ID_ENV}/${SECRET_ACCESS_KEY_ENV}`)) keys.set(k, v);
  }
  if (keys.size === 0) {
    throw new ConfigError(`no accepted access keys: pass --credentials-file FILE, set ${CREDENTIALS_FILE_ENV}, or set ${ACCESS_KEY_ID_ENV} and ${SECRET_ACCESS_KEY_ENV}`);
  }
  const sources = [fromFile?.source, id === undefined ? undefined : 'environment'].filter((s) => s !== undefined);
  return { keys, source: sources.join(' + '), ...(fromFile?.warning === undefined ? {} : { warning: fromFile.warning }) };
}
