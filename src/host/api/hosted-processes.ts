/**
 * The processes the operator API starts: host-generated UUIDs (the executor's process ids too), the
 * defaults a remote start needs, the stdin channel of each (kept in the state store, see
 * `./process-stdin`), and `Idempotency-Key`s so that a retried start returns the process the first one
 * started (see `./keyed-starts`).
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, lastValueFrom } from 'rxjs';
import type { Environment } from '../../environment/environment';
import type { ExecProcess } from '../../exec/exec-process';
import { FifoFeeder } from '../../exec/fifo-feeder';
import type { ProcessSummary } from '../../exec/process-table';
import type { LogStore } from '../../store/log-store';
import type { StateStore } from '../../store/state-store';
import type { ProcessResource, StartProcessRequest } from '../../wire/operator-api';
import type { StartFaultPoint } from '../fault-points';
import { crashNow } from '../fault-points';
import type { HostedEnvironments } from '../hosted-environments';
import type { RecordedKey, StartKey } from './keyed-starts';
import { KeyedStarts } from './keyed-starts';
import { current, listed } from './current';
import { ApiProblem } from './problem';
import type { ResourceExtras } from './process-resource';
import { toResource } from './process-resource';
import type { StdinPersistence, StdinTarget } from './process-stdin';
import { letGo, ProcessStdin } from './process-stdin';
import type { RemoteStart } from './remote-start';
import { remoteStartOf } from './remote-start';
import { StartsInFlight } from './starts-in-flight';
import type { ProcessTimes } from './process-times';
import { ProcessTimesBook } from './process-times';

/** A process the API knows, with what the library does not keep. */
export interface HostedProcess {
  readonly environmentId: string;
  readonly process: ExecProcess;
  readonly pipeStdin: boolean;
  readonly stdin: ProcessStdin | undefined;
  /** The name of the operator token that started it through the API; absent for the others. */
  readonly startedBy?: string;
}

/** What a start through the API resolves with: the process, and what its answer needs. */
export interface HostedStart {
  /** The process, with what the API keeps of it. */
  readonly hosted: HostedProcess;
  /** The argv it is listed with: the request's. */
  readonly argv: readonly string[];
  /** Whether it runs on a pty (sized or not). */
  readonly tty: boolean;
  /** `true` when an earlier start with the same `Idempotency-Key` made it: the answer is a replay. */
  readonly replayed: boolean;
}

/** What the API's processes keep, where, and what they wait for. */
export interface HostedProcessesOptions {
  /** Where keyed starts are recorded before they are sent and each process's stdin record is kept. */
  readonly state: StateStore;
  /** Where a process's times and starter are read (they survive a restart) and its starter noted. @default none */
  readonly logs?: Pick<LogStore, 'meta' | 'noteStartedBy'>;
  /**
   * The processes a restarted host took back, with their stdin (the API writes it again), whether an
   * environment is still awaited, when its executor's session is kept (a start waits for it), and the
   * epoch its writes carry. @default none: epoch 0, nothing awaited
   */
  readonly environments?: Pick<HostedEnvironments, 'takenBackStdin' | 'takeBackSettled' | 'sessionRecorded' | 'epochOf'>;
  /** A test-only fault point where a keyed start crashes the host (see `../fault-points`). */
  readonly fault?: StartFaultPoint;
  /** The clock of the processes' start and exit times. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * Processes started through the API, by id. What the API keeps of each (its stdin and FIFO helper) goes
 * with the process when it leaves its environment's list (released once ended, or evicted).
 */
export class HostedProcesses {
  private readonly extras = new Map<string, HostedProcess>();
  private readonly times: ProcessTimesBook;
  /** The starts sent and not yet answered here (see `./starts-in-flight`): the lists leave them out, a call that names one waits. */
  readonly inFlight = new StartsInFlight();
  private readonly keyed: KeyedStarts<HostedStart>;

  constructor(private readonly options: HostedProcessesOptions) {
    this.keyed = new KeyedStarts(options.state, (id) => this.epochOf(id));
    this.times = new ProcessTimesBook(options.scheduler ?? asyncScheduler);
  }

  /** Processes the API keeps its extras of (bookkeeping): the listed ones it started, at most. */
  get extrasKept(): number {
    return this.extras.size;
  }

  /**
   * Starts `request` on `environment`, or, for an `idempotencyKey` seen before with the same request,
   * resolves with the process that start made, `replayed` (422 `IDEMPOTENCY_KEY_REUSED` for another
   * request; see `./keyed-starts`). `startedBy`, the caller's token name, is shown in the process's
   * resource and kept in its metadata. Rejects with the start's typed errors.
   */
  start(environmentId: string, environment: Environment, request: StartProcessRequest, idempotency: StartKey | undefined, startedBy?: string): Promise<HostedStart> {
    if (idempotency === undefined) return this.startNow(environmentId, environment, request, undefined, startedBy);
    return this.keyed.start(environmentId, request, idempotency, {
      fresh: (recorded) => this.startNow(environmentId, environment, request, recorded, startedBy),
      recorded: (processId, state) => this.recordedStart(environmentId, environment, processId, state),
      replay: (first) => ({ ...first, replayed: true }),
    });
  }

  /**
   * Resolves once a keyed start recorded before a restart can be answered: when the store holds a start
   * with this key and its environment's executor is still expected back, once its session was taken back
   * or found gone (or the wait ran out); at once otherwise. Never rejects.
   */
  async settled(environmentId: string, idempotency: StartKey | undefined): Promise<void> {
    const environments = this.options.environments;
    if (idempotency === undefined || environments === undefined) return;
    if (!(await this.keyed.isRecorded(environmentId, idempotency))) return;
    await lastValueFrom(environments.takeBackSettled(environmentId), { defaultValue: undefined });
  }

  /** When a process this API started (and still lists) started and exited; undefined for others (see the log store's meta). */
  timesOf(processId: string): ProcessTimes | undefined {
    return this.times.get(processId);
  }

  /** The process `processId` of `environment` while it is listed there; `undefined` otherwise. */
  get(environmentId: string, environment: Environment, processId: string): HostedProcess | undefined {
    const process = environment.getProcess(processId);
    if (process === undefined) {
      this.forget(processId);
      return undefined;
    }
    const extra = this.extras.get(processId);
    if (extra !== undefined && extra.environmentId === environmentId && extra.process === process) return extra;
    return this.takeBack(environmentId, process) ?? { environmentId, process, pipeStdin: false, stdin: undefined };
  }

  /** A listed process as the API shows it. */
  async resource(environmentId: string, summary: ProcessSummary): Promise<ProcessResource> {
    const pipeStdin = this.extras.get(summary.processId)?.pipeStdin ?? this.options.environments?.takenBackStdin(environmentId, summary.processId)?.record.target === 'fifo';
    return toResource(environmentId, summary, pipeStdin, await this.timesFor(environmentId, summary.processId, summary));
  }

  /**
   * The answer to a start: the process it returned as the API shows it, read from the process itself
   * (no list snapshot). Rejects with 404 `PROCESS_NOT_FOUND` once it has left `environment`'s list.
   */
  async startedResource(environment: Environment, { hosted, argv, tty }: HostedStart): Promise<ProcessResource> {
    const { environmentId, process } = hosted;
    if (environment.getProcess(process.processId) !== process) throw new ApiProblem(404, 'PROCESS_NOT_FOUND', `no process ${process.processId} in environment ${environmentId}`);
    const summary = { processId: process.processId, argv, tty, state: process.state, exitCode: process.exitCode, error: process.failure };
    return toResource(environmentId, summary, hosted.pipeStdin, await this.timesFor(environmentId, process.processId));
  }

  /**
   * Forgets what the API kept of `environmentId`'s processes no longer listed: those of an earlier
   * generation of the environment (its processes leave with it, unlisted one by one); a process leaving
   * the list of its own environment already took its extras along.
   */
  prune(environmentId: string, listed: ReadonlySet<string>): void {
    for (const [id, extra] of this.extras) {
      if (extra.environmentId !== environmentId || listed.has(id)) continue;
      this.forget(id);
    }
  }

  /**
   * Writes the stdin records kept here again for the environments in `owned` (the shared store lost its
   * data), at their epochs. Resolves with how many; rejects with the store's error (the next round retries).
   */
  async rewriteStdins(owned: ReadonlyMap<string, number>): Promise<number> {
    const kept = [...this.extras.values()].filter((extra) => owned.has(extra.environmentId) && extra.stdin !== undefined);
    for (const extra of kept) await extra.stdin?.rewrite();
    return kept.length;
  }

  /** Its times: the log store's (they survive a restart), else the ones noted at its start here. */
  private async timesFor(environmentId: string, processId: string, listed?: Pick<ProcessSummary, 'startedAt' | 'exitedAt'>): Promise<ResourceExtras> {
    const meta = await this.options.logs?.meta({ environmentId, processId });
    const noted = this.times.get(processId);
    const extra = this.extras.get(processId);
    const startedBy = (extra?.environmentId === environmentId ? extra.startedBy : undefined) ?? meta?.startedBy ?? null;
    // The exit as this host saw it, while it tracks the process: the store records it when the event is
    // appended, which comes after the process's state changed (a tick later, at times): one source for
    // both the resource and `…/wait`. A process of before a restart has only the store's.
    const exitedAt = noted?.exitedAt ?? meta?.exitedAt ?? listed?.exitedAt ?? null;
    return { startedAt: meta?.startedAt ?? noted?.startedAt ?? listed?.startedAt ?? null, exitedAt, startedBy, lostReason: meta?.state === 'lost' ? meta.lostReason : null };
  }

  /**
   * The answer to a retry of a start the store recorded before a restart (its environment settled):
   * a replay of the process when its executor has it (taken back, listed); else, while its executor is not
   * attached, 503 `ENVIRONMENT_RECOVERING` (only its session tells whether the start happened); else 409
   * `START_UNKNOWN` for a start that was in flight (the executor never got it, or lost it), 404
   * `PROCESS_NOT_FOUND` for one that started and has left the list since. Never a second start.
   */
  private recordedStart(environmentId: string, environment: Environment, processId: string, state: 'sent' | 'started'): Promise<HostedStart> {
    const summary = listed(environment).find((s) => s.processId === processId);
    const hosted = summary === undefined ? undefined : this.get(environmentId, environment, processId);
    if (summary !== undefined && hosted !== undefined) return Promise.resolve({ hosted, argv: summary.argv, tty: summary.tty, replayed: true });
    if (state === 'started') {
      const why = `the process ${processId} this Idempotency-Key started is no longer listed in environment ${environmentId}`;
      return Promise.reject(new ApiProblem(404, 'PROCESS_NOT_FOUND', why));
    }
    // Its executor is not attached (its socket lost with the start's answer): only its session, taken back
    // here or on another replica, tells whether the start happened. Retry until then.
    if (current(environment.connectionState$, undefined)?.state !== 'connected') {
      const detail = `a start with this Idempotency-Key (process ${processId}) was in flight when environment ${environmentId}'s executor went; retry once it is back`;
      return Promise.reject(new ApiProblem(503, 'ENVIRONMENT_RECOVERING', detail, { 'retry-after': '1' }));
    }
    const why = `a start with this Idempotency-Key (process ${processId}) was in flight when the host stopped, and environment ${environmentId} has no such process`;
    return Promise.reject(new ApiProblem(409, 'START_UNKNOWN', `${why}: it did not start, or was lost; start it again with a new key`));
  }

  private async startNow(environmentId: string, environment: Environment, request: StartProcessRequest, recorded?: RecordedKey, startedBy?: string): Promise<HostedStart> {
    const remote = await remoteStartOf(environment, request);
    return this.inFlight.track(environmentId, remote.processId, () => this.sendStart(environmentId, environment, remote, recorded, startedBy));
  }

  private async sendStart(environmentId: string, environment: Environment, remote: RemoteStart, recorded?: RecordedKey, startedBy?: string): Promise<HostedStart> {
    const { processId, params, tty, start } = remote;
    // The executor's session id kept first: a host that crashes after the send takes the session back.
    await this.options.environments?.sessionRecorded(environmentId);
    if (recorded !== undefined) {
      this.crashAt('start:before-record');
      // Recorded before it is sent: a host that crashes from here on answers its retry (see recordedStart).
      await this.options.state.recordStart({ digest: recorded.digest, environmentId, processId, fingerprint: recorded.fingerprint }, this.epochOf(environmentId));
      this.crashAt('start:after-record');
    }
    // Its extras go with the process when it leaves the list (released once ended, or evicted).
    const { process, feeder, ttyPathFile } = await environment.getExecBackend().start(start, { onDelisted: () => this.forget(processId) });
    this.times.note(process);
    if (recorded !== undefined) {
      // Its metadata was kept before the start was sent (`OutputHistory.ready`): a restarted host
      // takes the process back, and the retry finds it there.
      this.crashAt('start:after-send');
      void this.options.state.markStarted(recorded.digest, this.epochOf(environmentId)).catch(() => undefined);
    }
    const persistence = this.persistence(environmentId, processId, ttyPathFile);
    const target: StdinTarget | undefined = tty ? { kind: 'pty' } : feeder === undefined ? undefined : { kind: 'fifo', feeder };
    const stdin = target === undefined ? undefined : new ProcessStdin(process, target, persistence);
    const hosted: HostedProcess = { environmentId, process, pipeStdin: feeder !== undefined, stdin, ...(startedBy === undefined ? {} : { startedBy }) };
    if (startedBy !== undefined) void this.options.logs?.noteStartedBy({ environmentId, processId }, startedBy);
    // The FIFO helper waits on its own stdin: stop it when the command ends.
    if (stdin !== undefined) hosted.process.state$.subscribe({ complete: () => void stdin.dispose(letGo(hosted.process)) });
    // Its stdin's record (writer, pty path) kept before the answer: a host restarted after it goes on writing and resizing.
    await stdin?.firstRecorded();
    // A process that ended and was evicted before its start resolved has left the list already.
    if (environment.getProcess(processId) === process) this.extras.set(processId, hosted);
    return { hosted, argv: params.argv, tty, replayed: false };
  }

  /**
   * The stdin of a process a restarted host took back (`HostedEnvironments.takenBackStdin`), made again
   * from its record and kept like a started one's; undefined when it had none (or lost its feeder).
   */
  private takeBack(environmentId: string, process: ExecProcess): HostedProcess | undefined {
    const taken = this.options.environments?.takenBackStdin(environmentId, process.processId);
    if (taken === undefined || taken.process !== process) return undefined;
    const { record, feeder } = taken;
    const target: StdinTarget | undefined = record.target === 'pty' ? { kind: 'pty' } : feeder === undefined ? undefined : { kind: 'fifo', feeder: new FifoFeeder(feeder) };
    if (target === undefined) return undefined;
    const stdin = new ProcessStdin(process, target, { ...this.persistence(environmentId, process.processId), restored: taken.record });
    const hosted: HostedProcess = { environmentId, process, pipeStdin: target.kind === 'fifo', stdin };
    process.state$.subscribe({ complete: () => void stdin.dispose(letGo(process)) });
    this.extras.set(process.processId, hosted);
    return hosted;
  }

  /** Where a process's stdin record goes: the state store, at its environment's epoch then; forgotten when it ends. */
  private persistence(environmentId: string, processId: string, ttyPath?: string): StdinPersistence {
    const { state } = this.options;
    const key = { environmentId, processId };
    return {
      persist: (record) => state.setStdin(key, record, this.epochOf(environmentId)),
      forget: () => state.forgetStdin(key, this.epochOf(environmentId)),
      ...(ttyPath === undefined ? {} : { ttyPath }),
    };
  }

  /** The epoch an environment's writes carry now (its current generation's claim). */
  private epochOf(environmentId: string): number {
    return this.options.environments?.epochOf(environmentId) ?? 0;
  }

  /** Crashes the host at `point` when that is its armed fault point (test only: see `../fault-points`). */
  private crashAt(point: StartFaultPoint): void {
    if (this.options.fault === point) crashNow();
  }

  /** Drops what the API kept of a process, stopping its FIFO helper if still running. */
  private forget(processId: string): void {
    this.times.forget(processId);
    const extra = this.extras.get(processId);
    if (extra === undefined) return;
    this.extras.delete(processId);
    void extra.stdin?.dispose(letGo(extra.process));
  }
}
