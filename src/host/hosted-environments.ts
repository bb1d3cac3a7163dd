/**
 * The environments a host serves, one slot per environment id. The first socket of an id (or the first
 * after its environment failed) starts a new generation with `EnvironmentManager.fromAcceptedWebsocket`;
 * later sockets of a live generation go to `replaceAcceptedWebsocket`.
 */
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, BehaviorSubject, endWith, filter, map, of, race, Subject, take, timer } from 'rxjs';
import type WebSocket from 'ws';
import type { ExecClientErrorCode } from '../errors';
import { ExecClientError } from '../errors';
import type { ConnectionState } from '../environment/connection-state';
import type { Environment } from '../environment/environment';
import type { EnvironmentManagerOptions } from '../environment/environment-manager';
import { EnvironmentManager, memoryHistories } from '../environment/environment-manager';
import type { HistoryFactory } from '../exec/output-history';
import type { Diagnostic } from '../rpc/diagnostics';
import type { ConnectionFlow } from '../rpc/connection-flow';
import type { DiskPauseCount, DiskPauseLog } from './disk-backpressure';
import { pauseWhileBehind } from './disk-backpressure';
import { diskHistories } from './log/disk-history';
import type { OutputLog } from './log/output-log';
import type { OutputLogStore } from './log/output-log-store';
import type { StdinRecord } from './log/stdin-record';
import type { ExecProcess } from '../exec/exec-process';
import type { EnvironmentInfo } from '../wire/environment';
import type { HostLogger, HostLogOption } from './host-logger';
import { hostLoggerOf } from './host-logger';

/** Where a host remembers its executors' sessions across restarts (the host's state in its data dir). */
export interface SessionRecords {
  /** The session of `environmentId`'s executor the host last knew, if any. */
  sessionOf(environmentId: string): string | undefined;
  /** Remembers the session an environment's executor now has; resolves once it is on the disk (or could not be written: reported there). Never rejects. */
  record(environmentId: string, sessionId: string): Promise<void>;
}

/** A process a restarted host took back with the stdin it had persisted (the operator API writes it again). */
export interface TakenBackStdin {
  /** The process taken back. */
  readonly process: ExecProcess;
  /** Its stdin as persisted before the restart. */
  readonly record: StdinRecord;
  /** The stdin FIFO's feeder, taken back too (a `fifo` record); undefined for a pty, or when it was lost. */
  readonly feeder: ExecProcess | undefined;
}

/** `starting` until the first handshake finished; then the environment's connection state (see `ConnectionState`). */
export type HostedState = 'starting' | ConnectionState['state'];

/** One environment as the host sees it. A new object on every change. */
export interface HostedEnvironment {
  /** The environment id the executor registered under (`--environment-id`). */
  readonly id: string;
  /** 1 for the first executor session under this id; +1 each time a failed one is started afresh. */
  readonly generation: number;
  /** Where this generation is: starting, connected, disconnected (recovering) or failed. */
  readonly state: HostedState;
  /** The executor's environment info (what `Environment.info()` resolves with), once connected. */
  readonly info: EnvironmentInfo | undefined;
  /** The environment to start processes on; `undefined` while starting or when the start failed. */
  readonly environment: Environment | undefined;
  /** Why it is disconnected or failed (a library error message; never carries secrets). */
  readonly error: string | undefined;
  /** The library's code of that error (`RESUME_FAILED`, `TRANSPORT_CLOSED` ...). */
  readonly errorCode: ExecClientErrorCode | undefined;
}

/**
 * Something that happened to an environment the host serves, as it happened: its connection's
 * diagnostics (see `Environment.diagnostics$`), and each change of its state (a reconnect shows as
 * `disconnected` then `connected`, a lost session as `failed`). Carries no secret.
 */
export type HostEvent =
  | {
      /** The kind of event. */
      readonly type: 'diagnostic';
      /** The environment it happened on. */
      readonly environmentId: string;
      /** Its generation. */
      readonly generation: number;
      /** What went wrong on its connection (it stays up). */
      readonly diagnostic: Diagnostic;
    }
  | {
      /** The kind of event. */
      readonly type: 'state';
      /** The environment whose state changed. */
      readonly environmentId: string;
      /** Its generation. */
      readonly generation: number;
      /** Its new state. */
      readonly state: HostedState;
      /** The library's code of the error that made it so, for `disconnected` and `failed`. */
      readonly errorCode: ExecClientErrorCode | undefined;
    };

interface Slot {
  view: HostedEnvironment;
  manager: EnvironmentManager | undefined;
  /**
   * The executor's latest socket. Once handed over, its manager owns it (its port closes it); the host
   * keeps the raw socket for two things the manager cannot do: `dropSocket` cuts it as a network failure
   * would (a remote close the manager recovers from, where the port's own close is a local one), and a
   * socket whose first handshake still runs has no manager yet to close it when the host closes.
   */
  socket: WebSocket | undefined;
  watching: Subscription | undefined;
}

const OPEN = 1;

/**
 * How long after its start a restarted host expects an executor whose session it remembers to come
 * back: the executor keeps a detached session 80 s, plus a margin for its backoff and its handshake.
 */
export const TAKE_BACK_WAIT_MS = 90_000;

/** Owns every manager and socket it adopts; `close()` releases them all. */
export class HostedEnvironments {
  private readonly slots = new Map<string, Slot>();
  private readonly subject = new BehaviorSubject<readonly HostedEnvironment[]>([]);
  private closed = false;

  /** Every environment, current generation only, in first-seen order. Replays the current list; completes on close. */
  readonly environments$ = this.subject.asObservable();

  private readonly eventSubject = new Subject<HostEvent>();

  /** Times an executor was paused because a process's output log could not keep up with it. */
  readonly diskPauses: DiskPauseCount = { pauses: 0 };
  /** Environments whose first session since this host started is installed (taken back or new). */
  private readonly taken = new Set<string>();
  /** The latest write of each environment's session record (see {@link sessionRecorded}). */
  private readonly sessionWrites = new Map<string, Promise<void>>();
  /** The stdin of processes taken back, by `environmentId\u0000processId`, while they run. */
  private readonly stdins = new Map<string, TakenBackStdin>();
  /** Logs reopened to take an environment's processes back, kept across failed attempts. */
  private readonly reopened = new Map<string, Map<string, OutputLog>>();
  /** How the pauses of every environment are counted and said, on the host's clock. */
  private readonly pauseLog: DiskPauseLog = { count: this.diskPauses, now: () => this.now() };

  /** Each {@link HostEvent} as it happens (hot: no replay). Completes on close; never errors. */
  readonly events$ = this.eventSubject.asObservable();

  /** The id of each environment whose first session since this start was installed or found gone (`taken`). */
  private readonly settledSubject = new Subject<string>();
  /** When this host started, on its clock: the take-back wait counts from here. */
  private readonly startedAt: number;
  /** Where this table writes what happens. */
  private readonly log: HostLogger;

  constructor(
    private readonly managerOptions: EnvironmentManagerOptions,
    logTo: HostLogOption,
    /** Where processes keep their output when the host has a data dir; in memory otherwise. */
    private readonly outputLogs?: OutputLogStore,
    /** Hears each environment's executor session id whenever it connects (the host records it in its state). */
    /** Where the executors' sessions are remembered across restarts (the host's state); none without a data dir. */
    private readonly sessions?: SessionRecords,
    /** How long after the start an executor whose session the host remembers is expected back. @default TAKE_BACK_WAIT_MS */
    private readonly takeBackWaitMs: number = TAKE_BACK_WAIT_MS,
    /** Wraps each generation's history factory (the host's metrics count what its processes send). @default none */
    private readonly observeHistories: (factory: HistoryFactory) => HistoryFactory = (factory) => factory,
  ) {
    this.log = hostLoggerOf(logTo);
    this.startedAt = this.now();
  }

  /**
   * Whether the host still expects the executor of `id` back to take its session (and the processes its
   * logs found `unknown`) back: it remembers the session, the environment's first session since this
   * start is not installed yet (neither taken back nor found gone), and `takeBackWaitMs` since the start
   * has not run out. Always false without a data dir.
   */
  awaitingTakeBack(id: string): boolean {
    if (this.closed || this.outputLogs === undefined || this.taken.has(id) || this.sessions?.sessionOf(id) === undefined) return false;
    return this.now() < this.startedAt + this.takeBackWaitMs;
  }

  /**
   * Resolves once the session `id`'s executor has now is on the disk (at once without a data dir, or before
   * its first connection); the operator API awaits it before a start, so that a host restarted after the
   * start knows the session to take the process back from. Never rejects (a failed write is logged).
   */
  sessionRecorded(id: string): Promise<void> {
    return this.sessionWrites.get(id) ?? Promise.resolve();
  }

  /**
   * Emits once and completes when `id` is no longer awaited (see {@link awaitingTakeBack}): at once when it
   * is not; else once its executor's session was taken back (its processes adopted or marked `lost`) or
   * found gone (they are `lost`), once the wait runs out, or when the host closes. Cold; unsubscribing
   * stops the wait's timer.
   */
  takeBackSettled(id: string): Observable<void> {
    if (!this.awaitingTakeBack(id)) return of(undefined);
    const settled$ = this.settledSubject.pipe(
      filter((settled) => settled === id),
      endWith(id),
    );
    return race(settled$, timer(Math.max(0, this.startedAt + this.takeBackWaitMs - this.now()), this.scheduler)).pipe(
      take(1),
      map(() => undefined),
    );
  }

  /** Every environment's current generation, in first-seen order. */
  all(): readonly HostedEnvironment[] {
    return this.subject.getValue();
  }

  /** The current generation of `id`. */
  get(id: string): HostedEnvironment | undefined {
    return this.slots.get(id)?.view;
  }

  /** Ids whose current generation is not failed. */
  liveIds(): string[] {
    return [...this.slots].filter(([, slot]) => slot.view.state !== 'failed').map(([id]) => id);
  }

  /** Ids whose current generation failed, in first-seen order. */
  failedIds(): string[] {
    return [...this.slots].filter(([, slot]) => slot.view.state === 'failed').map(([id]) => id);
  }

  /** Forgets a failed environment (to make room). */
  remove(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    void this.release(slot);
    this.slots.delete(id);
    this.sessionWrites.delete(id);
    this.publish();
  }

  /** Takes an authenticated executor socket for `id` (see the file comment). Never throws. */
  adopt(id: string, socket: WebSocket): void {
    const slot = this.slots.get(id);
    if (this.closed || slot?.view.state === 'starting') {
      // A second socket during the first handshake: the executor re-dials after its backoff.
      socket.terminate();
      return;
    }
    if (slot !== undefined && slot.view.state !== 'failed' && slot.manager !== undefined) {
      slot.socket = socket;
      slot.manager.replaceAcceptedWebsocket(id, socket).catch((error: unknown) => this.log.warn({ environmentId: id }, `environment ${id}: replacement refused: ${messageOf(error)}`));
      return;
    }
    this.startGeneration(id, socket, (slot?.view.generation ?? 0) + 1);
  }

  /** The stdin a process taken back after a restart had (see {@link TakenBackStdin}), while it runs. */
  takenBackStdin(environmentId: string, processId: string): TakenBackStdin | undefined {
    return this.stdins.get(`${environmentId}\u0000${processId}`);
  }

  /** Terminates the current socket of `id` (the executor re-dials); `false` when there is none open. */
  dropSocket(id: string): boolean {
    const socket = this.slots.get(id)?.socket;
    if (socket === undefined || socket.readyState !== OPEN) return false;
    socket.terminate();
    return true;
  }

  /** Closes every manager (processes stay with their executors) and socket; completes `environments$`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = [...this.slots.values()];
    await Promise.all(slots.map((slot) => this.release(slot)));
    for (const slot of slots) slot.socket?.terminate();
    this.subject.complete();
    this.eventSubject.complete();
    this.settledSubject.complete();
  }

  private get scheduler(): SchedulerLike {
    return this.managerOptions.scheduler ?? asyncScheduler;
  }

  private now(): number {
    return this.scheduler.now();
  }

  private startGeneration(id: string, socket: WebSocket, generation: number): void {
    const previous = this.slots.get(id);
    if (previous !== undefined) void this.release(previous);
    const slot: Slot = { view: { id, generation, state: 'starting', info: undefined, environment: undefined, error: undefined, errorCode: undefined }, manager: undefined, socket, watching: undefined };
    this.slots.set(id, slot);
    this.log.info({ environmentId: id, generation, state: 'starting' }, `environment ${id} generation ${generation}: starting`);
    this.publish();
    this.eventSubject.next({ type: 'state', environmentId: id, generation, state: 'starting', errorCode: undefined });
    const sessionId = this.outputLogs === undefined || this.taken.has(id) ? undefined : this.sessions?.sessionOf(id);
    const made = sessionId === undefined || this.outputLogs === undefined ? this.fresh(id, socket) : this.takeBack(id, socket, sessionId, this.outputLogs);
    made.then(
      (manager) => this.started(slot, manager),
      (error: unknown) => {
        socket.terminate();
        this.update(slot, { state: 'failed', error: messageOf(error), errorCode: error instanceof ExecClientError ? error.code : 'HOST_ERROR' });
      },
    );
  }

  /**
   * A new session on the executor's socket. The first one for `id` since this host started, when the
   * host had no session of its executor to take back: the processes its logs found `unknown` are `lost`
   * (the executor's old session, if any, dies with them after its 80 s retention).
   */
  private async fresh(id: string, socket: WebSocket): Promise<EnvironmentManager> {
    const manager = await EnvironmentManager.fromAcceptedWebsocket(id, socket, { ...this.managerOptions, outputHistory: this.outputHistory(id) });
    const store = this.outputLogs;
    if (store !== undefined && !this.taken.has(id)) {
      this.taken.add(id);
      for (const meta of store.adoptable(id)) store.markLost({ environmentId: id, processId: meta.processId }, 'the host had no record of its executor\'s session to take it back');
      this.settledSubject.next(id);
    }
    return manager;
  }

  /**
   * Takes the executor's session back after a host restart (`EnvironmentManager.adoptAcceptedWebsocket`):
   * each process its logs found `unknown` is adopted from its log's last seq (its log reopened, taking
   * appends again), or marked `lost` with why (the executor no longer had the session or the process).
   * A failed attempt keeps the reopened logs for the executor's next socket.
   */
  private async takeBack(id: string, socket: WebSocket, sessionId: string, store: OutputLogStore): Promise<EnvironmentManager> {
    let logs = this.reopened.get(id);
    if (logs === undefined) {
      logs = new Map<string, OutputLog>();
      this.reopened.set(id, logs);
      for (const meta of store.adoptable(id)) {
        const key = { environmentId: id, processId: meta.processId };
        try {
          const log = await store.adopt(key);
          if (log !== undefined) logs.set(meta.processId, log);
        } catch (error: unknown) {
          store.markLost(key, `its output log could not be reopened: ${messageOf(error)}`);
        }
      }
    }
    const stdins = await readStdins(store, id, [...logs.keys()]);
    // Writes go on after the persisted counter of the process they go to (the feeder, or a tty itself).
    const writers = new Map([...stdins.values()].map((record) => [record.writerProcessId, record.nextWriteId]));
    const helpers = new Set([...stdins.values()].filter((record) => record.target === 'fifo').map((record) => record.writerProcessId));
    const records = [...logs].map(([processId, log]) => {
      const meta = store.meta({ environmentId: id, processId });
      return { processId, lastSeq: log.lastSeq, nextWriteId: writers.get(processId) ?? 1, argv: meta?.argv ?? [], tty: meta?.tty ?? false, unlisted: helpers.has(processId) };
    });
    const adopted = await EnvironmentManager.adoptAcceptedWebsocket(id, socket, { sessionId, processes: records }, { ...this.managerOptions, outputHistory: this.outputHistory(id, logs) });
    this.keepStdins(id, adopted.processes, stdins);
    this.resumeSizedTtys(adopted.manager, adopted.processes, stdins);
    this.taken.add(id);
    this.reopened.delete(id);
    for (const lost of adopted.lost) store.markLost({ environmentId: id, processId: lost.processId }, lost.reason);
    // Settled once every process is adopted or marked lost: its followers read on, or end with why.
    this.settledSubject.next(id);
    for (const lost of adopted.lost) await logs.get(lost.processId)?.seal();
    const how = adopted.resumed ? `session ${sessionId} taken back` : `session ${sessionId} is gone, a new one was made`;
    // Helpers (stdin feeders) are taken back with their process, and not counted.
    const count = adopted.processes.filter((process) => !helpers.has(process.processId)).length;
    const lostCount = adopted.lost.filter((lost) => !helpers.has(lost.processId)).length;
    this.log.info({ environmentId: id, resumed: adopted.resumed, adopted: count, lost: lostCount }, `environment ${id}: ${how}: ${count} process${count === 1 ? '' : 'es'} adopted, ${lostCount} lost`);
    for (const lost of adopted.lost) this.log.warn({ environmentId: id, processId: lost.processId }, `environment ${id}: process ${lost.processId} lost: ${lost.reason}`);
    return adopted.manager;
  }

  /** Makes each adopted sized tty resizable again, from the pty path its stdin record kept (its file is removed once it ends). */
  private resumeSizedTtys(manager: EnvironmentManager, processes: readonly ExecProcess[], stdins: ReadonlyMap<string, StdinRecord>): void {
    const backend = manager.defaultEnvironment()?.getExecBackend();
    for (const process of processes) {
      const ttyPath = stdins.get(process.processId)?.ttyPath;
      if (backend !== undefined && ttyPath !== undefined && ttyPath !== null) backend.resumeSizedTty(process, ttyPath);
    }
  }

  /**
   * Keeps the stdin of each adopted process that persisted one, for the operator API, until the process
   * ends; then its feeder, if still waiting, is stopped and released (whether or not the API wrote again).
   * The feeder of a process that was lost is stopped at once.
   */
  private keepStdins(id: string, processes: readonly ExecProcess[], stdins: ReadonlyMap<string, StdinRecord>): void {
    const byId = new Map(processes.map((process) => [process.processId, process]));
    for (const [processId, record] of stdins) {
      const process = byId.get(processId);
      const feeder = record.target === 'fifo' ? byId.get(record.writerProcessId) : undefined;
      if (process === undefined) {
        if (feeder !== undefined) stopHelper(feeder);
        continue;
      }
      const key = `${id}\u0000${processId}`;
      this.stdins.set(key, { process, record, feeder });
      process.state$.subscribe({
        complete: () => {
          if (this.stdins.get(key)?.process === process) this.stdins.delete(key);
          if (feeder !== undefined) stopHelper(feeder);
        },
      });
    }
  }

  /**
   * Where the processes of a new generation keep their output, passed down to each process through its
   * manager: the manager options' own factory when given; else a log on disk per process when the host
   * has a data dir (the logs of processes taken back after a restart continue); else in memory within
   * the host's bounds, with a budget per generation (what the manager would make itself).
   */
  private outputHistory(id: string, adopted?: ReadonlyMap<string, OutputLog>): HistoryFactory {
    return this.observeHistories(this.historyFactory(id, adopted));
  }

  /** {@link outputHistory}, before the host's observer wraps it. */
  private historyFactory(id: string, adopted?: ReadonlyMap<string, OutputLog>): HistoryFactory {
    if (this.managerOptions.outputHistory !== undefined) return this.managerOptions.outputHistory;
    if (this.outputLogs === undefined) return memoryHistories(this.managerOptions);
    const flow = (): ConnectionFlow | undefined => this.slots.get(id)?.view.environment?.flow;
    return diskHistories(this.outputLogs, id, { onLog: (log) => void pauseWhileBehind(log, flow, (line) => this.log.info({ environmentId: id }, `environment ${id}: ${line}`), this.pauseLog), ...(adopted === undefined ? {} : { adopted }) });
  }

  /** Records each new process's command line in its log's metadata (what `ls` shows after a restart). */
  private describeProcesses(id: string, environment: Environment, outputLogs: OutputLogStore): Subscription {
    let described: ReadonlySet<string> = new Set<string>();
    return environment.processes$.subscribe((list) => {
      for (const summary of list) {
        if (!described.has(summary.processId)) outputLogs.describe({ environmentId: id, processId: summary.processId }, { argv: summary.argv, tty: summary.tty });
      }
      described = new Set(list.map((summary) => summary.processId));
    });
  }

  private started(slot: Slot, manager: EnvironmentManager): void {
    const environment = manager.defaultEnvironment();
    if (this.closed || this.slots.get(slot.view.id) !== slot || environment === undefined) {
      void manager.close();
      return;
    }
    slot.manager = manager;
    this.update(slot, { environment });
    slot.watching = environment.connectionState$.subscribe((state) => this.onState(slot, environment, state));
    const { id, generation } = slot.view;
    slot.watching.add(environment.diagnostics$.subscribe((diagnostic) => this.eventSubject.next({ type: 'diagnostic', environmentId: id, generation, diagnostic })));
    if (this.outputLogs !== undefined) slot.watching.add(this.describeProcesses(id, environment, this.outputLogs));
  }

  private onState(slot: Slot, environment: Environment, state: ConnectionState): void {
    if (state.state === 'connected') {
      this.update(slot, { state: 'connected', error: undefined, errorCode: undefined });
      const sessionId = environment.client.sessionId;
      const written = sessionId === undefined ? undefined : this.sessions?.record(slot.view.id, sessionId);
      if (written !== undefined) this.sessionWrites.set(slot.view.id, written);
      if (slot.view.info === undefined) {
        environment.info().then(
          (info) => this.update(slot, { info }),
          () => undefined,
        );
      }
      return;
    }
    this.update(slot, 'error' in state ? { state: state.state, error: state.error.message, errorCode: state.error.code } : { state: state.state, error: undefined, errorCode: undefined });
    if (state.state === 'failed') {
      // The executor must re-dial to start the next generation: close whatever socket it still holds.
      slot.socket?.terminate();
      void this.release(slot);
    }
  }

  private update(slot: Slot, change: Partial<HostedEnvironment>): void {
    if (this.slots.get(slot.view.id) !== slot || this.closed) return;
    const before = slot.view;
    slot.view = { ...before, ...change };
    if (slot.view.state !== before.state) {
      const { id, generation, state, errorCode } = slot.view;
      const error = slot.view.error === undefined ? '' : `: ${slot.view.error}`;
      const fields = { environmentId: id, generation, state, ...(errorCode === undefined ? {} : { code: errorCode }) };
      if (state === 'failed') this.log.warn(fields, `environment ${id} generation ${generation}: ${state}${error}`);
      else this.log.info(fields, `environment ${id} generation ${generation}: ${state}${error}`);
      this.eventSubject.next({ type: 'state', environmentId: id, generation, state, errorCode });
    }
    this.publish();
  }

  private publish(): void {
    if (!this.closed) this.subject.next([...this.slots.values()].map((slot) => slot.view));
  }

  private async release(slot: Slot): Promise<void> {
    slot.watching?.unsubscribe();
    slot.watching = undefined;
    const manager = slot.manager;
    slot.manager = undefined;
    if (slot.socket !== undefined && slot.socket.readyState === OPEN && slot.view.state === 'failed') slot.socket.terminate();
    await manager?.close().catch(() => undefined);
  }
}

/** Terminates a helper process if it still runs, then releases it. Never rejects. */
function stopHelper(helper: ExecProcess): void {
  void (helper.state === 'running' ? helper.terminate() : Promise.resolve(false)).catch(() => false).then(() => helper.release());
}

/** The stdin records of `processIds` (those that persisted one), by process id. Unreadable ones are left out. */
async function readStdins(store: OutputLogStore, environmentId: string, processIds: readonly string[]): Promise<Map<string, StdinRecord>> {
  const found = new Map<string, StdinRecord>();
  for (const processId of processIds) {
    const record = await store.readStdin({ environmentId, processId }).catch(() => undefined);
    if (record !== undefined) found.set(processId, record);
  }
  return found;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
