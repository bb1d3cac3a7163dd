/**
 * The environments a host serves, one slot per environment id. The first socket of an id (or the first
 * after its environment failed) starts a new generation (`./generation-begin`): a new session
 * (`EnvironmentManager.fromAcceptedWebsocket`) or the executor's session taken back (`./take-back`), and,
 * once the executor answered `initialize` on that socket, the environment claimed in the state store (a
 * new epoch, which every write for it carries). Later sockets of a live generation go to
 * `replaceAcceptedWebsocket`, but for an upgrade signed before the one the generation holds (a stale one,
 * refused before it is upgraded). Each generation's processes keep their output in the host's log store,
 * read through its port.
 */
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, BehaviorSubject, Subject } from 'rxjs';
import type WebSocket from 'ws';
import { ExecClientError, messageOf } from '../errors';
import { STALE_UPGRADE_WINDOW_MS } from '../store/state-store';
import type { EnvironmentManagerOptions } from '../environment/environment-manager-options';
import type { EnvironmentManager } from '../environment/environment-manager';
import type { HistoryFactory } from '../exec/output-history';
import type { ConnectionFlow } from '../rpc/connection-flow';
import { describeProcesses } from './generation-records';
import type { GenerationParts } from './generation-begin';
import { beginGeneration } from './generation-begin';
import type { DiskPauseCount } from './disk-backpressure';
import type { SlotTable } from './environment-slot';
import { EnvironmentSlot } from './environment-slot';
import { holdWhileBehind } from './disk-backpressure';
import type { HostedEnvironment, HostEvent } from './hosted-environment';
import type { HostLogger, HostLogOption } from './host-logger';
import { hostLoggerOf } from './host-logger';
import type { TakenBackStdin } from './take-back';
import { TakeBacks } from './take-back';
import { TakeBackWait } from './take-back-wait';
import type { EnvironmentStores } from './environment-stores';

export type { EnvironmentStores, SessionRecords } from './environment-stores';

/**
 * How long after its start a restarted host expects an executor whose session it remembers to come
 * back: the executor keeps a detached session 80 s, plus a margin for its backoff and its handshake.
 */
export const TAKE_BACK_WAIT_MS = 90_000;

/** Owns every manager and socket it adopts; `close()` releases them all. */
export class HostedEnvironments {
  private readonly slots = new Map<string, EnvironmentSlot>();
  private readonly subject = new BehaviorSubject<readonly HostedEnvironment[]>([]);
  private closed = false;

  /** Every environment, current generation only, in first-seen order. Replays the current list; completes on close. */
  readonly environments$ = this.subject.asObservable();

  private readonly eventSubject = new Subject<HostEvent>();

  /** Times an executor was paused because a process's output log could not keep up with it. */
  readonly diskPauses: DiskPauseCount = { pauses: 0 };
  /** The latest write of each environment's session record (see {@link sessionRecorded}). */
  private readonly sessionWrites = new Map<string, Promise<void>>();
  private readonly takeBacks: TakeBacks;
  /** Holds each environment's connection paused while one of its logs is behind. */
  private readonly pausing: Subscription;

  /** Each {@link HostEvent} as it happens (hot: no replay). Completes on close; never errors. */
  readonly events$ = this.eventSubject.asObservable();

  /** How long the executors whose sessions the host remembered are waited for. */
  private readonly waits: TakeBackWait;
  /** Where this table writes what happens. */
  private readonly log: HostLogger;
  /** What a new generation begins with (see `./generation-begin`). */
  private readonly generationParts: GenerationParts;

  constructor(
    private readonly managerOptions: EnvironmentManagerOptions,
    logTo: HostLogOption,
    /** Where the processes' output goes, where environments are claimed, and where sessions are remembered. */
    private readonly stores: EnvironmentStores,
    /** How long after the start an executor whose session the host remembers is expected back. @default TAKE_BACK_WAIT_MS */
    takeBackWaitMs: number = TAKE_BACK_WAIT_MS,
    /** Wraps each generation's history factory (the host's metrics count what its processes send). @default none */
    private readonly observeHistories: (factory: HistoryFactory) => HistoryFactory = (factory) => factory,
  ) {
    this.log = hostLoggerOf(logTo);
    this.waits = new TakeBackWait((id) => stores.sessions.rememberedAt(id), takeBackWaitMs, this.scheduler);
    const outputHistory = (id: string, epoch: number): HistoryFactory => this.outputHistory(id, epoch);
    this.takeBacks = new TakeBacks({ logs: stores.logs, state: stores.state, log: this.log, managerOptions, historiesOf: outputHistory });
    const holds = (slot: EnvironmentSlot): boolean => !this.closed && this.slots.get(slot.view.id) === slot;
    this.generationParts = { stores, managerOptions, log: this.log, takeBacks: this.takeBacks, waits: this.waits, outputHistory, holds };
    const flow = (id: string): ConnectionFlow | undefined => this.slots.get(id)?.view.environment?.flow;
    const say = (id: string, line: string): void => this.log.info({ environmentId: id }, `environment ${id}: ${line}`);
    this.pausing = holdWhileBehind(stores.logs.pressure$, flow, say, { count: this.diskPauses, now: () => this.now() });
  }

  /**
   * Whether the host still expects the executor of `id` back to take its session (and the processes its
   * logs found `unknown`) back: it remembered the session at its start, the environment's first session
   * since this start is not installed yet (neither taken back nor found gone), and `takeBackWaitMs` since
   * the start has not run out.
   */
  awaitingTakeBack(id: string): boolean {
    return this.waits.awaiting(id);
  }

  /**
   * Resolves once the session `id`'s executor has now is kept (at once before its first connection); the
   * operator API awaits it before a start, so that a host restarted after the start knows the session to
   * take the process back from. Never rejects (a failed write is logged).
   */
  sessionRecorded(id: string): Promise<void> {
    return this.sessionWrites.get(id) ?? Promise.resolve();
  }

  /** The epoch the current generation of `id` claimed it at (0 when none did): what the API's writes for it carry. */
  epochOf(id: string): number {
    return this.slots.get(id)?.epoch ?? 0;
  }

  /**
   * Emits once and completes when `id` is no longer awaited (see {@link awaitingTakeBack}): at once when it
   * is not; else once its executor's session was taken back (its processes adopted or marked `lost`) or
   * found gone (they are `lost`), once the wait runs out, or when the host closes. Cold; unsubscribing
   * stops the wait's timer.
   */
  takeBackSettled(id: string): Observable<void> {
    return this.waits.settled$(id);
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
    void slot.release();
    this.slots.delete(id);
    this.sessionWrites.delete(id);
    this.publish();
  }

  /**
   * Takes an authenticated executor socket for `id` (see the file comment), whose upgrade the executor
   * signed at `signedAt` (epoch ms; undefined when unknown). Never throws.
   */
  adopt(id: string, socket: WebSocket, signedAt?: number): void {
    const slot = this.slots.get(id);
    if (this.closed || slot?.view.state === 'starting') {
      // A second socket during the first handshake: the executor re-dials after its backoff.
      socket.terminate();
      return;
    }
    if (slot !== undefined && slot.view.state !== 'failed' && slot.manager !== undefined) {
      slot.socket = socket;
      slot.signedAt = signedAt ?? slot.signedAt;
      const refused = (error: unknown): void => this.log.warn({ environmentId: id }, `environment ${id}: replacement refused: ${messageOf(error)}`);
      slot.manager.replaceAcceptedWebsocket(id, socket).catch(refused);
      return;
    }
    this.startGeneration(id, socket, (slot?.view.generation ?? 0) + 1, signedAt);
  }

  /**
   * Whether an upgrade of `id` signed at `signedAt` is older than the socket its live generation here
   * holds (within `STALE_UPGRADE_WINDOW_MS`): one the executor gave up on, handled late. The host answers
   * it 503 before it upgrades, so it never replaces the live socket.
   */
  isStaleUpgrade(id: string, signedAt: number): boolean {
    const slot = this.slots.get(id);
    const held = slot?.signedAt;
    if (slot === undefined || slot.view.state === 'failed' || held === undefined) return false;
    return signedAt < held && held - signedAt <= STALE_UPGRADE_WINDOW_MS;
  }

  /** Processes take-backs left neither adopted nor lost (an invariant's violations; see `TakeBacks.unaccounted`). */
  get unaccountedTakeBacks(): number {
    return this.takeBacks.unaccounted;
  }

  /** The stdin a process taken back after a restart had (see {@link TakenBackStdin}), while it runs. */
  takenBackStdin(environmentId: string, processId: string): TakenBackStdin | undefined {
    return this.takeBacks.stdinOf(environmentId, processId);
  }

  /**
   * Lets go of environment `id` (another replica owns it now, or this one drains): terminates its socket
   * and closes its manager without a word to the executor (its processes stay; the replica it re-dials
   * takes them back), and forgets the slot. Whether there was one.
   */
  fence(id: string, why = 'another replica owns it now'): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.slots.delete(id);
    this.sessionWrites.delete(id);
    slot.socket?.terminate();
    void slot.release();
    const fields = { environmentId: id, generation: slot.view.generation, epoch: slot.epoch };
    this.log.warn(fields, `environment ${id}: let go at epoch ${slot.epoch} (${why}): its socket and state here are dropped`);
    this.publish();
    return true;
  }

  /** When the executor signed the upgrade of the socket `id`'s current generation holds (epoch ms), when known. */
  signedAtOf(id: string): number | undefined {
    return this.slots.get(id)?.signedAt;
  }

  /** The executor session of `id`'s current generation, once connected. */
  sessionOf(id: string): string | undefined {
    return this.slots.get(id)?.view.environment?.client.sessionId;
  }

  /** Terminates the current socket of `id` (the executor re-dials); `false` when there is none open. */
  dropSocket(id: string): boolean {
    return this.slots.get(id)?.dropSocket() ?? false;
  }

  /** Closes every manager (processes stay with their executors) and socket; completes `environments$`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pausing.unsubscribe();
    const slots = [...this.slots.values()];
    await Promise.all(slots.map((slot) => slot.release()));
    for (const slot of slots) slot.socket?.terminate();
    this.subject.complete();
    this.eventSubject.complete();
    this.waits.close();
  }

  private get scheduler(): SchedulerLike {
    return this.managerOptions.scheduler ?? asyncScheduler;
  }

  private now(): number {
    return this.scheduler.now();
  }

  private startGeneration(id: string, socket: WebSocket, generation: number, signedAt: number | undefined): void {
    void this.slots.get(id)?.release();
    const table: SlotTable = {
      holds: (held) => !this.closed && this.slots.get(id) === held,
      log: this.log,
      emit: (event) => this.eventSubject.next(event),
      publish: () => this.publish(),
      connected: (slot, sessionId) => this.sessionWrites.set(id, this.stores.sessions.record(id, sessionId, slot.epoch)),
    };
    const slot = new EnvironmentSlot(id, generation, socket, table);
    slot.signedAt = signedAt;
    this.slots.set(id, slot);
    this.log.info({ environmentId: id, generation, state: 'starting' }, `environment ${id} generation ${generation}: starting`);
    this.publish();
    this.eventSubject.next({ type: 'state', environmentId: id, generation, state: 'starting', errorCode: undefined });
    beginGeneration(this.generationParts, id, socket, slot).then(
      (manager) => this.started(slot, manager),
      (error: unknown) => {
        socket.terminate();
        slot.update({ state: 'failed', error: messageOf(error), errorCode: error instanceof ExecClientError ? error.code : 'HOST_ERROR' });
      },
    );
  }

  /**
   * Where the processes of a generation keep their output, written at `epoch`: the log store's history
   * factory, wrapped by the host's observer (its metrics).
   */
  private outputHistory(id: string, epoch: number): HistoryFactory {
    return this.observeHistories(this.stores.logs.histories(id, { epoch, writer: this.stores.owner }));
  }

  private started(slot: EnvironmentSlot, manager: EnvironmentManager): void {
    const environment = manager.defaultEnvironment();
    if (this.closed || this.slots.get(slot.view.id) !== slot || environment === undefined) {
      void manager.close();
      return;
    }
    slot.watch(manager, environment, describeProcesses(this.stores.logs, slot.view.id, environment));
  }

  private publish(): void {
    if (!this.closed) this.subject.next([...this.slots.values()].map((slot) => slot.view));
  }
}

