/**
 * `EnvironmentManager`: holds one environment (executor) and its logical client, built from an accepted
 * socket, a dialled url or a stdio child, or taken over after a host restart; and `memoryHistories`, its
 * default output histories. What it is built with is in environment-manager-options.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { of } from 'rxjs';
import type WebSocket from 'ws';
import { ClosedError, ReplacementRejectedError } from '../errors';
import { boundedHistories } from '../exec/bounded-histories';
import type { HistoryFactory } from '../exec/output-history';
import type { ProcessStreamOptions } from '../exec/process-stream-options';
import type { ExecFetchOptions } from '../http/exec-fetch';
import { isAbortOf, whileNotAborted } from '../rpc/abort';
import { AcceptedSockets } from '../session/accepted-sockets';
import { DialledSockets } from '../session/dialled-sockets';
import { ExecClient } from '../session/exec-client';
import type { AdmittedSession, SessionTakeover } from '../session/exec-client-options';
import type { ExecProcess } from '../exec/exec-process';
import type { AdoptedProcessRecord, LostProcess, SessionAdoption } from './session-adoption';
import type { SocketPort } from '../transport/socket-port';
import { stdioSocketPort } from '../transport/stdio-socket-port';
import { wsSocketPort } from '../transport/ws-socket-port';
import type { EnvironmentObservedStatus } from './connection-state';
import { Environment } from './environment';
import type { CloseOptions, ConnectOptions, EnvironmentManagerOptions } from './environment-manager-options';
import { clientOptions, fetchOptions } from './environment-manager-options';


/** A socket the manager takes: a `ws` WebSocket (accepted with `handleUpgrade`, already open) or a SocketPort. */
export type AcceptedSocket = WebSocket | SocketPort;

/** What `EnvironmentManager.adoptAcceptedWebsocket` resolves with. */
export interface AdoptedEnvironment {
  /** The manager, exactly like one made by {@link EnvironmentManager.fromAcceptedWebsocket}; the caller closes it. */
  readonly manager: EnvironmentManager;
  /** true: the executor still had the session (resumed); false: it did not (a new session was made). */
  readonly resumed: boolean;
  /** The adopted processes, live again, registered in the environment's process table like started ones (but for `unlisted` records). */
  readonly processes: readonly ExecProcess[];
  /** Processes that could not be adopted, each with a clear reason; no ExecProcess is made for them. */
  readonly lost: readonly LostProcess[];
}

/**
 * The default {@link EnvironmentManagerOptions.outputHistory}: each process's history in memory, within
 * `processHistory`'s bounds, all of them within one byte budget of `totalHistoryBytes` made for this
 * call (a manager makes one for itself). Under the budget, the histories of ended processes are emptied
 * first, in the order they ended, then the oldest events of running ones.
 */
export function memoryHistories(options: Pick<EnvironmentManagerOptions, 'processHistory' | 'totalHistoryBytes'>): HistoryFactory {
  return boundedHistories(options.processHistory, options.totalHistoryBytes);
}

/**
 * Holds an environment (executor) and its logical client (codex `EnvironmentManager`). Build it from an
 * accepted socket, a dialled url or a stdio child; call `close()` when done. Each way of building one
 * gives it exactly one environment; the lookups take an id, as codex's do, and know only that one.
 */
export class EnvironmentManager {
  private closed = false;

  private constructor(
    private readonly environment: Environment,
    /** The accepted sockets of an environment built from one (replaceable); `undefined` when dialled or stdio. */
    private readonly accepted: AcceptedSockets | undefined,
  ) {}

  /**
   * Adopts an executor's accepted WebSocket: sends `initialize {clientName}`, then `initialized`.
   * Resolves with the manager once the session is installed; rejects (and closes the socket) when the
   * options carry a `resumeSessionId` ("initial connection cannot resume a session") or the handshake fails.
   */
  static async fromAcceptedWebsocket(environmentId: string, socket: AcceptedSocket, options: EnvironmentManagerOptions): Promise<EnvironmentManager> {
    const port = toPort(socket, 'accepted');
    if (options.resumeSessionId !== undefined) {
      port.close('resume refused');
      throw new ReplacementRejectedError('accepted exec-server initial connection cannot resume a session');
    }
    const accepted = new AcceptedSockets(port);
    const client = new ExecClient(accepted.sockets$, clientOptions(options, true));
    accepted.watch(client);
    return EnvironmentManager.started(environmentId, client, accepted, options);
  }

  /**
   * Dials a listening executor (`codex exec-server --listen ws://...`), with headers such as a bearer
   * token. When the socket drops it re-dials the same url and resumes the session by itself within the
   * recovery deadline (re-dials evaluate `options.headers` again when it is a function). Rejects with
   * AuthenticationError (401), DialHeadersError (the headers function threw or rejected), ConnectError,
   * or the handshake's error. The caller closes the manager it resolves with (or `await using` it).
   *
   * `options.signal` cancels the connect: an already-aborted signal rejects at once with its `reason`,
   * nothing dialled; an abort before `connect` resolved rejects with `signal.reason` and closes what it
   * was opening (the socket being dialled, or the session being initialized: the executor then keeps
   * that new session for its retention time). Once `connect` resolved the signal is ignored.
   */
  static async connect(environmentId: string, url: string, options: ConnectOptions): Promise<EnvironmentManager> {
    const signal = options.signal;
    if (signal?.aborted === true) throw signal.reason;
    const dialled = new DialledSockets(url, options, options.scheduler);
    const client = new ExecClient(dialled.sockets$, clientOptions(options, true));
    dialled.watch(client);
    try {
      return await whileNotAborted(signal, () => EnvironmentManager.started(environmentId, client, undefined, options));
    } catch (error: unknown) {
      // Unsubscribes the dial (which terminates a socket still opening) or closes the connection.
      if (isAbortOf(signal, error)) client.close('exec-server connect aborted');
      throw error;
    }
  }

  /**
   * Drives an executor spawned with `--listen stdio` (the caller owns the child). A drop is final: the
   * environment fails with a typed error and every pending call settles.
   */
  static async fromStdio(environmentId: string, child: Pick<ChildProcess, 'stdin' | 'stdout'>, options: EnvironmentManagerOptions): Promise<EnvironmentManager> {
    if (child.stdin === null || child.stdout === null) throw new ClosedError('the executor child has no stdio pipes');
    const port = stdioSocketPort(child.stdout, child.stdin);
    const client = new ExecClient(of(port), clientOptions({ ...options, keepalive: false }, false));
    return EnvironmentManager.started(environmentId, client, undefined, options);
  }

  /**
   * Takes over an executor's session on its accepted WebSocket after the host restarted (the executor
   * dialled in again with a new socket). Each record's process is registered (its history made by
   * `options.outputHistory`, its seqs going on after `lastSeq`, its writeIds from `nextWriteId`): before
   * `initialize {clientName, resumeSessionId: adoption.sessionId}` is sent when the records are given, or
   * once the executor answered it when they are asked for (`AdoptionRecords`, after `options.admit`); then
   * one `process/read {afterSeq: lastSeq}` per process. When the executor's retained window no longer
   * reaches `lastSeq + 1`, the process's events start with ONE `truncated` marker, then the rest.
   *
   * Resolves once the session is installed: `resumed: false` when the executor no longer had the session
   * (-32600 unknown session id: a plain `initialize` followed on the same socket, and every record is
   * `lost`); a record whose process the resumed session no longer knows is `lost` too. Rejects with the
   * handshake's typed error (RpcError, RequestTimeoutError, TransportClosedError ...), or the admission's
   * or the records' error, after closing the socket; the records' histories are then left as they were.
   * `options.resumeSessionId` is not used. Afterwards the manager is like one from
   * {@link fromAcceptedWebsocket}; the caller closes it.
   */
  static async adoptAcceptedWebsocket(environmentId: string, socket: AcceptedSocket, adoption: SessionAdoption, options: EnvironmentManagerOptions): Promise<AdoptedEnvironment> {
    const lost: LostProcess[] = [];
    let resumed = true;
    const goneReason = `the executor no longer has session ${adoption.sessionId} (its 80 s retention passed); the process was killed with it`;
    const given = typeof adoption.processes === 'function' ? [] : adoption.processes;
    const asked = typeof adoption.processes === 'function' ? adoption.processes : undefined;
    const takeover: SessionTakeover = {
      sessionId: adoption.sessionId,
      sessionLost: () => {
        resumed = false;
        for (const record of given) lost.push({ processId: record.processId, reason: goneReason });
      },
      processLost: (processId, error) =>
        lost.push({ processId, reason: `the executor no longer knows process ${processId} in session ${adoption.sessionId} (${error.rpcMessage})` }),
    };
    const adopted: { readonly record: AdoptedProcessRecord; readonly process: ExecProcess }[] = [];
    const adopt = (record: AdoptedProcessRecord): void => {
      adopted.push({ record, process: backend.adopt(record.processId, record, { argv: record.argv ?? [], tty: record.tty ?? false }) });
    };
    const admit = async (session: AdmittedSession): Promise<void> => {
      await options.admit?.(session);
      if (asked === undefined) return;
      const records = await asked(session);
      if (session.resumed) records.forEach(adopt);
      else for (const record of records) lost.push({ processId: record.processId, reason: goneReason });
    };
    const accepted = new AcceptedSockets(toPort(socket, 'accepted'));
    const client = new ExecClient(accepted.sockets$, { ...clientOptions(options, true), resumeSessionId: undefined, takeover, admit });
    accepted.watch(client);
    const manager = EnvironmentManager.build(environmentId, client, accepted, options);
    const backend = manager.environment.getExecBackend();
    given.forEach(adopt);
    await client.start();
    const lostIds = new Set(lost.map((l) => l.processId));
    const processes = adopted.filter(({ record }) => !lostIds.has(record.processId));
    for (const { record, process } of processes) if (record.unlisted !== true) backend.list(process, record.argv ?? [], record.tty ?? false);
    return { manager, resumed, processes: processes.map(({ process }) => process), lost };
  }

  private static async started(environmentId: string, client: ExecClient, accepted: AcceptedSockets | undefined, options: EnvironmentManagerOptions): Promise<EnvironmentManager> {
    const manager = EnvironmentManager.build(environmentId, client, accepted, options);
    await client.start();
    return manager;
  }

  private static build(environmentId: string, client: ExecClient, accepted: AcceptedSockets | undefined, options: EnvironmentManagerOptions): EnvironmentManager {
    const outputHistory = options.outputHistory ?? memoryHistories(options);
    const streamOptions = (): ProcessStreamOptions => ({ ...options.processHistory, outputHistory, scheduler: options.scheduler });
    let http: ExecFetchOptions;
    try {
      http = fetchOptions(options);
    } catch (error: unknown) {
      client.close('invalid http options');
      throw error;
    }
    const environment = new Environment(environmentId, client, {
      http,
      streamOptions,
      processes: {
        ...(options.keepClosedMs === undefined ? {} : { keepClosedMs: options.keepClosedMs }),
        ...(options.keepClosed === undefined ? {} : { keepClosed: options.keepClosed }),
      },
      polls: {
        ...(options.statusPollMs === undefined ? {} : { statusPollMs: options.statusPollMs }),
        ...(options.infoPollMs === undefined ? {} : { infoPollMs: options.infoPollMs }),
      },
      scheduler: options.scheduler,
    });
    return new EnvironmentManager(environment, accepted);
  }

  /**
   * Hands in the executor's new socket after it dialled in again. Resolves once the hand-off is
   * accepted: the old socket (if still open) is closed first, then the new one is queued and the session
   * resumed in the background. Rejects, closing `socket`, when another replacement is still being
   * processed, the environment failed, or it is not an accepted-socket environment.
   */
  async replaceAcceptedWebsocket(environmentId: string, socket: AcceptedSocket): Promise<void> {
    const port = toPort(socket, 'accepted');
    const environment = this.getEnvironment(environmentId);
    if (environment === undefined || this.accepted === undefined) {
      port.close('not replaceable');
      throw new ReplacementRejectedError(environment === undefined ? `unknown environment ${environmentId}` : 'only an accepted exec-server connection can be replaced directly');
    }
    this.accepted.replace(environment.client, port);
  }

  /** The environment's observed status; `undefined` for an unknown id. Never rejects. */
  getEnvironmentStatus(environmentId: string): Promise<EnvironmentObservedStatus | undefined> {
    return this.getEnvironment(environmentId)?.status() ?? Promise.resolve(undefined);
  }

  /** The environment the manager was built with. */
  defaultEnvironment(): Environment | undefined {
    return this.environment;
  }

  /** An environment by id (only the one it was built with); the same object across replacements. */
  getEnvironment(environmentId: string): Environment | undefined {
    return environmentId === this.environment.id ? this.environment : undefined;
  }

  /**
   * Detaches from every executor and settles everything: processes fail with ClosedError, waiting calls
   * reject, sockets close. The executor keeps the session for its retention time unless
   * `terminateProcesses` asks to terminate the live processes first. Waits first (at most 2 s) for the
   * helpers removing the temp files of sized ttys that ended (see `ExecBackend.idle`).
   */
  async close(options: CloseOptions = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (options.terminateProcesses === true) await this.environment.terminateAll();
    await this.environment.helpersIdle();
    this.environment.client.close('exec-server environment manager closed');
  }

  /**
   * `await using manager = await EnvironmentManager.connect(...)`: {@link close} with its defaults when
   * the scope ends (processes are left to the executor's retention, not terminated). Resolves once
   * closed; never rejects; idempotent, like `close`.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

const toPort = (socket: AcceptedSocket, label: string): SocketPort => ('listen' in socket ? socket : wsSocketPort(socket, { label }));
