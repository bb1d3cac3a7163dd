/**
 * What `exec-rx host` does with signals. SIGINT or SIGTERM stops it gracefully (see `HostServer.close`:
 * refuse, flush the logs, end the event streams with the come-back event, let the executors' sockets go
 * without their processes), then releases the data dir's lock: status 0. Past `--shutdown-timeout` it
 * exits at once with 1 and a line naming the step that did not finish; a second SIGINT or SIGTERM during
 * the stop exits at once with 128 + the signal's number (130, 143). SIGHUP reloads the operator tokens
 * (a token gone or changed is revoked: its event streams end) and the executors' access keys: one line
 * per reload, naming counts, files and revoked tokens' names, never a token or secret.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, timer } from 'rxjs';
import { loadOperatorTokens } from '../host/api/operator-tokens';
import type { OperatorTokens } from '../host/api/operator-tokens';
import type { ReplicaKeys } from '../host/api/replica-keys';
import { loadReplicaKeys } from '../host/api/replica-keys';
import { loadHostCredentials } from '../host/host-credentials';
import type { HostServer } from '../host/host-options';
import type { DiskStateStore } from '../store/disk/disk-state-store';
import type { SpawnedExecutor } from '../executor/spawn-executor';
import { EXIT_ERROR } from './exit-codes';
import { messageOf } from '../errors';

/** The status of a stop cut short by a second signal: 128 + its number. */
const CUT_SHORT_STATUS: Readonly<Record<'SIGINT' | 'SIGTERM', number>> = { SIGINT: 130, SIGTERM: 143 };

type StopSignal = 'SIGINT' | 'SIGTERM';


/**
 * SIGINT and SIGTERM, from construction to `dispose()`: `first` resolves with the first one, `second` with
 * the next. One listener stays all along, so no signal finds the default action (death) between the two.
 */
export class StopSignals {
  readonly first: Promise<StopSignal>;
  readonly second: Promise<StopSignal>;
  private readonly heard: ((signal: StopSignal) => void)[] = [];
  private readonly listener = (received: NodeJS.Signals): void => this.heard.shift()?.(received === 'SIGINT' ? 'SIGINT' : 'SIGTERM');

  constructor() {
    this.first = new Promise((resolve) => this.heard.push(resolve));
    this.second = new Promise((resolve) => this.heard.push(resolve));
    process.on('SIGINT', this.listener).on('SIGTERM', this.listener);
  }

  /** Stops listening (the default actions are back). */
  dispose(): void {
    process.off('SIGINT', this.listener).off('SIGTERM', this.listener);
  }
}

/** What a stop stops, in order. */
export interface StopParts {
  /** The local executor (its processes end with it), first. */
  readonly executor: SpawnedExecutor | undefined;
  readonly host: HostServer;
  /** The data dir's state: its lock is released last, after the last flush. */
  readonly state: DiskStateStore | undefined;
}

/** How a stop goes. */
export interface StopOptions {
  readonly timeoutS: number;
  readonly log: (line: string) => void;
  /** Ends the process at once (a stop cut short); absent, the status is only returned. */
  readonly exit: ((status: number) => void) | undefined;
  /** The deadline's clock. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * Stops after `signal` (see the file comment); resolves with the exit status: 0 when every step
 * finished in time, 1 past the timeout, 130/143 at `signals.second` (after calling `options.exit`).
 */
export async function stopGracefully(signal: StopSignal, signals: StopSignals, parts: StopParts, options: StopOptions): Promise<number> {
  const { log } = options;
  log(`${signal}: stopping (within ${options.timeoutS} s; a second SIGINT or SIGTERM exits at once)`);
  let step = parts.executor === undefined ? 'refusing' : 'stopping the local executor';
  const graceful = (async (): Promise<'done' | 'failed'> => {
    try {
      await parts.executor?.stop();
      await parts.host.close({
        onStep: (next) => {
          step = next;
        },
      });
      step = 'releasing the data dir lock';
      await parts.state?.close();
      return 'done';
    } catch (error: unknown) {
      log(`stopping failed while ${step}: ${messageOf(error)}`);
      return 'failed';
    }
  })();
  let deadline: { unsubscribe(): void } | undefined;
  const late = new Promise<'late'>((resolve) => (deadline = timer(options.timeoutS * 1000, options.scheduler ?? asyncScheduler).subscribe(() => resolve('late'))));
  const outcome = await Promise.race([graceful, late, signals.second]);
  deadline?.unsubscribe();
  if (outcome === 'done') {
    log('stopped');
    return 0;
  }
  if (outcome === 'failed') return EXIT_ERROR;
  const status = outcome === 'late' ? EXIT_ERROR : CUT_SHORT_STATUS[outcome];
  log(outcome === 'late' ? `shutdown timeout (${options.timeoutS} s): did not finish ${step}; exiting now` : `${outcome} again: exiting now, without finishing ${step}`);
  options.exit?.(status);
  return status;
}

/** What SIGHUP reloads, and from where. */
export interface ReloadParts {
  readonly operatorTokensFile: string | undefined;
  readonly credentialsFile: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  /** The tokens the host checks (replaced in place). */
  readonly tokens: OperatorTokens;
  /** The keys the host checks (refilled in place). */
  readonly keys: Map<string, string>;
  /** The local executor's throwaway key, kept across reloads. */
  readonly local: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
  /** With forwarding between replicas: the replica key file and the keys the host signs and checks with (replaced in place). */
  readonly replicaKeys?: { readonly file: string; readonly keys: ReplicaKeys } | undefined;
  readonly log: (line: string) => void;
}

/** Reloads the replica keys (with forwarding); a failure keeps the old ones. Says the signing key's digest, never a key. */
function reloadReplicaKeys(parts: ReloadParts): string {
  const replica = parts.replicaKeys;
  if (replica === undefined) return '';
  try {
    const loaded = loadReplicaKeys(replica.file);
    replica.keys.replaceWith(loaded.keys);
    const warning = loaded.warning === undefined ? '' : ` (warning: ${loaded.warning})`;
    return `; ${loaded.keys.size} replica key(s) from ${replica.file}, signing with ${loaded.keys.signingDigest}${warning}`;
  } catch (error: unknown) {
    return `; replica keys kept (${replica.keys.size}): ${messageOf(error)}`;
  }
}

/** Reloads the operator tokens; says what it did (a failure keeps the old set, and says why). */
function reloadTokens(parts: ReloadParts): string {
  try {
    const loaded = loadOperatorTokens(parts.operatorTokensFile, parts.env);
    if (loaded === undefined) return 'operator tokens: none configured, the one made at start kept';
    // Revoked tokens (gone, or their secret, role or environments changed) lose their event streams now.
    const revoked = parts.tokens.replaceWith(loaded.tokens);
    const ended = revoked.size === 0 ? '' : `, revoked ${[...revoked].join(', ')} (their event streams ended)`;
    return `${loaded.tokens.size} operator token(s) from ${loaded.source}${ended}${loaded.warning === undefined ? '' : ` (warning: ${loaded.warning})`}`;
  } catch (error: unknown) {
    return `operator tokens kept (${parts.tokens.size}): ${messageOf(error)}`;
  }
}

/** Reloads the executors' access keys (the local executor's stays); a failure keeps the old set. */
function reloadKeys(parts: ReloadParts): string {
  const kept = parts.keys.size - (parts.local === undefined ? 0 : 1);
  try {
    const loaded = loadHostCredentials(parts.credentialsFile, parts.env);
    parts.keys.clear();
    for (const [id, secret] of loaded.keys) parts.keys.set(id, secret);
    if (parts.local !== undefined) parts.keys.set(parts.local.accessKeyId, parts.local.secretAccessKey);
    return `${loaded.keys.size} access key(s) from ${loaded.source}${loaded.warning === undefined ? '' : ` (warning: ${loaded.warning})`}`;
  } catch (error: unknown) {
    if (parts.local !== undefined && parts.credentialsFile === undefined && kept === 0) return "access keys: none configured, the local executor's kept";
    return `access keys kept (${kept}): ${messageOf(error)}`;
  }
}

/** Reloads on every SIGHUP (one line each); returns the function that stops listening. */
export function reloadOnHangup(parts: ReloadParts): () => void {
  const reload = (): void => parts.log(`SIGHUP: reload: ${reloadTokens(parts)}; ${reloadKeys(parts)}${reloadReplicaKeys(parts)}`);
  process.on('SIGHUP', reload);
  return () => process.off('SIGHUP', reload);
}

/**
 * SIGUSR2 drains a replica (`HostServer.drain`): not ready at once, its executors let go to re-dial
 * another replica; `drained` then resolves as a SIGTERM would, and the host stops gracefully and exits.
 */
export function drainOnSignal(host: HostServer, log: (line: string) => void): { readonly drained: Promise<'SIGTERM'>; dispose(): void } {
  let heard: () => void = () => undefined;
  const drained = new Promise<'SIGTERM'>((resolve) => {
    heard = () => {
      log('SIGUSR2: draining (not ready now; the executors re-dial another replica), then stopping');
      void host.drain().then(() => resolve('SIGTERM'));
    };
  });
  const listener = (): void => heard();
  process.once('SIGUSR2', listener);
  return { drained, dispose: () => process.off('SIGUSR2', listener) };
}
