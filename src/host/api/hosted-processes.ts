/**
 * The processes the operator API starts: host-generated UUIDs (the executor's process ids too), the
 * defaults a remote start needs, the stdin channel of each, and `Idempotency-Key`s so that a retried
 * start returns the process the first one started.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, lastValueFrom } from 'rxjs';
import type { Environment } from '../../environment/environment';
import type { StartParams } from '../../exec/exec-backend';
import type { ExecProcess } from '../../exec/exec-process';
import { FifoFeeder } from '../../exec/fifo-feeder';
import { NotFoundError } from '../../errors';
import type { ProcessSummary } from '../../exec/process-table';
import type { ProcessResource, StartProcessRequest } from '../../wire/operator-api';
import type { StartFaultPoint } from '../fault-points';
import { crashNow } from '../fault-points';
import type { HostedEnvironments } from '../hosted-environments';
import type { OutputLogStore } from '../log/output-log-store';
import type { StartRecords } from '../state/start-records';
import { startDigestOf } from '../state/start-records';
import { ApiProblem } from './problem';
import type { StdinPersistence, StdinTarget } from './process-stdin';
import { ProcessStdin } from './process-stdin';
import { isoOf } from './process-waits';

/** How many `Idempotency-Key`s the host remembers (all tokens together). */
export const REMEMBERED_STARTS = 4096;

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

/** Where a keyed start is recorded (a host with a data dir). */
interface PersistedStart {
  readonly records: StartRecords;
  readonly digest: string;
  readonly fingerprint: string;
}

/** The current value of a replaying list. */
function current<T>(source$: Observable<readonly T[]>): readonly T[] {
  let value: readonly T[] = [];
  source$.subscribe((v) => (value = v)).unsubscribe();
  return value;
}

interface RememberedStart {
  readonly fingerprint: string;
  readonly started: Promise<HostedStart>;
}

/** Where the stdin of the API's processes and its keyed starts are kept across a host restart (a host with a data dir). */
export interface HostedProcessesOptions {
  /** Where each process's stdin record goes (`stdin.json` next to its output log), and whose metadata a recorded start waits for. */
  readonly outputLogs?: Pick<OutputLogStore, 'writeStdin'> & Partial<Pick<OutputLogStore, 'meta' | 'noteStartedBy'>>;
  /**
   * The processes a restarted host took back, with their stdin (the API writes it again), whether an
   * environment is still awaited, and when its executor's session is on the disk (a start waits for it).
   */
  readonly environments?: Pick<HostedEnvironments, 'takenBackStdin' | 'takeBackSettled' | 'sessionRecorded'>;
  /** Where keyed starts are recorded before they are sent (`starts/` in the data dir); in memory only without. */
  readonly starts?: StartRecords;
  /** A test-only fault point where a keyed start crashes the host (see `../fault-points`). */
  readonly fault?: StartFaultPoint;
  /** The clock of the processes' start and exit times. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/** When a process the API started started and exited, ms since the epoch (on the host's clock). */
export interface ProcessTimes {
  readonly startedAt: number;
  /** When the host saw its exit; null while it runs. */
  readonly exitedAt: number | null;
}

/** The environment a process inherits: the executor's core set (PATH, HOME ...), the request's on top. */
const CORE_ENV: NonNullable<StartParams['envPolicy']> = { inherit: 'core', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] };

/**
 * Processes started through the API, by id. What the API keeps of each (its stdin and FIFO helper) goes
 * with the process when it leaves its environment's list (released once ended, or evicted).
 */
export class HostedProcesses {
  private readonly extras = new Map<string, HostedProcess>();
  private readonly starts = new Map<string, RememberedStart>();
  private readonly times = new Map<string, ProcessTimes>();

  constructor(private readonly options: HostedProcessesOptions = {}) {}

  /** Processes the API keeps its extras of (bookkeeping): the listed ones it started, at most. */
  get extrasKept(): number {
    return this.extras.size;
  }

  /**
   * Starts `request` on `environment`, or, for an `idempotencyKey` seen before with the same request,
   * resolves with the process that start made, `replayed` (422 `IDEMPOTENCY_KEY_REUSED` for another
   * request). Keys are scoped to the token's name (`tokenId`) and the environment. `startedBy`, the
   * caller's token name, is shown in the process's resource and kept in its metadata. Rejects with the start's typed errors.
   */
  start(environmentId: string, environment: Environment, request: StartProcessRequest, idempotency: { readonly tokenId: string; readonly key: string } | undefined, startedBy?: string): Promise<HostedStart> {
    if (idempotency === undefined) return this.startNow(environmentId, environment, request, undefined, startedBy);
    const scope = scopeOf(idempotency.tokenId, environmentId, idempotency.key);
    const fingerprint = startFingerprintOf(request);
    const seen = this.starts.get(scope);
    if (seen !== undefined) {
      if (seen.fingerprint !== fingerprint) return Promise.reject(new ApiProblem(422, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another start'));
      return seen.started.then((first) => ({ ...first, replayed: true }));
    }
    const digest = startDigestOf(idempotency.tokenId, environmentId, idempotency.key);
    const records = this.options.starts;
    const recorded = records?.get(digest);
    if (recorded !== undefined && recorded.environmentId === environmentId) {
      if (recorded.fingerprint !== fingerprint) return Promise.reject(new ApiProblem(422, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another start'));
      return this.recordedStart(environmentId, environment, recorded.processId, recorded.state);
    }
    const persist = records === undefined ? undefined : { records, digest, fingerprint };
    const started = this.startNow(environmentId, environment, request, persist, startedBy);
    this.starts.set(scope, { fingerprint, started });
    // A failed start may be retried with the same key: forget it.
    started.catch(() => {
      this.starts.delete(scope);
      void records?.forget(digest).catch(() => undefined);
    });
    if (this.starts.size > REMEMBERED_STARTS) {
      const oldest = this.starts.keys().next().value;
      if (oldest !== undefined) this.starts.delete(oldest);
    }
    return started;
  }

  /**
   * Resolves once a keyed start recorded before a restart can be answered: when the data dir holds a
   * start with this key and its environment's executor is still expected back, once its session was
   * taken back or found gone (or the wait ran out); at once otherwise. Never rejects.
   */
  async settled(environmentId: string, idempotency: { readonly tokenId: string; readonly key: string } | undefined): Promise<void> {
    const environments = this.options.environments;
    if (idempotency === undefined || environments === undefined) return;
    if (this.options.starts?.get(startDigestOf(idempotency.tokenId, environmentId, idempotency.key)) === undefined) return;
    await lastValueFrom(environments.takeBackSettled(environmentId), { defaultValue: undefined });
  }

  /** When a process this API started (and still lists) started and exited; undefined for others (see the output log's meta). */
  timesOf(processId: string): ProcessTimes | undefined {
    return this.times.get(processId);
  }

  /** Its times: the output log's (a host with a data dir: they survive a restart), else the ones noted at its start here. */
  private timesFor(environmentId: string, processId: string, listed?: Pick<ProcessSummary, 'startedAt' | 'exitedAt'>): ResourceExtras {
    const meta = this.options.outputLogs?.meta?.({ environmentId, processId });
    const noted = this.times.get(processId);
    const extra = this.extras.get(processId);
    const startedBy = (extra?.environmentId === environmentId ? extra.startedBy : undefined) ?? meta?.startedBy ?? null;
    return { startedAt: meta?.startedAt ?? noted?.startedAt ?? listed?.startedAt ?? null, exitedAt: meta?.exitedAt ?? noted?.exitedAt ?? listed?.exitedAt ?? null, startedBy };
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
  resource(environmentId: string, summary: ProcessSummary): ProcessResource {
    const pipeStdin = this.extras.get(summary.processId)?.pipeStdin ?? this.options.environments?.takenBackStdin(environmentId, summary.processId)?.record.target === 'fifo';
    return toResource(environmentId, summary, pipeStdin, this.timesFor(environmentId, summary.processId, summary));
  }

  /**
   * The answer to a start: the process it returned as the API shows it, read from the process itself
   * (no list snapshot). Throws 404 `PROCESS_NOT_FOUND` once it has left `environment`'s list.
   */
  startedResource(environment: Environment, { hosted, argv, tty }: HostedStart): ProcessResource {
    const { environmentId, process } = hosted;
    if (environment.getProcess(process.processId) !== process) throw new ApiProblem(404, 'PROCESS_NOT_FOUND', `no process ${process.processId} in environment ${environmentId}`);
    return toResource(environmentId, { processId: process.processId, argv, tty, state: process.state, exitCode: process.exitCode, error: process.failure }, hosted.pipeStdin, this.timesFor(environmentId, process.processId));
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
   * The answer to a retry of a start the data dir recorded before a restart (its environment settled):
   * a replay of the process when its executor has it (taken back, listed); else 409 `START_UNKNOWN` for
   * a start that was in flight (the executor never got it, or lost it), 404 `PROCESS_NOT_FOUND` for one
   * that started and has left the list since. Never a second start.
   */
  private recordedStart(environmentId: string, environment: Environment, processId: string, state: 'sent' | 'started'): Promise<HostedStart> {
    const summary = current(environment.processes$).find((s) => s.processId === processId);
    const hosted = summary === undefined ? undefined : this.get(environmentId, environment, processId);
    if (summary !== undefined && hosted !== undefined) return Promise.resolve({ hosted, argv: summary.argv, tty: summary.tty, replayed: true });
    if (state === 'started') return Promise.reject(new ApiProblem(404, 'PROCESS_NOT_FOUND', `the process ${processId} this Idempotency-Key started is no longer listed in environment ${environmentId}`));
    return Promise.reject(
      new ApiProblem(409, 'START_UNKNOWN', `a start with this Idempotency-Key (process ${processId}) was in flight when the host stopped, and environment ${environmentId} has no such process: it did not start, or was lost; start it again with a new key`),
    );
  }

  private async startNow(environmentId: string, environment: Environment, request: StartProcessRequest, persist?: PersistedStart, startedBy?: string): Promise<HostedStart> {
    const info = await environment.info();
    const size = typeof request.tty === 'object' ? { rows: request.tty.rows, cols: request.tty.cols } : undefined;
    const tty = request.tty === true || size !== undefined;
    const processId = randomUUID();
    const params: StartParams = {
      processId,
      argv: [...request.argv],
      cwd: request.cwd ?? info.userHomeDir ?? info.cwd ?? 'file:///',
      env: { ...(tty ? { TERM: 'xterm-256color' } : {}), ...request.env },
      envPolicy: CORE_ENV,
    };
    // The executor runs a tty command in its own directory when the cwd asked for is missing (it
    // fails any other start): check it, so every kind of start refuses a missing cwd alike.
    if (tty && request.cwd !== undefined) await requireDirectory(environment, request.cwd);
    // A size goes through the sizing wrapper (docs: README, --tty); the start still succeeds unsized where
    // the executor cannot size a pty. `pipeStdin` is the FIFO, which the start ignores with a tty (written
    // to directly) and cannot make on a Windows executor: no feeder, the resource says `pipeStdin: false`.
    const fifo = request.pipeStdin === true ? { stdin: 'fifo' as const } : {};
    // The executor's session id on the disk first: a host that crashes after the send takes the session back.
    await this.options.environments?.sessionRecorded(environmentId);
    if (persist !== undefined) {
      this.crashAt('start:before-record');
      // Recorded before it is sent: a host that crashes from here on answers its retry (see recordedStart).
      await persist.records.record({ digest: persist.digest, environmentId, processId, fingerprint: persist.fingerprint });
      this.crashAt('start:after-record');
    }
    // Its extras go with the process when it leaves the list (released once ended, or evicted).
    const { process, feeder, ttyPathFile } = await environment.getExecBackend().start({ ...params, tty: size ?? tty, ...fifo }, { onDelisted: () => this.forget(processId) });
    this.recordTimes(process);
    if (persist !== undefined) {
      // Its metadata was on the disk before the start was sent (`OutputHistory.ready`): a restarted host
      // takes the process back, and the retry finds it there.
      this.crashAt('start:after-send');
      void persist.records.markStarted(persist.digest).catch(() => undefined);
    }
    const persistence = this.persistence(environmentId, processId, ttyPathFile);
    const stdin = tty ? new ProcessStdin(process, { kind: 'pty' }, persistence) : feeder === undefined ? undefined : new ProcessStdin(process, { kind: 'fifo', feeder }, persistence);
    const hosted: HostedProcess = { environmentId, process, pipeStdin: feeder !== undefined, stdin, ...(startedBy === undefined ? {} : { startedBy }) };
    if (startedBy !== undefined) this.options.outputLogs?.noteStartedBy?.({ environmentId, processId }, startedBy);
    // The FIFO helper waits on its own stdin: stop it when the command ends.
    if (stdin !== undefined) hosted.process.state$.subscribe({ complete: () => void stdin.dispose() });
    // Its stdin's record (writer, pty path) on the disk before the answer: a host restarted after it goes on writing and resizing.
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
    const target: StdinTarget | undefined = taken.record.target === 'pty' ? { kind: 'pty' } : taken.feeder === undefined ? undefined : { kind: 'fifo', feeder: new FifoFeeder(taken.feeder) };
    if (target === undefined) return undefined;
    const persistence = this.persistence(environmentId, process.processId);
    const stdin = new ProcessStdin(process, target, persistence === undefined ? undefined : { ...persistence, restored: taken.record });
    const hosted: HostedProcess = { environmentId, process, pipeStdin: target.kind === 'fifo', stdin };
    process.state$.subscribe({ complete: () => void stdin.dispose() });
    this.extras.set(process.processId, hosted);
    return hosted;
  }

  /** Where a process's stdin record goes; none without a data dir. */
  private persistence(environmentId: string, processId: string, ttyPath?: string): StdinPersistence | undefined {
    const store = this.options.outputLogs;
    if (store === undefined) return undefined;
    return { persist: (record) => store.writeStdin({ environmentId, processId }, record), ...(ttyPath === undefined ? {} : { ttyPath }) };
  }

  /** Crashes the host at `point` when that is its armed fault point (test only: see `../fault-points`). */
  private crashAt(point: StartFaultPoint): void {
    if (this.options.fault === point) crashNow();
  }

  /** Notes when `process` started (now) and, once it has an exit code, when it exited; forgotten with its extras. */
  private recordTimes(process: ExecProcess): void {
    const now = (): number => (this.options.scheduler ?? asyncScheduler).now();
    const { processId } = process;
    this.times.set(processId, { startedAt: now(), exitedAt: null });
    const subscription = process.state$.subscribe(() => {
      const times = this.times.get(processId);
      if (times === undefined || times.exitedAt !== null || process.exitCode === undefined) return;
      this.times.set(processId, { ...times, exitedAt: now() });
    });
    if (process.exitCode !== undefined) subscription.unsubscribe();
  }

  /** Drops what the API kept of a process, stopping its FIFO helper if still running. */
  private forget(processId: string): void {
    this.times.delete(processId);
    const extra = this.extras.get(processId);
    if (extra === undefined) return;
    this.extras.delete(processId);
    void extra.stdin?.dispose();
  }
}

/** A process as the API shows it. */
/** What a resource shows besides the summary: its times and who started it. */
interface ResourceExtras {
  readonly startedAt: number | null;
  readonly exitedAt: number | null;
  readonly startedBy: string | null;
}

const toResource = (environmentId: string, summary: Omit<ProcessSummary, 'startedAt' | 'exitedAt'>, pipeStdin: boolean, times: ResourceExtras): ProcessResource => ({
  id: summary.processId,
  environmentId,
  argv: [...summary.argv],
  tty: summary.tty,
  pipeStdin,
  state: summary.state,
  exitCode: summary.exitCode ?? null,
  error: summary.error === undefined ? null : { code: summary.error.code, message: summary.error.message },
  startedAt: isoOf(times.startedAt),
  exitedAt: isoOf(times.exitedAt),
  startedBy: times.startedBy,
});

const scopeOf = (tokenId: string, environmentId: string, key: string): string => `${tokenId}\u0000${environmentId}\u0000${key}`;

/** Throws 422 `SPAWN_FAILED` unless `cwd` is a directory on the executor. */
async function requireDirectory(environment: Environment, cwd: string): Promise<void> {
  const metadata = await environment
    .getFilesystem()
    .getMetadata(cwd)
    .catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
  if (metadata === undefined || !metadata.isDirectory) throw new ApiProblem(422, 'SPAWN_FAILED', `cannot start in ${cwd}: no such directory on the executor`);
}

/** A digest of a start request (stable JSON: sorted keys), to tell a retried start from another request with the same key. */
export const startFingerprintOf = (request: StartProcessRequest): string => createHash('sha256').update(canonical(request)).digest('base64');

/** The request as stable JSON (sorted keys), for comparing a retried start with the first. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
