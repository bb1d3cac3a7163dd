/**
 * The stdin record (`stdin.json` next to a process's output log): ids and counters written atomically,
 * read back as they were after a restart of the store, and nothing but what reads as a record.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeLogFs } from '../../../src/host/log/log-fs';
import { OutputLogStore } from '../../../src/host/log/output-log-store';
import { processDir } from '../../../src/host/log/process-meta';
import type { StdinRecord } from '../../../src/host/log/stdin-record';
import { readStdinRecord, STDIN_FILE, writeStdinRecord } from '../../../src/host/log/stdin-record';
import { removeTempDirs, SpyFs, tempDir, VirtualClock } from './log-support';

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

describe('the stdin record', () => {
  it('reads back what was written, and only ids and counters are in the file', async () => {
    const dir = await tempDir();
    await writeStdinRecord(nodeLogFs, dir, RECORD);
    expect(await readStdinRecord(nodeLogFs, dir)).toEqual(RECORD);
    expect(JSON.parse(await readFile(join(dir, STDIN_FILE), 'utf8'))).toEqual({ version: 1, ...RECORD });
    await writeStdinRecord(nodeLogFs, dir, { ...RECORD, target: 'pty', writerProcessId: 'cmd', endWriteId: 9, nextWriteId: 10, ttyPath: '/dev/pts/3' });
    expect(await readStdinRecord(nodeLogFs, dir)).toEqual({ ...RECORD, target: 'pty', writerProcessId: 'cmd', endWriteId: 9, nextWriteId: 10, ttyPath: '/dev/pts/3' });
    expect(await readdir(dir)).toEqual([STDIN_FILE]); // the temp file was renamed over it
  });

  it('is replaced atomically: a crash before the rename leaves the previous record readable', async () => {
    const dir = await tempDir();
    await writeStdinRecord(nodeLogFs, dir, RECORD);
    // What a crash between the temp file's write and its rename leaves behind.
    await writeFile(join(dir, `${STDIN_FILE}.tmp`), '{"version":1,"target":"fi');
    expect(await readStdinRecord(nodeLogFs, dir)).toEqual(RECORD);
  });

  it.each([
    ['no file', undefined],
    ['not JSON', '{"target":'],
    ['an unknown target', JSON.stringify({ ...RECORD, target: 'pipe' })],
    ['a zero counter', JSON.stringify({ ...RECORD, nextWriteId: 0 })],
    ['a write without its ids', JSON.stringify({ ...RECORD, writes: [{ writeId: 'w1' }] })],
  ])('reads as none with %s', async (_what, content) => {
    const dir = await tempDir();
    if (content !== undefined) await writeFile(join(dir, STDIN_FILE), content);
    expect(await readStdinRecord(nodeLogFs, dir)).toBeUndefined();
  });

  it('goes next to the process log of the store, after its directory is made, and is found again after a restart', async () => {
    const clock = new VirtualClock();
    const dataDir = await tempDir();
    const options = { dataDir, fs: new SpyFs(clock), scheduler: clock.scheduler, totalBytes: 1 << 30 };
    const store = await OutputLogStore.open(options);
    const key = { environmentId: 'env-1', processId: 'cmd' };
    store.create(key, { argv: ['cat'], tty: false });
    await store.writeStdin(key, RECORD);
    await store.writeStdin({ environmentId: 'env-1', processId: 'nobody' }, RECORD); // a process it does not hold: nothing
    expect(await readdir(processDir(dataDir, key))).toEqual(expect.arrayContaining(['meta.json', STDIN_FILE]));
    expect(await readdir(join(dataDir, 'processes', 'env-1'))).toEqual(['cmd']);
    await store.close();

    const restarted = await OutputLogStore.open(options);
    expect(await restarted.readStdin(key)).toEqual(RECORD);
    expect(await restarted.readStdin({ environmentId: 'env-1', processId: 'nobody' })).toBeUndefined();
    await restarted.remove(key);
    expect(await readStdinRecord(nodeLogFs, processDir(dataDir, key))).toBeUndefined();
    await restarted.close();
  });
});
