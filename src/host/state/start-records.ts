/**
 * The operator API's keyed starts as the data dir keeps them (`starts/<digest>.json`, one file each,
 * replaced by write-temp-then-rename), so that a start in flight when the host stopped is answered after
 * its restart: the same process when the executor has it, a typed failure when it does not, never a
 * second process. A record is written before its `process/start` is sent.
 * The `Idempotency-Key` itself is never stored: only a sha256 digest of it with its token and
 * environment (the file's name).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { LogFs } from '../log/log-fs';
import { nodeLogFs, readJsonObject, writeAtomically } from '../log/log-fs';

/** The folder of the start records in the data dir. */
export const STARTS_DIR = 'starts';

/** How many keyed starts the data dir keeps (the latest; the oldest record goes first). */
export const RECORDED_STARTS = 4096;

/** `sent`: the start was (or was about to be) sent; `started`: the executor answered it. */
export type StartRecordState = 'sent' | 'started';

/** One keyed start as recorded (see the module's doc). */
export interface StartRecord {
  /** sha256 (hex) of the token's name, the environment id and the `Idempotency-Key` (see {@link startDigestOf}). */
  readonly digest: string;
  /** The environment it went to. */
  readonly environmentId: string;
  /** The process id the host chose for it. */
  readonly processId: string;
  /** A digest of the request, to tell a retry from another request with the same key. */
  readonly fingerprint: string;
  /** How far it went. */
  readonly state: StartRecordState;
  /** When it was recorded (epoch ms, on the host's clock): the oldest goes first past the bound. */
  readonly recordedAt: number;
}

/** Options of {@link StartRecords.open}. */
export interface StartRecordsOptions {
  /** The clock of `recordedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** The file system (specs make it fail or count calls). @default node:fs */
  readonly fs?: LogFs;
  /** How many records are kept. @default RECORDED_STARTS */
  readonly maxRecords?: number;
}

/** The digest a keyed start is recorded under: sha256 (hex) of its token's name (`tokenId`: stable across reloads and restarts, never the token), environment id and key. */
export const startDigestOf = (tokenId: string, environmentId: string, key: string): string =>
  createHash('sha256').update(`${tokenId}\u0000${environmentId}\u0000${key}`).digest('hex');

const DIGEST = /^[0-9a-f]{64}$/;
const text = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function recordOf(digest: string, fields: Readonly<Record<string, unknown>>): StartRecord | undefined {
  const { environmentId, processId, fingerprint, state, recordedAt } = fields;
  if (!text(environmentId) || !text(processId) || !text(fingerprint) || (state !== 'sent' && state !== 'started')) return undefined;
  if (typeof recordedAt !== 'number' || !Number.isFinite(recordedAt)) return undefined;
  return { digest, environmentId, processId, fingerprint, state, recordedAt };
}

/**
 * The start records of a data dir (see the module's doc). Made by {@link StartRecords.open}; reads are
 * answered from memory; each change is on the disk when its promise resolves (writes to one record in
 * the order they were made).
 */
export class StartRecords {
  /** By digest, oldest first. */
  private readonly records = new Map<string, StartRecord>();
  private readonly writes = new Map<string, Promise<void>>();

  private constructor(
    private readonly dir: string,
    private readonly fs: LogFs,
    private readonly scheduler: SchedulerLike,
    private readonly maxRecords: number,
  ) {}

  /**
   * Reads the records under `<dataDir>/starts` (made if missing); an unreadable one is removed, and
   * the oldest past the bound go. Rejects with the file system's error when the folder cannot be made or read.
   */
  static async open(dataDir: string, options: StartRecordsOptions = {}): Promise<StartRecords> {
    const fs = options.fs ?? nodeLogFs;
    const dir = join(dataDir, STARTS_DIR);
    await fs.mkdir(dir);
    const records = new StartRecords(dir, fs, options.scheduler ?? asyncScheduler, options.maxRecords ?? RECORDED_STARTS);
    const found: StartRecord[] = [];
    for (const name of await fs.readdir(dir)) {
      const digest = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
      const fields = DIGEST.test(digest) ? await readJsonObject(fs, join(dir, name)) : undefined;
      const record = fields === undefined ? undefined : recordOf(digest, fields);
      if (record === undefined) await fs.unlink(join(dir, name));
      else found.push(record);
    }
    found.sort((a, b) => a.recordedAt - b.recordedAt);
    for (const record of found) records.records.set(record.digest, record);
    await records.bound();
    return records;
  }

  /** How many records are kept. */
  get size(): number {
    return this.records.size;
  }

  /** The record of `digest`, if kept. */
  get(digest: string): StartRecord | undefined {
    return this.records.get(digest);
  }

  /**
   * Records a start about to be sent (state `sent`, replacing any record of the same digest); resolves
   * once it is on the disk, the oldest records past the bound removed. Rejects with the file system's error.
   */
  async record(start: Omit<StartRecord, 'state' | 'recordedAt'>): Promise<void> {
    const record: StartRecord = { ...start, state: 'sent', recordedAt: this.scheduler.now() };
    this.records.delete(start.digest);
    this.records.set(start.digest, record);
    await this.write(record);
    await this.bound();
  }

  /** Marks a recorded start `started` (the executor answered it); nothing for a record no longer kept. */
  async markStarted(digest: string): Promise<void> {
    const record = this.records.get(digest);
    if (record === undefined || record.state === 'started') return;
    const started: StartRecord = { ...record, state: 'started' };
    this.records.set(digest, started);
    await this.write(started);
  }

  /** Forgets a start (it failed: the key may be used again). */
  async forget(digest: string): Promise<void> {
    if (!this.records.delete(digest)) return;
    await this.queue(digest, () => this.fs.unlink(this.pathOf(digest)));
  }

  /** Resolves once every change queued so far is on the disk (or failed). Never rejects. */
  async flush(): Promise<void> {
    await Promise.all([...this.writes.values()].map((write) => write.catch(() => undefined)));
  }

  private write(record: StartRecord): Promise<void> {
    const { environmentId, processId, fingerprint, state, recordedAt } = record;
    const json = JSON.stringify({ version: 1, environmentId, processId, fingerprint, state, recordedAt });
    return this.queue(record.digest, () => writeAtomically(this.fs, this.pathOf(record.digest), Buffer.from(`${json}\n`, 'utf8')));
  }

  /** Runs `change` on the file of `digest` after the changes queued before it. */
  private queue(digest: string, change: () => Promise<void>): Promise<void> {
    const previous = this.writes.get(digest) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(change);
    this.writes.set(digest, next);
    const done = (): void => {
      if (this.writes.get(digest) === next) this.writes.delete(digest);
    };
    next.then(done, done);
    return next;
  }

  /** Removes the oldest records past the bound. */
  private async bound(): Promise<void> {
    const excess = this.records.size - this.maxRecords;
    if (excess <= 0) return;
    const oldest = [...this.records.keys()].slice(0, excess);
    await Promise.all(oldest.map((digest) => this.forget(digest)));
  }

  private pathOf(digest: string): string {
    return join(this.dir, `${digest}.json`);
  }
}
