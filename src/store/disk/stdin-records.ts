/**
 * The processes' stdin records as the data dir keeps them: `stdin/<environment>.<process>.json` (each id
 * percent-encoded, dots too, so the name is unambiguous), replaced by write-temp-then-rename, so a crash
 * leaves the old record or the new one. Read when a restarted host takes a process back.
 *
 * A data dir of before this layout kept the record next to the process's log
 * (`processes/<environment>/<process>/stdin.json`): a record found only there is read from there (a host
 * upgraded while a process with a piped stdin ran takes it back with its stdin), and goes with the new one.
 */
import { join } from 'node:path';
import type { ProcessKey } from '../process-meta';
import type { StdinRecord } from '../stdin-record';
import { stdinFields, stdinRecordOf } from '../stdin-record';
import type { FileQueue } from './file-queue';
import type { LogFs } from './log/log-fs';
import { readJsonObject, writeAtomically } from './log/log-fs';
import { pathComponent, processDir } from './meta-file';

/** The folder of the stdin records in the data dir. */
export const STDIN_DIR = 'stdin';

/** The record's name in a process's log directory, where a data dir of before kept it. */
export const LEGACY_STDIN_FILE = 'stdin.json';

/** The stdin records of a data dir (see the module's doc); each change goes through the store's queue. */
export class StdinFiles {
  private readonly dir: string;

  constructor(
    private readonly dataDir: string,
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
    const fields = (await readJsonObject(this.fs, path)) ?? (await readJsonObject(this.fs, this.legacyPathOf(key)));
    return fields === undefined ? undefined : stdinRecordOf(fields);
  }

  /** Replaces the record of `key`. Rejects with the file system's error. */
  write(key: ProcessKey, record: StdinRecord): Promise<void> {
    const path = this.pathOf(key);
    const json = JSON.stringify({ version: 1, ...stdinFields(record) });
    return this.queue.run(path, () => writeAtomically(this.fs, path, Buffer.from(`${json}\n`, 'utf8')));
  }

  /** Removes the record of `key` (none is fine), and one a data dir of before kept for it. */
  remove(key: ProcessKey): Promise<void> {
    const path = this.pathOf(key);
    return this.queue.run(path, async () => {
      await this.fs.unlink(path);
      await this.fs.unlink(this.legacyPathOf(key));
    });
  }

  /** Removes every record of environment `environmentId`. */
  async removeEnvironment(environmentId: string): Promise<void> {
    const prefix = `${pathComponent(environmentId)}.`;
    const names = (await this.fs.readdir(this.dir)).filter((name) => name.startsWith(prefix));
    await Promise.all(names.map((name) => this.queue.run(join(this.dir, name), () => this.fs.unlink(join(this.dir, name)))));
  }

  private legacyPathOf(key: ProcessKey): string {
    return join(processDir(this.dataDir, key), LEGACY_STDIN_FILE);
  }

  private pathOf(key: ProcessKey): string {
    return join(this.dir, `${pathComponent(key.environmentId)}.${pathComponent(key.processId)}.json`);
  }
}
