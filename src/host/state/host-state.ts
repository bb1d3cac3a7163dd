/**
 * What a host keeps in its data dir to survive a restart (docs/architecture.md, "state"): the TCP port it
 * bound (`host.json`), so executors re-dial the url they registered with, and per environment
 * (`environments/<encoded id>.json`) its executor session id and the access key id that registered it,
 * and its latest registration (`registrations/<encoded id>.json`: the registration id, the key id and the
 * SHA-256 digest of its capability token), so an executor re-dialling the url it registered with is let in
 * at once, without a 409 and a new registration. Never a secret: no token (only its digest), no secret key. Each file is replaced whole (temp file, sync, rename), so a
 * crash leaves the old one or the new one; a damaged file is reported and treated as absent. The data
 * dir is locked (`host.lock`, see `./host-lock`) from `open` to `close`.
 */
import { join } from 'node:path';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { LogFs } from '../log/log-fs';
import { errnoOf, nodeLogFs, readJsonObject, writeAtomically } from '../log/log-fs';
import { HostLock } from './host-lock';

/** The host's own file in the data dir. */
export const HOST_FILE = 'host.json';
/** The folder of the environments' files. */
export const ENVIRONMENTS_DIR = 'environments';
/** The folder of the environments' latest registrations. */
export const REGISTRATIONS_DIR = 'registrations';

/** An environment's latest registration as the data dir keeps it: never its token, only the token's digest. */
export interface PersistedRegistration {
  /** The environment id. */
  readonly id: string;
  /** The registration id the executor's url names. */
  readonly registrationId: string;
  /** The access key id that signed it. */
  readonly accessKeyId: string;
  /** The SHA-256 digest (hex) of its capability token. */
  readonly tokenDigest: string;
}

/** An environment's executor session, as the host installed it. */
export interface EnvironmentSession {
  /** The executor's session id (what the host resumes with `resumeSessionId`). */
  readonly sessionId: string;
  /** The access key id that signed the environment's registration (never its secret). */
  readonly accessKeyId: string;
}

/** An environment as the data dir remembers it. */
export interface PersistedEnvironment extends EnvironmentSession {
  /** The environment id. */
  readonly id: string;
  /** When its session was recorded (epoch ms, on the host's clock). */
  readonly updatedAt: number;
}

/** Options of {@link HostState.open}. */
export interface HostStateOptions {
  /** Where a damaged file is reported (one line each, no path). @default none */
  readonly log?: (line: string) => void;
  /** The clock of `updatedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** @internal The file system (specs make it fail). @default node:fs */
  readonly fs?: LogFs;
}

const fileOf = (id: string): string => `${encodeURIComponent(id)}.json`;
const text = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * A host's durable state in its data dir (see the module's doc). Made by {@link HostState.open}; reads
 * are answered from memory, each change is written before its promise resolves (changes to one file in
 * the order they were made). The owner calls `close()` last, after the host's last flush.
 */
export class HostState {
  private portValue: number | undefined;
  private madeTokenValue: string | undefined;
  private readonly records = new Map<string, PersistedEnvironment>();
  private readonly registrationRecords = new Map<string, PersistedRegistration>();
  private readonly writes = new Map<string, Promise<void>>();
  private closed = false;

  private constructor(
    private readonly dataDir: string,
    private readonly lock: HostLock,
    private readonly fs: LogFs,
    private readonly scheduler: SchedulerLike,
  ) {}

  /**
   * Locks `dataDir` (made if missing) and reads what it holds. Rejects with `DataDirInUseError` when a
   * live host holds its lock (a dead host's lock is taken over), or with the file system's error.
   */
  static async open(dataDir: string, options: HostStateOptions = {}): Promise<HostState> {
    const fs = options.fs ?? nodeLogFs;
    await fs.mkdir(join(dataDir, ENVIRONMENTS_DIR));
    await fs.mkdir(join(dataDir, REGISTRATIONS_DIR));
    const lock = await HostLock.take(dataDir);
    const state = new HostState(dataDir, lock, fs, options.scheduler ?? asyncScheduler);
    try {
      await state.load(options.log ?? (() => undefined));
    } catch (error: unknown) {
      await lock.release();
      throw error;
    }
    return state;
  }

  /** The TCP port the host bound last, if any. */
  get port(): number | undefined {
    return this.portValue;
  }

  /** Records the port the host bound. */
  setPort(port: number): Promise<void> {
    this.portValue = port;
    return this.writeHostFile();
  }

  /**
   * The SHA-256 digest (hex) of the operator token a host made at its first start (none was
   * configured), if one did: a restarted host accepts that token again, so the url it printed still
   * works. Never the token itself.
   */
  get madeTokenDigest(): string | undefined {
    return this.madeTokenValue;
  }

  /** Records the digest (hex SHA-256) of the operator token the host made. */
  setMadeTokenDigest(digest: string): Promise<void> {
    this.madeTokenValue = digest;
    return this.writeHostFile();
  }

  private writeHostFile(): Promise<void> {
    return this.write(join(this.dataDir, HOST_FILE), { version: 1, ...(this.portValue === undefined ? {} : { port: this.portValue }), ...(this.madeTokenValue === undefined ? {} : { madeTokenDigest: this.madeTokenValue }) });
  }

  /** What the data dir remembers of environment `id`. */
  environment(id: string): PersistedEnvironment | undefined {
    return this.records.get(id);
  }

  /** Every environment it remembers, by id. */
  environments(): readonly PersistedEnvironment[] {
    return [...this.records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Records environment `id`'s session; the same session and key again writes nothing. */
  setSession(id: string, session: EnvironmentSession): Promise<void> {
    const known = this.records.get(id);
    if (known !== undefined && known.sessionId === session.sessionId && known.accessKeyId === session.accessKeyId) return this.writes.get(this.environmentPath(id)) ?? Promise.resolve();
    const record: PersistedEnvironment = { id, sessionId: session.sessionId, accessKeyId: session.accessKeyId, updatedAt: this.scheduler.now() };
    this.records.set(id, record);
    return this.write(this.environmentPath(id), { version: 1, ...record });
  }

  /** Forgets environment `id` (its files go). */
  forget(id: string): Promise<void> {
    this.records.delete(id);
    this.registrationRecords.delete(id);
    const registration = this.registrationPath(id);
    return Promise.all([this.queue(this.environmentPath(id), () => this.fs.unlink(this.environmentPath(id))), this.queue(registration, () => this.fs.unlink(registration))]).then(() => undefined);
  }

  /** Every environment's latest registration it remembers, by id. */
  registrations(): readonly PersistedRegistration[] {
    return [...this.registrationRecords.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Records environment `id`'s latest registration (it supersedes the one before). */
  setRegistration(registration: PersistedRegistration): Promise<void> {
    this.registrationRecords.set(registration.id, registration);
    return this.write(this.registrationPath(registration.id), { version: 1, ...registration });
  }

  private registrationPath(id: string): string {
    return join(this.dataDir, REGISTRATIONS_DIR, fileOf(id));
  }

  /** Waits for the pending writes, then releases the data dir's lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.writes.values()]);
    await this.lock.release();
  }

  private environmentPath(id: string): string {
    return join(this.dataDir, ENVIRONMENTS_DIR, fileOf(id));
  }

  private write(path: string, value: object): Promise<void> {
    return this.queue(path, () => writeAtomically(this.fs, path, Buffer.from(`${JSON.stringify(value)}\n`, 'utf8')));
  }

  /** Runs `task` after the file's previous change (two writes of one file never share its temp file). */
  private queue(path: string, task: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('host state is closed'));
    const done = (this.writes.get(path) ?? Promise.resolve()).catch(() => undefined).then(task);
    this.writes.set(path, done);
    const settle = (): void => {
      if (this.writes.get(path) === done) this.writes.delete(path);
    };
    done.then(settle, settle);
    return done;
  }

  private async load(log: (line: string) => void): Promise<void> {
    const host = await this.readObject(join(this.dataDir, HOST_FILE), HOST_FILE, log);
    const port = host?.['port'];
    if (typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65_536) this.portValue = port;
    else if (host !== undefined && port !== undefined) log(`${HOST_FILE} is damaged (its port): ignored`);
    const made = host?.['madeTokenDigest'];
    if (typeof made === 'string' && /^[0-9a-f]{64}$/.test(made)) this.madeTokenValue = made;
    else if (made !== undefined) log(`${HOST_FILE} is damaged (its made token's digest): ignored`);
    for (const name of await this.fs.readdir(join(this.dataDir, ENVIRONMENTS_DIR))) {
      if (!name.endsWith('.json')) continue;
      const object = await this.readObject(join(this.dataDir, ENVIRONMENTS_DIR, name), `${ENVIRONMENTS_DIR}/${name}`, log);
      const record = toRecord(object);
      if (record !== undefined && fileOf(record.id) === name) this.records.set(record.id, record);
      else if (object !== undefined) log(`${ENVIRONMENTS_DIR}/${name} is damaged: ignored`);
    }
    for (const name of await this.fs.readdir(join(this.dataDir, REGISTRATIONS_DIR))) {
      if (!name.endsWith('.json')) continue;
      const object = await this.readObject(join(this.dataDir, REGISTRATIONS_DIR, name), `${REGISTRATIONS_DIR}/${name}`, log);
      const record = toRegistration(object);
      if (record !== undefined && fileOf(record.id) === name) this.registrationRecords.set(record.id, record);
      else if (object !== undefined) log(`${REGISTRATIONS_DIR}/${name} is damaged: ignored`);
    }
  }

  /** A file's JSON object; a damaged one is reported and treated as absent. */
  private async readObject(path: string, name: string, log: (line: string) => void): Promise<Readonly<Record<string, unknown>> | undefined> {
    try {
      const object = await readJsonObject(this.fs, path);
      if (object === undefined && (await this.fs.fileSize(path)) !== undefined) log(`${name} is damaged: ignored`);
      return object;
    } catch (error: unknown) {
      log(`${name} cannot be read (${errnoOf(error)}): ignored`);
      return undefined;
    }
  }
}

/** An environment's record from its file's object, or undefined when a field is missing or wrong. */
function toRegistration(object: Readonly<Record<string, unknown>> | undefined): PersistedRegistration | undefined {
  if (object === undefined) return undefined;
  const { id, registrationId, accessKeyId, tokenDigest } = object;
  if (!text(id) || !text(registrationId) || !text(accessKeyId) || typeof tokenDigest !== 'string' || !/^[0-9a-f]{64}$/.test(tokenDigest)) return undefined;
  return { id, registrationId, accessKeyId, tokenDigest };
}

function toRecord(object: Readonly<Record<string, unknown>> | undefined): PersistedEnvironment | undefined {
  if (object === undefined) return undefined;
  const { id, sessionId, accessKeyId, updatedAt } = object;
  if (!text(id) || !text(sessionId) || !text(accessKeyId) || typeof updatedAt !== 'number') return undefined;
  return { id, sessionId, accessKeyId, updatedAt };
}
