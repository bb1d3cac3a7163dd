/**
 * `exec-rx host`: runs the host until SIGINT or SIGTERM. It serves the executors' routes and the
 * operator API; prints, once, the url an operator opens (with a token it made, when none was
 * configured) and the command an executor runs to join; with `--local-executor`, it also starts a codex
 * executor that joins it. Events go to stderr, one line each; no token or secret is ever written there.
 */
import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { ConfigError, messageOf } from '../errors';
import { resolveCodexBinary } from '../executor/codex-binary';
import type { SpawnedExecutor } from '../executor/spawn-executor';
import { spawnExecutor } from '../executor/spawn-executor';
import { loadOperatorTokens, OperatorTokens } from '../host/api/operator-tokens';
import { loadHostCredentials } from '../host/host-credentials';
import type { HostLogger } from '../host/host-logger';
import type { HostServer, HostServerOptions } from '../host/host-options';
import { startHostServer } from '../host/host-server';
import { DiskStateStore } from '../store/disk/disk-state-store';
import type { SharedStores } from '../store/redis/open-redis-stores';
import type { StateStore } from '../store/state-store';
import { forwardingOptions, openSharedStores, redisUrlOf, replicaOptions } from './host-redis';
import type { ForwardingOptions } from '../host/cluster/cluster-options';
import { fleetBurst, LOCAL_WITH_REDIS } from './host-redis-flags';
import type { StorageOptions } from './host-storage-args';
import { dataDirOf, storageOptions } from './host-storage-args';
import type { LocalCredentials } from './local-executor';
import { ensureLocalExecutor, LocalExecutorFiles, makeCredentials, stopLocalExecutor } from './local-executor';
import type { HostCliOptions } from './args';
import { EXIT_ERROR } from './exit-codes';
import { drainOnSignal, reloadOnHangup, StopSignals, stopGracefully } from './host-signals';
import type { HostLogs } from './host-log';
import { hostLogs } from './host-log';
import { readTls } from './host-tls';
import { operatorOptionsOf } from './host-http-flags';

/** The file in the data dir the operator url (with a token the host made) goes to when stdout is not a terminal. */
export const OPERATOR_URL_FILE = 'operator-url';

/** How a line of this command says it is a warning (logged at warn, without it). */
const WARNING = 'warning: ';

/** Writes `url` to `<dataDir>/operator-url` (0600, replaced); returns its path. Throws a ConfigError when it cannot. */
function writeOperatorUrl(dataDir: string, url: string): string {
  const path = join(dataDir, OPERATOR_URL_FILE);
  try {
    const fd = openSync(path, 'w', 0o600);
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${url}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (error: unknown) {
    throw new ConfigError(`cannot write the operator url to ${path}`, { cause: error });
  }
  return path;
}

/** Where `exec-rx host` writes, and the environment it reads credentials from. */
export interface HostIo {
  /** A terminal (`isTTY`) is shown the operator url; otherwise it goes to a 0600 file in the data dir (see {@link OPERATOR_URL_FILE}). */
  readonly stdout: Writable & { readonly isTTY?: boolean };
  /** Where the logs go: readable lines on a terminal (`isTTY`), JSON lines otherwise, unless `--log-format` says. */
  readonly stderr: Writable & { readonly isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** Where a relative `--data-dir` is resolved. @default process.cwd() */
  readonly cwd?: string;
  /** Ends the process at once, for a stop cut short (its timeout, a second signal). @default none: the status is only returned */
  readonly exit?: (status: number) => void;
}

/** The accepted executor keys: the configured ones, plus the local executor's. */
function executorKeys(options: HostCliOptions, io: HostIo, log: (line: string) => void, local: LocalCredentials | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  try {
    const loaded = loadHostCredentials(options.credentialsFile, io.env);
    if (loaded.warning !== undefined) log(`warning: ${loaded.warning}`);
    log(`accepting ${loaded.keys.size} access key(s) from ${loaded.source}`);
    for (const [id, secret] of loaded.keys) keys.set(id, secret);
  } catch (error: unknown) {
    // With a local executor the host can run on its throwaway key alone.
    if (local === undefined || options.credentialsFile !== undefined) throw error;
  }
  if (local !== undefined) keys.set(local.accessKeyId, local.secretAccessKey);
  return keys;
}

/** The tokens' names and roles, for a log line (`ci (operate: build,test), dash (view)`); never a token. */
function namesOf(tokens: OperatorTokens): string {
  return tokens.callers.map((caller) => `${caller.name} (${caller.role}${caller.environments === undefined ? '' : `: ${[...caller.environments].join(',')}`})`).join(', ');
}

/** The operator tokens a host accepts, and the token to show once when the host made it. */
interface HostTokens {
  readonly tokens: OperatorTokens;
  readonly shown: string | undefined;
}

/**
 * The operator tokens, and the token to show once when the host made it. With a data dir, the token a
 * host made is kept as a digest: a restarted host accepts it again (the url printed at the first start
 * still works) and makes none.
 */
async function operatorTokens(options: HostCliOptions, io: HostIo, log: (line: string) => void, state: StateStore | undefined): Promise<HostTokens> {
  const loaded = loadOperatorTokens(options.operatorTokensFile, io.env);
  if (loaded !== undefined) {
    if (loaded.warning !== undefined) log(`warning: ${loaded.warning}`);
    log(`accepting ${loaded.tokens.size} operator token(s) from ${loaded.source}: ${namesOf(loaded.tokens)}`);
    return { tokens: loaded.tokens, shown: undefined };
  }
  const kept = await state?.madeTokenDigest();
  if (kept !== undefined) {
    log('no operator token configured: the one made at the first start on this data dir still works (kept as a digest)');
    return { tokens: OperatorTokens.fromDigests([kept]), shown: undefined };
  }
  const made = OperatorTokens.generate();
  await state?.setMadeTokenDigest(OperatorTokens.digestOf(made.token));
  log('no operator token configured: made one (shown once on stdout, kept only as a digest)');
  return { tokens: made.tokens, shown: made.token };
}

function serverOptions(
  options: HostCliOptions,
  storage: StorageOptions,
  keys: ReadonlyMap<string, string>,
  tokens: OperatorTokens,
  log: HostLogger,
  state: DiskStateStore | undefined,
): HostServerOptions {
  const optional = {
    tls: readTls(options),
    publicUrl: options.publicUrl,
    region: options.region,
    maxEnvironments: options.maxEnvironments,
    maxFrameBytes: options.maxFrameBytes,
    maxHandshakesPerSecond: options.maxHandshakesPerSecond,
    handshakeBurst: fleetBurst(options.maxHandshakesPerSecond),
    metricsPort: options.metricsPort,
    previewPort: options.previewPort,
  };
  const defined = Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined));
  const operator = operatorOptionsOf(options, tokens);
  return { credentials: keys, host: options.host, port: options.port, log, operator, ...defined, ...outputLogOf(storage), ...(state === undefined ? {} : { state }) };
}

/** The host's `outputLog` option from the storage flags: none for `--data-dir none`. */
function outputLogOf(storage: StorageOptions): Pick<HostServerOptions, 'outputLog'> {
  if (storage.dataDir === undefined) return {};
  const bounds = { quotaBytes: storage.quotaBytes, totalBytes: storage.totalBytes, retentionMs: storage.retentionMs };
  return { outputLog: { dataDir: storage.dataDir, ...Object.fromEntries(Object.entries(bounds).filter(([, value]) => value !== undefined)) } };
}

/** Starts the local executor of `--data-dir none`, a child of this host; its exit is logged (the host keeps serving). */
async function startLocalExecutor(host: HostServer, environmentId: string, credentials: LocalCredentials, log: (line: string) => void): Promise<SpawnedExecutor> {
  resolveCodexBinary(); // throws the "how to get an executor" message when @openai/codex is missing
  const executor = await spawnExecutor({ mode: 'direct', remoteUrl: host.url, environmentId, credentials });
  log(`local executor started (pid ${executor.pid}, environment ${environmentId})`);
  void executor.exited.then(({ code, signal }) => log(`local executor exited (${signal === null ? `status ${String(code)}` : `signal ${signal}`})`));
  return executor;
}

/** The local executor: with a data dir, one of its own (see `./local-executor`); without, a child that stops with the host. */
async function runLocalExecutor(
  host: HostServer,
  environmentId: string,
  credentials: LocalCredentials,
  files: LocalExecutorFiles | undefined,
  log: (line: string) => void,
): Promise<SpawnedExecutor | undefined> {
  if (files === undefined) return startLocalExecutor(host, environmentId, credentials, log);
  await ensureLocalExecutor({ files, remoteUrl: host.url, environmentId, credentials, log });
  return undefined;
}

/** `exec-rx host --stop-local-executor`: see `stopLocalExecutor`. */
async function stopCommand(options: HostCliOptions, io: HostIo): Promise<number> {
  try {
    const dataDir = dataDirOf(options.storage['data-dir'], io.env, io.cwd ?? process.cwd());
    if (dataDir === undefined) throw new ConfigError('--stop-local-executor needs a data dir');
    return await stopLocalExecutor(dataDir, (line) => void io.stdout.write(`${line}\n`));
  } catch (error: unknown) {
    io.stderr.write(`exec-rx host: ${messageOf(error)}\n`);
    return EXIT_ERROR;
  }
}

/**
 * Serves until SIGINT/SIGTERM, then stops the local executor of `--data-dir none` (its processes end with
 * it; with a data dir it keeps running, see `./local-executor`) and stops the host gracefully (other executors keep their processes for their retention time and re-dial; see
 * `./host-signals`). SIGHUP reloads the operator tokens and access keys. Resolves with the exit status;
 * a bad configuration is one stderr line and 1.
 */
export async function hostCommand(options: HostCliOptions, io: HostIo): Promise<number> {
  if (options.stopLocalExecutor) return stopCommand(options, io);
  let logs: HostLogs;
  try {
    logs = hostLogs({ stderr: io.stderr, format: options.logFormat, level: options.logLevel, auditFile: options.auditLog });
  } catch (error: unknown) {
    io.stderr.write(`exec-rx host: ${messageOf(error)}\n`);
    return EXIT_ERROR;
  }
  try {
    return await serveCommand(options, io, logs);
  } finally {
    logs.close();
  }
}

/** {@link hostCommand} once its logs are open. */
async function serveCommand(options: HostCliOptions, io: HostIo, logs: HostLogs): Promise<number> {
  const log = (line: string): void => (line.startsWith(WARNING) ? logs.log.warn({}, line.slice(WARNING.length)) : logs.log.info({}, line));
  const fail = (error: unknown): void => logs.log.error({}, messageOf(error));
  let local: LocalCredentials | undefined;
  let localFiles: LocalExecutorFiles | undefined;
  let host: HostServer;
  let keys: Map<string, string>;
  let tokens: OperatorTokens;
  let shown: string | undefined;
  let storage: StorageOptions;
  let state: DiskStateStore | undefined;
  let shared: SharedStores | undefined;
  let forwarding: ForwardingOptions | undefined;
  try {
    storage = storageOptions(options.storage, io.env, io.cwd ?? process.cwd());
    const redisUrl = redisUrlOf(options.redisUrlFile, io.env);
    if (redisUrl !== undefined && options.localExecutorId !== undefined) throw new ConfigError(LOCAL_WITH_REDIS);
    shared = redisUrl === undefined ? undefined : await openSharedStores(redisUrl, options.redisPrefix, log);
    // Before listening: a second host on the same data dir stops here, with the pid of the first.
    state = storage.dataDir === undefined ? undefined : await DiskStateStore.open(storage.dataDir, { log: (line) => log(`state: ${line}`) });
    if (options.localExecutorId !== undefined) {
      localFiles = storage.dataDir === undefined ? undefined : new LocalExecutorFiles(storage.dataDir);
      local = localFiles === undefined ? makeCredentials() : await localFiles.credentials();
    }
    keys = executorKeys(options, io, log, local);
    // With replicas the made token's digest is the cluster's: every replica accepts the token one made.
    const operator = await operatorTokens(options, io, log, shared?.state ?? state);
    tokens = operator.tokens;
    shown = operator.shown;
    forwarding = shared === undefined ? undefined : forwardingOptions(options.replicaKeyFile, options.internalUrl, options.internalCa, log);
    const replica = shared === undefined ? {} : replicaOptions(shared, forwarding);
    host = await startHostServer({ ...serverOptions(options, storage, keys, operator.tokens, logs.log, state), ...replica, audit: logs.audit });
    if (options.corsOrigins.length > 0) log(`operator API open to pages of ${options.corsOrigins.join(', ')} (CORS)`);
  } catch (error: unknown) {
    await shared?.close();
    await state?.close();
    fail(error);
    return EXIT_ERROR;
  }
  let operatorUrl = `${host.url}/${shown === undefined ? '' : `#token=${shown}`}`;
  // Not a terminal (a service manager's journal, a pipe): the url with its token goes to a 0600 file.
  if (shown !== undefined && io.stdout.isTTY !== true && storage.dataDir !== undefined) {
    try {
      operatorUrl = `in ${writeOperatorUrl(storage.dataDir, operatorUrl)} (0600; it carries the token)`;
    } catch (error: unknown) {
      fail(error);
      await host.close();
      await state?.close();
      return EXIT_ERROR;
    }
  }
  shown = undefined;
  const kept = shared !== undefined ? 'in Redis, shared by the replicas' : storage.dataDir === undefined ? 'in memory (--data-dir none)' : `on disk in ${storage.dataDir}`;
  const previews = host.previewUrl === undefined ? '' : `previews: ${host.previewUrl}/ENVIRONMENT/PORT/\n`;
  const metrics = `${host.metricsUrl === undefined ? '' : `Prometheus metrics: ${host.metricsUrl}\n`}${previews}`;
  const joining = `An executor joins with:\n  ${host.joinCommand()}\n`;
  io.stdout.write(`exec-rx host listening on ${host.url}\nOperator API and page: ${operatorUrl}\nProcess output is kept ${kept}\n${metrics}${joining}`);
  let executor: SpawnedExecutor | undefined;
  if (local !== undefined && options.localExecutorId !== undefined) {
    try {
      const environmentId = options.localExecutorId;
      // Its lines name its environment as a field too, as every line about an environment does.
      executor = await runLocalExecutor(host, environmentId, local, localFiles, (line) => logs.log.info({ environmentId }, line));
    } catch (error: unknown) {
      fail(error);
      await host.close();
      await state?.close();
      return EXIT_ERROR;
    }
  }
  const { operatorTokensFile, credentialsFile } = options;
  const replicaKeys = forwarding === undefined ? undefined : { file: options.replicaKeyFile ?? '', keys: forwarding.keys };
  const stopReloading = reloadOnHangup({ operatorTokensFile, credentialsFile, env: io.env, tokens, keys, local, log, replicaKeys });
  const signals = new StopSignals();
  const draining = shared === undefined ? undefined : drainOnSignal(host, log);
  try {
    // Last: the data dir stays locked until the host's last flush.
    const signal = await (draining === undefined ? signals.first : Promise.race([signals.first, draining.drained]));
    if (localFiles !== undefined) log('the local executor keeps running, with its processes (exec-rx host --stop-local-executor ends it)');
    return await stopGracefully(signal, signals, { executor, host, state }, { timeoutS: options.shutdownTimeoutS, log, exit: io.exit });
  } finally {
    draining?.dispose();
    signals.dispose();
    stopReloading();
    await shared?.close();
  }
}
