/**
 * The processes' stdin records as the data dir keeps them: `stdin/<environment>.<process>.json` (each id
 * percent-encoded, dots too, so the name is unambiguous), replaced by write-temp-then-rename, so a crash
 * leaves the old record or the new one. Read when a restarted host takes a process back.
 */
import { join } from 'node:path';
import type { ProcessKey } from '../process-meta';
import type { StdinRecord } from '../stdin-record';
import { stdinFields, stdinRecordOf } from '../stdin-record';
import type { FileQueue } from './file-queue';
import type { LogFs } from './log/log-fs';
import { readJsonObject, writeAtomically } from './log/log-fs';
import { pathComponent } from './meta-file';

/** The folder of the stdin records in the data dir. */
export const STDIN_DIR = 'stdin';

/** The stdin records of a data dir (see the module's doc); each change goes through the store's queue. */
export class StdinFiles {
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly fs: LogFs,
    private readonly queue: FileQueue,
  ) {
    this.dir = join(dataDir, STDIN_DIR);
  }

  /** Makes the folder if missing. Rejects with the file system's error. */
  async open(): Promise<void> {
    await this.fs.mkdir(this.dir);
  }

  /** The record of `key`, once the changes queued before are done; undefined when there is none or it does not read as one. */
  async read(key: ProcessKey): Promise<StdinRecord | undefined> {
    const path = this.pathOf(key);
    await this.queue.latest(path);
    const fields = await readJsonObject(this.fs, path);
    return fields === undefined ? undefined : stdinRecordOf(fields);
  }

  /** Replaces the record of `key`. Rejects with the file system's error. */
  write(key: ProcessKey, record: StdinRecord): Promise<void> {
    const path = this.pathOf(key);
    const json = JSON.stringify({ version: 1, ...stdinFields(record) });
    return this.queue.run(path, () => writeAtomically(this.fs, path, Buffer.from(`${json}\n`, 'utf8')));
  }

  /** Removes the record of `key` (none is fine). */
  remove(key: ProcessKey): Promise<void> {
    const path = this.pathOf(key);
    return this.queue.run(path, () => this.fs.unlink(path));
  }

  /** Removes every record of environment `environmentId`. */
  async removeEnvironment(environmentId: string): Promise<void> {
    const prefix = `${pathComponent(environmentId)}.`;
    const names = (await this.fs.readdir(this.dir)).filter((name) => name.startsWith(prefix));
    await Promise.all(names.map((name) => this.queue.run(join(this.dir, name), () => this.fs.unlink(join(this.dir, name)))));
  }

  private pathOf(key: ProcessKey): string {
    return join(this.dir, `${pathComponent(key.environmentId)}.${pathComponent(key.processId)}.json`);
  }
}
