/**
 * The state port over a host's data dir (docs/architecture.md, "The store"): the files of `./state-files`
 * (the port bound, the made token's digest, each environment's session, owner and epoch, its latest
 * registration), the keyed starts (`./start-records`) and the stdin records (`./stdin-records`). Never a
 * secret: no token (only its digest), no secret key, no stdin byte. Each file is replaced whole (temp
 * file, sync, rename), so a crash leaves the old one or the new one; a damaged file is reported and read
 * as absent. The data dir is locked (`host.lock`, see `./host-lock`) from `open` to `close`: one host
 * process owns it, so what it read at open and wrote since is the whole truth, and reads are answered from
 * memory.
 */
import { join } from 'node:path';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { ClosedError } from '../../errors';
import type { ProcessKey } from '../process-meta';
import type { BoundPort, ClaimOptions, EnvironmentOwner, EnvironmentSession, NewStartRecord, PersistedEnvironment } from '../state-store';
import type { PersistedRegistration, StartRecord, StateStore } from '../state-store';
import { checkClaim, checkEpoch, claimedOwner, RECORDED_STARTS, sortedById } from '../state-store';
import type { StdinRecord } from '../stdin-record';
import { FileQueue } from './file-queue';
import { HostLock } from './host-lock';
import type { LogFs } from './log/log-fs';
import { nodeLogFs, writeAtomically } from './log/log-fs';
import { StartRecords } from './start-records';
import type { LoadedState } from './state-files';
import { ENVIRONMENTS_DIR, fileOf, HOST_FILE, loadState, REGISTRATIONS_DIR } from './state-files';
import { StdinFiles } from './stdin-records';

/** Options of {@link DiskStateStore.open}. */
export interface HostStateOptions {
  /** Where a damaged file is reported (one line each, no path). @default none */
  readonly log?: (line: string) => void;
  /** The clock of `updatedAt` and `recordedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How many keyed starts are kept. @default RECORDED_STARTS (4096) */
  readonly maxStarts?: number;
  /** @internal The file system (specs make it fail). @default node:fs */
  readonly fs?: LogFs;
}


/**
 * A host's durable state in its data dir (see the module's doc), exported as `HostState`. Made by
 * {@link DiskStateStore.open}; each change is on the disk when its promise resolves (changes to one file
 * in the order they were made). The owner calls `close()` last, after the host's last flush.
 */
export class DiskStateStore implements StateStore, BoundPort {
  private closed = false;

  private constructor(
    private readonly queue: FileQueue,
    private readonly dataDir: string,
    private readonly lock: HostLock,
    private readonly fs: LogFs,
    private readonly scheduler: SchedulerLike,
    private readonly state: LoadedState,
    private readonly starts: StartRecords,
    private readonly stdins: StdinFiles,
  ) {}

  /**
   * Locks `dataDir` (made if missing) and reads what it holds. Rejects with `DataDirInUseError` when a
   * live host holds its lock (a dead host's lock is taken over), or with the file system's error.
   */
  static async open(dataDir: string, options: HostStateOptions = {}): Promise<DiskStateStore> {
    const fs = options.fs ?? nodeLogFs;
    const scheduler = options.scheduler ?? asyncScheduler;
    await fs.mkdir(join(dataDir, ENVIRONMENTS_DIR));
    await fs.mkdir(join(dataDir, REGISTRATIONS_DIR));
    const lock = await HostLock.take(dataDir);
    try {
      const state = await loadState(fs, dataDir, options.log ?? (() => undefined));
      const starts = await StartRecords.open(dataDir, { fs, scheduler, maxRecords: options.maxStarts ?? RECORDED_STARTS });
      const queue = new FileQueue();
      const stdins = new StdinFiles(dataDir, fs, queue);
      await stdins.open();
      return new DiskStateStore(queue, dataDir, lock, fs, scheduler, state, starts, stdins);
    } catch (error: unknown) {
      await lock.release();
      throw error;
    }
  }

  /** The TCP port the host bound last, if any (this process's own: see `BoundPort`). */
  get port(): number | undefined {
    return this.state.port;
  }

  /** Records the port the host bound. */
  setPort(port: number): Promise<void> {
    return this.open(() => {
      this.state.port = port;
      return this.writeHostFile();
    });
  }

  madeTokenDigest(): Promise<string | undefined> {
    return this.read(() => this.state.madeTokenDigest);
  }

  setMadeTokenDigest(digest: string): Promise<void> {
    return this.open(() => {
      this.state.madeTokenDigest = digest;
      return this.writeHostFile();
    });
  }

  registrations(): Promise<readonly PersistedRegistration[]> {
    return this.read(() => sortedById(this.state.registrations.values()));
  }

  setRegistration(registration: PersistedRegistration): Promise<void> {
    return this.open(() => {
      const { id, registrationId, accessKeyId, tokenDigest } = registration;
      this.state.registrations.set(id, { id, registrationId, accessKeyId, tokenDigest });
      return this.write(this.registrationPath(id), { version: 1, id, registrationId, accessKeyId, tokenDigest });
    });
  }

  environment(id: string): Promise<PersistedEnvironment | undefined> {
    return this.read(() => this.state.sessions.get(id));
  }

  environments(): Promise<readonly PersistedEnvironment[]> {
    return this.read(() => sortedById(this.state.sessions.values()));
  }

  owner(id: string): Promise<EnvironmentOwner | undefined> {
    return this.read(() => this.state.owners.get(id));
  }

  claim(id: string, owner: string, options?: ClaimOptions): Promise<number> {
    return this.open(async () => {
      const current = this.state.owners.get(id);
      checkClaim(id, options?.signedAt, current);
      const epoch = (current?.epoch ?? 0) + 1;
      this.state.owners.set(id, claimedOwner(owner, epoch, options));
      await this.writeEnvironment(id);
      return epoch;
    });
  }

  setSession(id: string, session: EnvironmentSession, epoch: number): Promise<void> {
    return this.owned(id, epoch, () => {
      const known = this.state.sessions.get(id);
      if (known !== undefined && known.sessionId === session.sessionId && known.accessKeyId === session.accessKeyId) return this.queue.latest(this.environmentPath(id));
      this.state.sessions.set(id, { id, sessionId: session.sessionId, accessKeyId: session.accessKeyId, updatedAt: this.scheduler.now() });
      return this.writeEnvironment(id);
    });
  }

  forget(id: string): Promise<void> {
    return this.open(async () => {
      this.state.sessions.delete(id);
      this.state.owners.delete(id);
      this.state.registrations.delete(id);
      const registration = this.registrationPath(id);
      await Promise.all([
        this.queue.run(this.environmentPath(id), () => this.fs.unlink(this.environmentPath(id))),
        this.queue.run(registration, () => this.fs.unlink(registration)),
        this.stdins.removeEnvironment(id),
      ]);
    });
  }

  start(digest: string): Promise<StartRecord | undefined> {
    return this.read(() => this.starts.get(digest));
  }

  recordStart(start: NewStartRecord, epoch: number): Promise<void> {
    return this.owned(start.environmentId, epoch, () => this.starts.record(start));
  }

  markStarted(digest: string, epoch: number): Promise<void> {
    const record = this.starts.get(digest);
    if (record === undefined) return this.read(() => undefined);
    return this.owned(record.environmentId, epoch, () => this.starts.markStarted(digest));
  }

  forgetStart(digest: string, epoch: number): Promise<void> {
    const record = this.starts.get(digest);
    if (record === undefined) return this.read(() => undefined);
    return this.owned(record.environmentId, epoch, () => this.starts.forget(digest));
  }

  stdin(key: ProcessKey): Promise<StdinRecord | undefined> {
    return this.open(() => this.stdins.read(key));
  }

  setStdin(key: ProcessKey, record: StdinRecord, epoch: number): Promise<void> {
    return this.owned(key.environmentId, epoch, () => this.stdins.write(key, record));
  }

  forgetStdin(key: ProcessKey, epoch: number): Promise<void> {
    return this.owned(key.environmentId, epoch, () => this.stdins.remove(key));
  }

  async flush(): Promise<void> {
    await Promise.all([this.queue.settled(), this.starts.flush()]);
  }

  /** Waits for the pending writes, then releases the data dir's lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    await this.lock.release();
  }

  /** `await using`: the same as {@link close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** `task` unless the store is closed (then a rejection with ClosedError); what it throws is a rejection too. */
  private open<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError('the host state is closed'));
    try {
      return task();
    } catch (error: unknown) {
      return Promise.reject(error);
    }
  }

  private read<T>(value: () => T): Promise<T> {
    return this.open(() => Promise.resolve(value()));
  }

  /** `task` when `epoch` still owns environment `id` (else a rejection with StaleEpochError, nothing done). */
  private owned<T>(id: string, epoch: number, task: () => Promise<T>): Promise<T> {
    return this.open(() => {
      checkEpoch(id, epoch, this.state.owners.get(id));
      return task();
    });
  }

  private writeHostFile(): Promise<void> {
    const { port, madeTokenDigest } = this.state;
    return this.write(join(this.dataDir, HOST_FILE), { version: 1, ...(port === undefined ? {} : { port }), ...(madeTokenDigest === undefined ? {} : { madeTokenDigest }) });
  }

  /** Writes environment `id`'s file: its session and its owner, as they are now. */
  private writeEnvironment(id: string): Promise<void> {
    const session = this.state.sessions.get(id);
    const owner = this.state.owners.get(id);
    return this.write(this.environmentPath(id), { version: 1, id, ...session, ...owner });
  }

  private environmentPath(id: string): string {
    return join(this.dataDir, ENVIRONMENTS_DIR, fileOf(id));
  }

  private registrationPath(id: string): string {
    return join(this.dataDir, REGISTRATIONS_DIR, fileOf(id));
  }

  private write(path: string, value: object): Promise<void> {
    return this.queue.run(path, () => writeAtomically(this.fs, path, Buffer.from(`${JSON.stringify(value)}\n`, 'utf8')));
  }
}
