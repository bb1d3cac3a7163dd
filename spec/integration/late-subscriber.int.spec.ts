/**
 * Late subscribers against the real executor: a process whose output went past the history bound
 * (256 events / 1 MiB), joined after it closed with `text$('stdout', { allowTruncated: true })` and with
 * `eventsAfter$(n)`: what arrives starts with the `truncated` marker and is byte-exact after it.
 */
import { createHash } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { Observable } from 'rxjs';
import type { Environment, ExecProcess, ProcessEvent, ProcessSummary, TruncatedEvent } from '../../src';
import { EnvironmentManager } from '../../src';
import { startListeningExecutor } from '../support/executor';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
/** About 2.7 MB of base64 text in ~330 chunks of at most 8 KiB: well past 256 events and 1 MiB. */
const SCRIPT = 'head -c 2000000 /dev/urandom | base64 | tee /tmp/exec-rx-late.$$; sha256sum < /tmp/exec-rx-late.$$ >&2; rm -f /tmp/exec-rx-late.$$';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const all = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));

describe('a late subscriber to a process past its history bound (real executor)', () => {
  let manager: EnvironmentManager;
  let environment: Environment;
  let process: ExecProcess;
  /** Every stdout chunk by seq, as an early subscriber got it. */
  const chunks = new Map<number, Uint8Array>();

  beforeAll(async () => {
    const executor = await startListeningExecutor();
    manager = await EnvironmentManager.connect('late-1', executor.url ?? '', { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
    process = (await environment.getExecBackend().start({ argv: ['sh', '-c', SCRIPT], cwd: '/tmp', env: PATH_ENV })).process;
    const early = await all(process.events$);
    for (const event of early) if (event.type === 'output' && event.stream === 'stdout') chunks.set(event.seq, event.chunk);
    // The early subscriber saw everything: its bytes hash to what the executor's shell hashed.
    const stderr = Buffer.concat(early.flatMap((e) => (e.type === 'output' && e.stream === 'stderr' ? [e.chunk] : []))).toString();
    expect(sha256(Buffer.concat(stdoutFrom(1)))).toBe(stderr.split(' ')[0]);
    expect(early.at(-1)).toMatchObject({ type: 'closed' });
  });
  afterAll(async () => {
    await manager.close();
  });

  /** The early subscriber's stdout chunks from `seq` on, in seq order. */
  function stdoutFrom(seq: number): Uint8Array[] {
    return [...chunks.entries()].filter(([s]) => s >= seq).sort(([a], [b]) => a - b).map(([, bytes]) => bytes);
  }

  it('went past the bound: a late events$ starts with the marker, then the retained events in a contiguous run', async () => {
    const late = await all(process.events$);
    const marker = late[0] as TruncatedEvent;
    expect(marker).toMatchObject({ type: 'truncated', nextSeq: expect.any(Number) });
    expect(marker.droppedEvents).toBe(marker.nextSeq - 1);
    expect(late.length - 1).toBeLessThanOrEqual(256);
    const seqs = late.slice(1).map((e) => ('seq' in e ? e.seq : -1));
    expect(seqs).toEqual(seqs.map((_, i) => marker.nextSeq + i));
  });

  it("text$('stdout', { allowTruncated: true }) gives exactly the text that follows the marker", async () => {
    const marker = (await all(process.events$))[0] as TruncatedEvent;
    const text = (await all(process.text$('stdout', { allowTruncated: true }))).join('');
    const expected = Buffer.concat(stdoutFrom(marker.nextSeq));
    expect(sha256(Buffer.from(text))).toBe(sha256(expected));
    expect(text.length).toBe(expected.byteLength);
  });

  it('eventsAfter$(n) inside the dropped part: the marker first, then byte-exact output from its nextSeq', async () => {
    const events: ProcessEvent[] = await all(process.eventsAfter$(10));
    const marker = events[0] as TruncatedEvent;
    expect(marker).toMatchObject({ type: 'truncated' });
    expect(marker.nextSeq).toBeGreaterThan(11);
    const output = events.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.chunk] : []));
    expect(sha256(Buffer.concat(output))).toBe(sha256(Buffer.concat(stdoutFrom(marker.nextSeq))));
    expect(events.at(-1)).toMatchObject({ type: 'closed' });
  });

  it('eventsAfter$(n) inside the retained part: no marker, the output after n exactly', async () => {
    const marker = (await all(process.events$))[0] as TruncatedEvent;
    const n = marker.nextSeq + 5;
    const events = await all(process.eventsAfter$(n));
    expect(events[0]).toMatchObject({ seq: n + 1 });
    const output = events.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.chunk] : []));
    expect(sha256(Buffer.concat(output))).toBe(sha256(Buffer.concat(stdoutFrom(n + 1))));
  });

  it('is listed in processes$ as closed with its exit code, and its state$ replays closed and completes', async () => {
    expect(await all(process.state$)).toEqual(['closed']);
    let snapshot: readonly ProcessSummary[] = [];
    environment.processes$.subscribe((s) => (snapshot = s)).unsubscribe();
    expect(snapshot).toEqual([expect.objectContaining({ processId: process.processId, argv: ['sh', '-c', SCRIPT], state: 'closed', exitCode: 0 })]);
  });
});
