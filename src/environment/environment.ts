import type { Observable } from 'rxjs';
import { firstValueFrom } from 'rxjs';
import { mergeMap } from 'rxjs/operators';
import { EnvironmentRecoveringError, ExecClientError, ProtocolError } from '../errors';
import { ExecBackend } from '../exec/exec-backend';
import { RemoteFileSystem } from '../fs/remote-file-system';
import { ExecHttpClient } from '../http/http-client';
import type { ProcessStreamOptions } from '../exec/exec-process';
import type { ExecClient } from '../session/exec-client';
import { isTerminal } from '../session/exec-session';
import type { EnvironmentInfo } from '../wire/environment';
import type { ConnectionState, EnvironmentObservedStatus } from './connection-state';
import { toConnectionState } from './connection-state';

const READY: EnvironmentObservedStatus = Object.freeze({ status: 'ready' });
const PENDING: EnvironmentObservedStatus = Object.freeze({ status: 'pending' });

/** How long the `environment/status` probe waits (codex: 10 s). */
export const STATUS_TIMEOUT_MS = 10_000;
/** How long `environment/info` waits (codex: 30 s). */
export const INFO_TIMEOUT_MS = 30_000;

/**
 * One executor's environment. The same object stays valid across socket replacements; after a failure
 * every call rejects with the failure.
 */
export class Environment {
  private infoPromise: Promise<EnvironmentInfo> | undefined;
  private readonly backend: ExecBackend;
  private readonly filesystem: RemoteFileSystem;
  private readonly http: ExecHttpClient;

  /**
   * The connection state: replays the current value to each subscriber, then emits each change
   * (connected, disconnected while recovering, failed). Completes after `failed`. Never errors.
   */
  readonly connectionState$: Observable<ConnectionState>;

  /** @internal Built by EnvironmentManager. */
  constructor(
    /** The environment id it was created under. */
    readonly id: string,
    /** @internal */ readonly client: ExecClient,
    streamOptions: () => ProcessStreamOptions,
  ) {
    this.connectionState$ = toConnectionState(client.state$);
    this.backend = new ExecBackend(client, streamOptions);
    this.filesystem = new RemoteFileSystem(client);
    this.http = new ExecHttpClient(client);
  }

  /** The executor's filesystem (`fs/*`): paths as native absolute paths or `file://` URIs, bytes in and out. */
  getFilesystem(): RemoteFileSystem {
    return this.filesystem;
  }

  /** HTTP requests made by the executor (`http/request`), buffered or streamed. */
  getHttpClient(): ExecHttpClient {
    return this.http;
  }

  /** Starts processes on this environment. */
  getExecBackend(): ExecBackend {
    return this.backend;
  }

  /**
   * The environment info: from the initialize reply when it carried one, else asked once with
   * `environment/info` (lazily, on the first call) and cached. Rejects with the call's typed error.
   */
  info(): Promise<EnvironmentInfo> {
    const cached = this.client.cachedInfo;
    if (cached !== undefined) return Promise.resolve(cached);
    if (this.infoPromise === undefined) {
      const asking = this.forceInfo();
      this.infoPromise = asking;
      asking.catch(() => {
        if (this.infoPromise === asking) this.infoPromise = undefined;
      });
    }
    return this.infoPromise;
  }

  /** Asks `environment/info` again (waits for recovery) and resolves with the answer. */
  async forceInfo(): Promise<EnvironmentInfo> {
    const info = await firstValueFrom(this.client.call('environment/info', undefined, { timeoutMs: INFO_TIMEOUT_MS }));
    this.infoPromise = Promise.resolve(info);
    return info;
  }

  /** Terminates every live process (best effort, 5 s each); used by `EnvironmentManager.close`. */
  async terminateAll(): Promise<void> {
    const ids = this.client.liveProcessIds();
    await Promise.allSettled(ids.map((processId) => firstValueFrom(this.client.call('process/terminate', { processId }, { timeoutMs: 5_000 }))));
  }

  /**
   * Probes the connection without waiting for recovery: `ready` when `environment/status` answers ready,
   * `disconnected` with the error at once while recovering, on a failed probe, or once failed. Never rejects.
   */
  status(): Promise<EnvironmentObservedStatus> {
    const state = this.client.state;
    if (state.type === 'connecting') return Promise.resolve(PENDING);
    if (state.type === 'recovering') return Promise.resolve({ status: 'disconnected', error: new EnvironmentRecoveringError(this.id) });
    if (isTerminal(state)) return Promise.resolve({ status: 'disconnected', error: state.error });
    const live = this.client.liveRpc();
    const probe =
      live === undefined
        ? firstValueFrom(this.client.connection(true).pipe(mergeMap((rpc) => rpc.request('environment/status', undefined, { timeoutMs: STATUS_TIMEOUT_MS }))))
        : live.call('environment/status', undefined, { timeoutMs: STATUS_TIMEOUT_MS });
    // Plain promise chaining, not async/await: this is the health probe a UI may poll hard.
    return probe.then(
      (result): EnvironmentObservedStatus => (result.status === 'ready' ? READY : { status: 'disconnected', error: new ProtocolError(`environment status is ${String(result.status)}`) }),
      (error: unknown): EnvironmentObservedStatus => ({ status: 'disconnected', error: error instanceof ExecClientError ? error : new ProtocolError(String(error)) }),
    );
  }
}
