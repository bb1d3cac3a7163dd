/**
 * The operator API's keyed starts as the data dir keeps them (`starts/<digest>.json`, one file each,
 * replaced by write-temp-then-rename), so that a start in flight when the host stopped is answered after
 * its restart: the same process when the executor has it, a typed failure when it does not, never a
 * second process. Only the digest of the `Idempotency-Key` with its token and environment is kept (the
 * file's name), never the key.
 */
import { join } from 'node:path';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { NewStartRecord, StartRecord } from '../state-store';
import { RECORDED_STARTS } from '../state-store';
import { FileQueue } from './file-queue';
import type { LogFs } from './log/log-fs';
import { nodeLogFs, readJsonObject, writeAtomically } from './log/log-fs';

/** The folder of the start records in the data dir. */
export const STARTS_DIR = 'starts';

/** Options of {@link StartRecords.open}. */
export interface StartRecordsOptions {
  /** The clock of `recordedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** The file system (specs make it fail or count calls). @default node:fs */
  readonly fs?: LogFs;
  /** How many records are kept. @default RECORDED_STARTS */
  readonly maxRecords?: number;
}

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
 * answered from memory; each change is on the disk when its promise resolves.
 */
export class StartRecords {
  /** By digest, oldest first. */
  private readonly records = new Map<string, StartRecord>();
  private readonly queue = new FileQueue();

  private constructor(
    private readonly dir: string,
    private readonly fs: LogFs,
    private readonly scheduler: SchedulerLike,
    private readonly maxRecords: number,
  ) {}

  /**
   * Reads the records under `<dataDir>/starts` (made if missing); an unreadable one is removed, and the
   * oldest past the bound go. Rejects with the file system's error when the folder cannot be made or read.
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

  /** Records a start about to be sent (state `sent`, replacing one of the same digest); the oldest past the bound go. */
  async record(start: NewStartRecord): Promise<void> {
    const { digest, environmentId, processId, fingerprint } = start;
    const record: StartRecord = { digest, environmentId, processId, fingerprint, state: 'sent', recordedAt: this.scheduler.now() };
    this.records.delete(digest);
    this.records.set(digest, record);
    await this.write(record);
    await this.bound();
  }

  /** Marks a recorded start `started`; nothing for a record no longer kept. */
  async markStarted(digest: string): Promise<void> {
    const record = this.records.get(digest);
    if (record === undefined || record.state === 'started') return;
    const started: StartRecord = { ...record, state: 'started' };
    this.records.set(digest, started);
    await this.write(started);
  }

  /** Forgets a start (its file goes). */
  async forget(digest: string): Promise<void> {
    if (!this.records.delete(digest)) return;
    await this.queue.run(this.pathOf(digest), () => this.fs.unlink(this.pathOf(digest)));
  }

  /** Resolves once every change queued so far is on the disk (or failed). Never rejects. */
  flush(): Promise<void> {
    return this.queue.settled();
  }

  private write(record: StartRecord): Promise<void> {
    const { environmentId, processId, fingerprint, state, recordedAt } = record;
    const json = JSON.stringify({ version: 1, environmentId, processId, fingerprint, state, recordedAt });
    return this.queue.run(this.pathOf(record.digest), () => writeAtomically(this.fs, this.pathOf(record.digest), Buffer.from(`${json}\n`, 'utf8')));
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
