/**
 * The stdin records of a data dir (`stdin/<environment>.<process>.json`, the state's): ids and counters
 * written atomically, read back as they were after a restart of the store, nothing but what reads as a
 * record, and gone with their process or their environment.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskStateStore } from '../../../src/store/disk/disk-state-store';
import { FileQueue } from '../../../src/store/disk/file-queue';
import { nodeLogFs } from '../../../src/store/disk/log/log-fs';
import { processDir } from '../../../src/store/disk/meta-file';
import { LEGACY_STDIN_FILE, STDIN_DIR, StdinFiles } from '../../../src/store/disk/stdin-records';
import type { StdinRecord } from '../../../src/store/stdin-record';
import { removeTempDirs, tempDir } from './log-support';

afterEach(removeTempDirs);

const RECORD: StdinRecord = {
  target: 'fifo',
  writerProcessId: 'feeder-1',
  nextWriteId: 9,
  endWriteId: null,
  ttyPath: null,
  writes: [
    { writeId: 'w1', firstWriteId: 1, count: 1 },
    { writeId: 'w2', firstWriteId: 2, count: 7 },
  ],
};
const KEY = { environmentId: 'env-1', processId: 'cmd' };
/** The record's file: both ids percent-encoded (dots too), joined by a dot. */
const FILE = 'env-1.cmd.json';

/** The stdin files of a fresh data dir. */
async function files(): Promise<{ readonly stdin: StdinFiles; readonly dir: string }> {
  const dataDir = await tempDir();
  const stdin = new StdinFiles(dataDir, nodeLogFs, new FileQueue());
  await stdin.open();
  return { stdin, dir: join(dataDir, STDIN_DIR) };
}

describe('the stdin records', () => {
  it('reads back what was written, and only ids and counters are in the file', async () => {
    const { stdin, dir } = await files();
    await stdin.write(KEY, RECORD);
    expect(await stdin.read(KEY)).toEqual(RECORD);
    expect(JSON.parse(await readFile(join(dir, FILE), 'utf8'))).toEqual({ version: 1, ...RECORD });
    await stdin.write(KEY, { ...RECORD, target: 'pty', writerProcessId: 'cmd', endWriteId: 9, nextWriteId: 10, ttyPath: '/dev/pts/3' });
    expect(await stdin.read(KEY)).toEqual({ ...RECORD, target: 'pty', writerProcessId: 'cmd', endWriteId: 9, nextWriteId: 10, ttyPath: '/dev/pts/3' });
    expect(await readdir(dir)).toEqual([FILE]); // the temp file was renamed over it
  });

  it('is replaced atomically: a crash before the rename leaves the previous record readable', async () => {
    const { stdin, dir } = await files();
    await stdin.write(KEY, RECORD);
    // What a crash between the temp file's write and its rename leaves behind.
    await writeFile(join(dir, `${FILE}.tmp`), '{"version":1,"target":"fi');
    expect(await stdin.read(KEY)).toEqual(RECORD);
  });

  it.each([
    ['no file', undefined],
    ['not JSON', '{"target":'],
    ['an unknown target', JSON.stringify({ ...RECORD, target: 'pipe' })],
    ['a zero counter', JSON.stringify({ ...RECORD, nextWriteId: 0 })],
    ['a write without its ids', JSON.stringify({ ...RECORD, writes: [{ writeId: 'w1' }] })],
  ])('reads as none with %s', async (_what, content) => {
    const { stdin, dir } = await files();
    if (content !== undefined) await writeFile(join(dir, FILE), content);
    expect(await stdin.read(KEY)).toBeUndefined();
  });

  it('names each file by both ids unambiguously, even ids with dots', async () => {
    const { stdin, dir } = await files();
    await stdin.write({ environmentId: 'a.b', processId: 'c' }, RECORD);
    await stdin.write({ environmentId: 'a', processId: 'b.c' }, { ...RECORD, nextWriteId: 10 });
    expect((await readdir(dir)).sort()).toEqual(['a%2Eb.c.json', 'a.b%2Ec.json']);
    expect((await stdin.read({ environmentId: 'a', processId: 'b.c' }))?.nextWriteId).toBe(10);
  });

  it('reads a record a data dir of before kept next to the process log, and removes it with the new one', async () => {
    const dataDir = await tempDir();
    const stdin = new StdinFiles(dataDir, nodeLogFs, new FileQueue());
    await stdin.open();
    const legacy = join(processDir(dataDir, KEY), LEGACY_STDIN_FILE);
    await mkdir(processDir(dataDir, KEY), { recursive: true });
    await writeFile(legacy, JSON.stringify({ version: 1, ...RECORD }));
    expect(await stdin.read(KEY)).toEqual(RECORD);
    // The next write goes to the new place, and wins.
    await stdin.write(KEY, { ...RECORD, nextWriteId: 12 });
    expect((await stdin.read(KEY))?.nextWriteId).toBe(12);
    await stdin.remove(KEY);
    expect({ record: await stdin.read(KEY), legacy: await readdir(processDir(dataDir, KEY)) }).toEqual({ record: undefined, legacy: [] });
  });

  it("is the state's: found again after a restart, gone with its process, and with its environment", async () => {
    const dataDir = await tempDir();
    const state = await DiskStateStore.open(dataDir);
    const other = { environmentId: 'env-1', processId: 'other' };
    await state.setStdin(KEY, RECORD, 0);
    await state.setStdin(other, RECORD, 0);
    expect(await state.stdin({ environmentId: 'env-1', processId: 'nobody' })).toBeUndefined();
    await state.close();

    const restarted = await DiskStateStore.open(dataDir);
    expect(await restarted.stdin(KEY)).toEqual(RECORD);
    await restarted.forgetStdin(KEY, 0);
    expect(await restarted.stdin(KEY)).toBeUndefined();
    expect(await readdir(join(dataDir, STDIN_DIR))).toEqual(['env-1.other.json']);
    await restarted.forget('env-1');
    expect(await readdir(join(dataDir, STDIN_DIR))).toEqual([]);
    await restarted.close();
  });
});
