/**
 * Command-line parsing for the commands that talk to a running host's operator API: `exec-rx ls`,
 * `exec-rx logs`, and where `exec-rx run --host` finds the host and its token. The url comes from
 * `--host` or `EXEC_RX_HOST`; the token from `--token-file` (trimmed) or `EXEC_RX_TOKEN`, never from a
 * flag (it would show in `ps`). No message here ever repeats a token, or a url that might carry one.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isSafeId } from '../wire/safe-id';
import { asUsage, UsageError } from './usage-error';

/** Where a host is and the operator token to show it. */
export interface HostAccess {
  /** The host's base url, without a trailing slash (`http://127.0.0.1:8080`): the first one given. */
  readonly url: string;
  /**
   * Every url given, in order, when there are several (replicas of one cluster, issue 33: repeated
   * `--host`, or a comma list in `--host` or `EXEC_RX_HOST`); absent for one. The client moves to the
   * next one when a url stops answering.
   */
  readonly urls?: readonly string[];
  /** The operator token (never printed). */
  readonly token: string;
}

/** What `exec-rx ls` was asked to do. */
export interface LsOptions {
  readonly access: HostAccess;
  /** One JSON document instead of the table. */
  readonly json: boolean;
}

/** What `exec-rx logs` was asked to do. */
export interface LogsOptions {
  readonly access: HostAccess;
  readonly environmentId: string;
  readonly processId: string;
  /** Keep streaming until the process closed (else: what the host holds now). */
  readonly follow: boolean;
  /** Only the events after this seq. */
  readonly afterSeq: number;
}

/** Reads a file as text (injectable for specs). */
export type ReadText = (path: string) => string;

const readText: ReadText = (path) => readFileSync(path, 'utf8');

/** Checks an environment or process id: the host's safe ids. */
export function checkId(flag: string, value: string): string {
  if (!isSafeId(value)) throw new UsageError(`${flag} must be letters, digits, ".", "_" or "-" (at most 128)`);
  return value;
}

/** The host's base url: http(s), no query, no fragment (a `#token=` belongs in EXEC_RX_TOKEN), no trailing slash. */
function checkHostUrl(url: string, from: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${from} expects the host's url (http://HOST:PORT)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`${from} expects an http:// or https:// url`);
  if (parsed.hash !== '' || parsed.search !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new UsageError(`${from} expects the host's base url (http://HOST:PORT) without a query, #token=… or user: put the token in EXEC_RX_TOKEN or a --token-file`);
  }
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/** The urls of `--host` values or `EXEC_RX_HOST`: each may be a comma list; empty items are refused; repeats are dropped. */
function hostUrls(raw: readonly string[], from: string): readonly string[] {
  const items = raw.flatMap((value) => value.split(',')).map((item) => item.trim());
  if (items.some((item) => item === '')) throw new UsageError(`${from} expects urls separated by commas, without empty items`);
  return [...new Set(items.map((item) => checkHostUrl(item, from)))];
}

/**
 * The host and token: the url from `host` (the `--host` flag, repeated or a comma list for the replicas
 * of one cluster) or `EXEC_RX_HOST` (a comma list too), the token from `tokenFile` (its content trimmed,
 * which must not be empty) or `EXEC_RX_TOKEN`. Throws UsageError when either is missing, naming where it goes.
 */
export function hostAccess(host: string | readonly string[] | undefined, tokenFile: string | undefined, env: NodeJS.ProcessEnv, read: ReadText = readText): HostAccess {
  const fromEnv = env['EXEC_RX_HOST'] === '' ? undefined : env['EXEC_RX_HOST'];
  const given = typeof host === 'string' ? [host] : host !== undefined && host.length > 0 ? host : undefined;
  const raw = given ?? (fromEnv === undefined ? undefined : [fromEnv]);
  if (raw === undefined) throw new UsageError('no host: pass --host URL or set EXEC_RX_HOST');
  const urls = hostUrls(raw, given === undefined ? 'EXEC_RX_HOST' : '--host');
  const url = urls[0] ?? '';
  let token: string | undefined;
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = read(tokenFile);
    } catch {
      throw new UsageError(`cannot read --token-file ${tokenFile}`);
    }
    token = text.trim();
    if (token === '') throw new UsageError(`--token-file ${tokenFile} is empty`);
    if (/\s/.test(token)) throw new UsageError(`--token-file ${tokenFile} must hold one token (no spaces or line breaks inside)`);
  } else {
    const fromEnvToken = env['EXEC_RX_TOKEN']?.trim();
    token = fromEnvToken === '' ? undefined : fromEnvToken;
  }
  if (token === undefined) throw new UsageError('no operator token: set EXEC_RX_TOKEN or pass --token-file FILE');
  return urls.length > 1 ? { url, urls, token } : { url, token };
}

const LS_OPTIONS = {
  host: { type: 'string' },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** Parses `exec-rx ls` arguments (after `ls`). */
export function parseLsArgs(args: readonly string[], env: NodeJS.ProcessEnv, read: ReadText = readText): LsOptions {
  const { values } = asUsage(() => parseArgs({ args: [...args], options: LS_OPTIONS, allowPositionals: false, strict: true }));
  return { access: hostAccess(values.host, values['token-file'], env, read), json: values.json === true };
}

const LOGS_OPTIONS = {
  host: { type: 'string' },
  'token-file': { type: 'string' },
  environment: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  after: { type: 'string' },
} as const;

/** Parses `exec-rx logs` arguments (after `logs`). */
export function parseLogsArgs(args: readonly string[], env: NodeJS.ProcessEnv, read: ReadText = readText): LogsOptions {
  const { values, positionals } = asUsage(() => parseArgs({ args: [...args], options: LOGS_OPTIONS, allowPositionals: true, strict: true }));
  if (values.environment === undefined) throw new UsageError('logs needs --environment ID');
  if (positionals.length !== 1) throw new UsageError('logs takes one process id: exec-rx logs --environment ID PROCESS');
  const afterSeq = values.after === undefined ? 0 : Number(values.after);
  if (!/^\d+$/.test(values.after ?? '0') || !Number.isSafeInteger(afterSeq)) throw new UsageError('--after expects a seq (an integer, 0 or more)');
  return {
    access: hostAccess(values.host, values['token-file'], env, read),
    environmentId: checkId('--environment', values.environment),
    processId: checkId('the process id', positionals[0] ?? ''),
    follow: values.follow === true,
    afterSeq,
  };
}
