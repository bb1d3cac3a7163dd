/**
 * A host with a data dir keeps each process's output in a log on disk (`outputLog`): an event stream
 * read from seq 0 after the process ended gets every byte, in order, with contiguous seqs; the log and
 * its metadata (argv, final state) are in the data dir; and the host closes the store with itself.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEvents, startApiHost, startProcess } from '../api/api-host';
import { paths } from '../api/api-client';

jest.setTimeout(60_000);

describe('a host with a data dir', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-host-log-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('logs a process to disk and serves all of it, from seq 0, after it ended', async () => {
    const { host, environmentId, api } = await startApiHost({ environmentId: 'disk-1', host: { outputLog: { dataDir, segmentBytes: 256 * 1024 } } });
    const lines = 200_000;
    const started = await startProcess(api, environmentId, { argv: ['seq', '1', String(lines)] });
    // Read once it ended: everything comes from the log, none of it from the executor's window.
    const live = await api.events(paths.events(environmentId, started.id));
    if (!('stream' in live)) throw new Error(`events answered ${live.refused.status}`);
    await live.stream.ended(30_000);
    const late = await api.events(paths.events(environmentId, started.id));
    if (!('stream' in late)) throw new Error(`events answered ${late.refused.status}`);
    const events = await late.stream.ended(30_000);
    const seqs = events.filter((event) => event.id !== undefined).map((event) => Number(event.id));
    expect(seqs[0]).toBe(1);
    expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
    expect(events.some((event) => event.event === 'truncated')).toBe(false);
    const expected = Array.from({ length: lines }, (_, index) => `${index + 1}\n`).join('');
    const { stdout, exitCode } = decodeEvents(events);
    expect({ sha256: createHash('sha256').update(stdout).digest('hex'), exitCode }).toEqual({ sha256: createHash('sha256').update(expected).digest('hex'), exitCode: 0 });

    await host.close();
    const processDir = join(dataDir, 'processes', environmentId, started.id);
    const files = readdirSync(processDir);
    expect(files.filter((name) => name.endsWith('.seg')).length).toBeGreaterThan(1);
    const meta = JSON.parse(readFileSync(join(processDir, 'meta.json'), 'utf8')) as { argv: string[]; state: string; exitCode: number };
    expect(meta).toMatchObject({ argv: ['seq', '1', String(lines)], state: 'closed', exitCode: 0 });
  });
});
