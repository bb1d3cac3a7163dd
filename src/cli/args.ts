/** Command-line parsing for `exec-rx run` and `exec-rx host` (node's `util.parseArgs`, strict), and the usage text of every
 * command (`ls` and `logs` are parsed in `host-args`). Throws {@link UsageError} with a one-line message; the caller prints
 * it with the usage text and exits 2. */
import { parseArgs } from 'node:util';
import { parseCorsOrigins } from '../host/api/cors';
import type { HostAccess, ReadText } from './host-args';
import { checkId, hostAccess } from './host-args';
import type { StorageFlags } from './host-storage-args';
import { checkStorageFlags } from './host-storage-args';
import { FILES_OPTIONS, HOST_FILES_USAGE, filesFlagsOf, type FilesFlags } from './host-files-flags';
import { HOST_HTTP_USAGE, HTTP_OPTIONS, httpFlagsOf, type HttpFlags } from './host-http-flags';

import { checkForwardingFlags, checkRedisFlags } from './host-redis-flags';
import { asUsage, UsageError } from './usage-error';
import { parseEnvPairs } from './env-pairs';
import { FILES_USAGE } from './files-args';
import type { HostLogLevel } from './host-log-flags';
import { logFormatOf, logLevelOf } from './host-log-flags';

export { UsageError } from './usage-error';
export type { HostLogLevel } from './host-log-flags';
export { HOST_LOG_LEVELS } from './host-log-flags';

/** Which executor `run` uses. */
export type RunTarget =
  /** The embedded default: a codex executor in direct mode, joined to an in-process host on loopback. */
  | { readonly kind: 'embedded' }
  /** A listening executor (`codex exec-server --listen ws://...`), with an optional bearer token. */
  | { readonly kind: 'connect'; readonly url: string; readonly token: string | undefined }
  /** A codex executor spawned over stdio. */
  | { readonly kind: 'stdio' }
  /** An environment of a running host, through its operator API (`--host`). */
  | { readonly kind: 'host'; readonly access: HostAccess; readonly environmentId: string };

/** What `exec-rx run` was asked to do. */
export interface RunOptions {
  readonly argv: readonly string[];
  readonly target: RunTarget;
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  readonly tty: boolean;
  readonly verbose: boolean;
}

/** What `exec-rx host` was asked to do (the file routes' flags: {@link FilesFlags}). */
export interface HostCliOptions extends FilesFlags, HttpFlags {
  readonly host: string;
  readonly port: number;
  /** Serve Prometheus metrics (`/metrics`, no token) on this port of the same address (0: a free one). @default none */
  readonly metricsPort: number | undefined;
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  readonly credentialsFile: string | undefined;
  readonly publicUrl: string | undefined;
  readonly region: string | undefined;
  readonly maxEnvironments: number | undefined;
  readonly maxFrameBytes: number | undefined;
  readonly maxHandshakesPerSecond: number | undefined;
  /** A file of operator tokens (`NAME ROLE ENVIRONMENTS SECRET` per line, see `host/api/operator-tokens`) for the operator API. */
  readonly operatorTokensFile: string | undefined;
  /** Origins a browser UI may call the operator API from (`--cors-origin`, checked); empty: same-origin only. */
  readonly corsOrigins: readonly string[];
  /** Also start a codex executor in direct mode that joins this host, under this environment id. */
  readonly localExecutorId: string | undefined;
  /** A file holding the url of the Redis replicas share (`--redis-url-file`; a url with a password never goes in a flag). */
  readonly redisUrlFile: string | undefined;
  /** The prefix of every Redis key of this cluster (`--redis-prefix`). @default exec-rx */
  readonly redisPrefix: string | undefined;
  /** Forwarding between replicas: the key file (`--replica-key-file`), this one's url for the others (`--internal-url`), their CA (`--internal-ca`). */
  readonly replicaKeyFile: string | undefined;
  readonly internalUrl: string | undefined;
  readonly internalCa: string | undefined;
  /** Only end the data dir's local executor (`--stop-local-executor`), then exit. */
  readonly stopLocalExecutor: boolean;
  /** The output-log flags (checked; the data dir is resolved when the host starts, see `host-storage-args`). */
  readonly storage: StorageFlags;
  /** How long a graceful stop (SIGTERM/SIGINT) may take, in seconds; past it the host exits at once with 1. @default 10 */
  readonly shutdownTimeoutS: number;
  /** `--log-format`: JSON lines, or readable lines; absent: JSON unless stderr is a terminal. */
  readonly logFormat: 'json' | 'pretty' | undefined;
  /** `--log-level`: the least level written. @default 'info' */
  readonly logLevel: HostLogLevel;
  /** `--audit-log FILE`: the audit trail goes to this file (appended, 0600) instead of stderr. @default none */
  readonly auditLog: string | undefined;
}

/** Usage text of the whole CLI. */
export const USAGE = `usage:
  exec-rx run [options] -- <command> [args...]
      --connect URL      use a listening executor (ws://...); its bearer token from --token or
                         EXEC_RX_EXECUTOR_TOKEN (EXEC_RX_TOKEN still read here when that is unset)
      --token TOKEN      the listening executor's bearer token for --connect (not an operator token)
      --stdio            spawn a codex executor over stdio
      --host URL         run in an environment of a running exec-rx host (or EXEC_RX_HOST with
                         --environment); operator token from --token-file FILE or EXEC_RX_TOKEN.
                         Replicas of one host cluster: repeat --host or give a comma list (also in
                         EXEC_RX_HOST); a url that stops answering (or answers 502/503/504) is left
                         for the next, and the output resumes there where it stopped
      --environment ID   the host's environment to run in (required with --host)
      --cwd DIR          working directory of the command
      --env K=V          set an environment variable (repeatable)
      --tty              give the command a pseudo-terminal, sized as yours and following its resizes
      --verbose          report every connection change
    With none of --connect, --stdio and --host, a codex executor from @openai/codex joins an in-process host.
  exec-rx ls [--host URL] [--token-file FILE] [--json]
      a running host's environments (ENVIRONMENT GEN STATE PROCESSES) and their processes (ID STATE
      EXIT ARGV). --json prints one document: {"host": URL, "environments": [{"id", "generation",
      "state", "error", "processes": [{"id", "state", "exitCode", "argv", "tty", "pipeStdin",
      "error"}]}]} (error: null or {"code", "message"}; exitCode: null until it exited). A host with a
      data dir lists the processes of before its restart too: closed with their exit code, or unknown
      (running when it went down); an environment no executor joined since is offline (GEN 0).
  exec-rx logs --environment ID PROCESS [--follow] [--after SEQ] [--host URL] [--token-file FILE]
      a process's output as it was written (stdout to stdout, stderr to stderr): what the host holds,
      or with --follow everything until the process closed; --after SEQ: only what follows event SEQ.
      Exits 0 when done; a note on stderr where the host no longer holds the history.
${FILES_USAGE}
  exec-rx host [--port N] [--host 127.0.0.1] [--tls-cert FILE --tls-key FILE]
      --credentials-file FILE  accepted "ACCESS_KEY_ID SECRET" pairs (or EXEC_RX_CREDENTIALS_FILE,
                               or EXEC_RX_ACCESS_KEY_ID + EXEC_RX_SECRET_ACCESS_KEY)
      --public-url URL         base url executors reach this host at, if not the bind address
      --region REGION          SigV4 region executors sign for (default us-east-1)
      --metrics-port N         serve Prometheus metrics at /metrics on this port of the same address, no
                               token (0: a free port; printed at start); off without it
      --max-environments N, --max-frame-bytes N, --max-handshakes-per-second N
      --operator-tokens-file FILE  operator API tokens, one per line: NAME ROLE ENVIRONMENTS SECRET
                               (ROLE view|operate, ENVIRONMENTS *|id,id..., SECRET the token or sha256:HEX);
                               or EXEC_RX_OPERATOR_TOKEN (operate, named env); with none, the host makes
                               one (operate, named made) and prints http://HOST:PORT/#token=... once
      --cors-origin ORIGIN     let a browser page of ORIGIN (http://HOST:PORT, exact, never *) call the
                               operator API; repeatable or a comma list (default: same-origin only)
${HOST_FILES_USAGE}
${HOST_HTTP_USAGE}
      --local-executor         also start a codex executor that joins this host (throwaway credentials).
                               With a data dir it is an executor of its own: its key is kept there (0600),
                               it outlives the host (a SIGTERM or crash leaves it and its processes running)
                               and the next host on the data dir waits for it to re-dial instead of
                               starting another; with --data-dir none it stops with the host
      --local-executor-id ID   its environment id (default: local)
      --redis-url-file FILE    one replica of several on the Redis whose url (redis:// or rediss://) the
                               file holds, or EXEC_RX_REDIS_URL: state and output live there
                               (docs/replicas.md); SIGUSR2 drains it, then it exits. Not with --local-executor
      --redis-prefix PREFIX    the prefix of this cluster's Redis keys (default exec-rx)
      --replica-key-file FILE  forward a call that needs another replica's executor to it, signed with the
                               key in FILE (32+ characters; a second line during a rotation; SIGHUP reloads)
      --internal-url URL       where the other replicas reach this one (default: its own url)
      --internal-ca FILE       the CA (PEM) of the replicas' https internal urls (default: the system's)
  exec-rx host --stop-local-executor [--data-dir DIR]
      ends the data dir's local executor (SIGTERM, its processes end with it; SIGKILL after 5 s), removes
      its record, says what it did; exits 0, or 1 when there was none or it could not be ended
      --data-dir DIR           where each process's output is logged on disk, read at each reader's pace
                               (default: exec-rx under $XDG_STATE_HOME, else ~/.local/state); none: in memory
      --log-quota SIZE         per-process log quota: past it, the head and the newest output are kept
                               (default 1GiB)
      --log-total SIZE         all logs together: past it, whole logs of ended processes go, oldest first
                               (default: the smaller of 10GiB and half the free space at start)
      --log-retention DURATION how long a closed process's log is kept (default 7d)
      --shutdown-timeout SECONDS  how long a graceful stop (SIGTERM, SIGINT) may take (default 10); past
                               it, or at a second signal, the host exits at once (1; 130/143 for the signal)
      --log-format json|pretty one JSON object per stderr line (level, time, msg, environmentId, generation,
                               ...), or readable lines (default: pretty on a terminal, json otherwise)
      --log-level LEVEL        trace, debug, info, warn, error or fatal (default info)
      --audit-log FILE         the audit trail (each act through the operator API) to FILE (appended,
                               0600) instead of stderr
    When stdout is not a terminal, the operator url (with a token the host made) goes to the 0600 file
    <data-dir>/operator-url and stdout says where.
    SIGHUP reloads the operator tokens file and the credentials file (a file that fails keeps the old set).`;

const RUN_OPTIONS = {
  connect: { type: 'string' },
  token: { type: 'string' },
  stdio: { type: 'boolean' },
  host: { type: 'string', multiple: true },
  environment: { type: 'string' },
  'token-file': { type: 'string' },
  cwd: { type: 'string' },
  env: { type: 'string', multiple: true },
  tty: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
} as const;

const HOST_OPTIONS = {
  port: { type: 'string' },
  'metrics-port': { type: 'string' },
  host: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'credentials-file': { type: 'string' },
  'public-url': { type: 'string' },
  region: { type: 'string' },
  'max-environments': { type: 'string' },
  'max-frame-bytes': { type: 'string' },
  'max-handshakes-per-second': { type: 'string' },
  'operator-tokens-file': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true }, ...FILES_OPTIONS, ...HTTP_OPTIONS,
  'local-executor': { type: 'boolean' },
  'local-executor-id': { type: 'string' },
  'stop-local-executor': { type: 'boolean' },
  'redis-url-file': { type: 'string' },
  'redis-prefix': { type: 'string' },
  'replica-key-file': { type: 'string' },
  'internal-url': { type: 'string' },
  'internal-ca': { type: 'string' },
  'data-dir': { type: 'string' },
  'log-quota': { type: 'string' },
  'log-total': { type: 'string' },
  'log-retention': { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  'log-format': { type: 'string' },
  'log-level': { type: 'string' },
  'audit-log': { type: 'string' },
} as const;

/**
 * Parses `exec-rx run` arguments (after `run`). `env` supplies the operator token EXEC_RX_TOKEN (and EXEC_RX_HOST when
 * `--environment` comes without `--host`); `read` reads a `--token-file`.
 */
export function parseRunArgs(args: readonly string[], env: NodeJS.ProcessEnv = process.env, read?: ReadText): RunOptions {
  const { values, positionals } = asUsage(() => parseArgs({ args: [...args], options: RUN_OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length === 0) throw new UsageError('run needs a command: exec-rx run [options] -- <command> [args...]');
  if (values.connect !== undefined && values.stdio === true) throw new UsageError('--connect and --stdio exclude each other');
  if (values.host !== undefined && (values.connect !== undefined || values.stdio === true)) throw new UsageError('--host excludes --connect and --stdio');
  if (values.token !== undefined && values.connect === undefined) throw new UsageError('--token goes with --connect (with --host: --token-file or EXEC_RX_TOKEN)');
  const remote = values.host !== undefined || values.environment !== undefined;
  if (values['token-file'] !== undefined && !remote) throw new UsageError('--token-file goes with --host');
  let target: RunTarget;
  if (remote) {
    if (values.environment === undefined) throw new UsageError('--host needs --environment ID (see exec-rx ls)');
    if (values.connect !== undefined || values.stdio === true) throw new UsageError('--environment goes with --host, not --connect or --stdio');
    target = { kind: 'host', access: hostAccess(values.host, values['token-file'], env, read), environmentId: checkId('--environment', values.environment) };
  } else {
    // The executor's token has a name of its own; EXEC_RX_TOKEN (the operator token elsewhere) is still
    // read here when it is unset, as it was before EXEC_RX_EXECUTOR_TOKEN existed.
    const token = values.token ?? nonEmpty(env['EXEC_RX_EXECUTOR_TOKEN']) ?? nonEmpty(env['EXEC_RX_TOKEN']);
    target = values.connect !== undefined ? { kind: 'connect', url: checkWsUrl(values.connect), token } : values.stdio === true ? { kind: 'stdio' } : { kind: 'embedded' };
  }
  return { argv: positionals, target, cwd: values.cwd, env: parseEnvPairs(values.env ?? []), tty: values.tty === true, verbose: values.verbose === true };
}

const nonEmpty = (value: string | undefined): string | undefined => (value === '' ? undefined : value);

function checkWsUrl(url: string): string {
  if (!/^wss?:\/\/[^\s]+$/.test(url)) throw new UsageError('--connect expects a ws:// or wss:// url');
  return url;
}

function positiveInt(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} expects an integer from ${min} to ${max}`);
  return n;
}

/** Parses `exec-rx host` arguments (after `host`). */
export function parseHostArgs(args: readonly string[]): HostCliOptions {
  const { values } = asUsage(() => parseArgs({ args: [...args], options: HOST_OPTIONS, allowPositionals: false, strict: true }));
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const localId = values['local-executor-id'];
  if (localId !== undefined && values['local-executor'] !== true) throw new UsageError('--local-executor-id goes with --local-executor');
  if (localId !== undefined) checkId('--local-executor-id', localId);
  const stopLocal = values['stop-local-executor'] === true;
  if (stopLocal && values['local-executor'] === true) throw new UsageError('--stop-local-executor excludes --local-executor');
  const prefix = checkRedisFlags(values['redis-url-file'], values['redis-prefix'], values['local-executor'] === true);
  checkForwardingFlags(values['redis-url-file'], values['replica-key-file'], values['internal-url'], values['internal-ca']);
  if (stopLocal && values['data-dir'] === 'none') throw new UsageError('--stop-local-executor needs a data dir (the local executor of --data-dir none stops with its host)');
  return {
    host: values.host ?? '127.0.0.1',
    port: positiveInt('--port', values.port, 0, 65535) ?? 0,
    metricsPort: positiveInt('--metrics-port', values['metrics-port'], 0, 65535),
    tlsCert: values['tls-cert'],
    tlsKey: values['tls-key'],
    credentialsFile: values['credentials-file'],
    publicUrl: values['public-url'],
    region: values.region,
    maxEnvironments: positiveInt('--max-environments', values['max-environments'], 1, 100_000),
    maxFrameBytes: positiveInt('--max-frame-bytes', values['max-frame-bytes'], 1024, 1024 * 1024 * 1024),
    maxHandshakesPerSecond: positiveInt('--max-handshakes-per-second', values['max-handshakes-per-second'], 1, 100_000),
    operatorTokensFile: values['operator-tokens-file'],
    corsOrigins: parseCorsOrigins(values['cors-origin'] ?? []), ...filesFlagsOf(values), ...httpFlagsOf(values),
    localExecutorId: values['local-executor'] === true ? (localId ?? 'local') : undefined,
    stopLocalExecutor: stopLocal,
    redisUrlFile: values['redis-url-file'],
    redisPrefix: prefix,
    replicaKeyFile: values['replica-key-file'],
    internalUrl: values['internal-url'],
    internalCa: values['internal-ca'],
    storage: checkStorageFlags(values),
    shutdownTimeoutS: positiveInt('--shutdown-timeout', values['shutdown-timeout'], 0, 3600) ?? 10,
    logFormat: logFormatOf(values['log-format']),
    logLevel: logLevelOf(values['log-level']),
    auditLog: values['audit-log'],
  };
}
