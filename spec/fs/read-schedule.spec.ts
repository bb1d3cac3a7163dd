/**
 * `ReadStreamOptions.schedule`: every `fs/readBlock` of a pipelined read waits where the hook says (a
 * host's fair queue) and nothing goes on the wire before the hook lets it; dropped reads are unsubscribed
 * through it. On a scripted executor.
 */
import type { Observable } from 'rxjs';
import { defer, Subject } from 'rxjs';
import { finalize, mergeMap, take } from 'rxjs/operators';
import { fileHandlers, requestsOn, scriptedFilesystems } from './client-harness';

const CONTENT = Buffer.from('abcdefghijklmnopqrst'); // 20 bytes

const paramsOf = (m: Record<string, unknown>): Record<string, unknown> => m.params as Record<string, unknown>;

/** A hook that holds every read until `release()` lets the oldest go; it counts what it was given and what it dropped unsent. */
function gatedSchedule(): { readonly schedule: <T>(request: Observable<T>) => Observable<T>; readonly release: () => void; readonly counts: { given: number; dropped: number } } {
  const waiting: Subject<void>[] = [];
  const counts = { given: 0, dropped: 0 };
  const schedule = <T>(request: Observable<T>): Observable<T> =>
    defer(() => {
      counts.given += 1;
      const turn = new Subject<void>();
      waiting.push(turn);
      let sent = false;
      return turn.pipe(
        take(1),
        mergeMap(() => ((sent = true), request)),
        finalize(() => {
          const at = waiting.indexOf(turn);
          if (at >= 0) waiting.splice(at, 1);
          if (!sent) counts.dropped += 1;
        }),
      );
    });
  return { schedule, release: () => waiting.shift()?.next(), counts };
}

describe('RemoteFileSystem read schedule hook', () => {
  const { connect } = scriptedFilesystems();

  const readOffsets = (port: Parameters<typeof requestsOn>[0]): unknown[] => requestsOn(port).filter((m) => m.method === 'fs/readBlock').map((m) => paramsOf(m).offset);

  it('sends no fs/open or fs/readBlock until the hook lets each read go, and yields the file in order', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const gate = gatedSchedule();
    const blocks = fs.readIterable('/tmp/a', { blockSize: 8, inFlight: 2, schedule: gate.schedule });
    const first = blocks.next();
    await Promise.resolve();
    // The first read (which carries the fs/open) waits in the hook: nothing on the wire.
    expect({ given: gate.counts.given, sent: requestsOn(port) }).toEqual({ given: 1, sent: [] });
    gate.release();
    await expect(first).resolves.toEqual({ value: Buffer.from('abcdefgh'), done: false });
    expect(readOffsets(port)).toEqual([0]);
    // The window opened: two more reads given to the hook, none sent yet.
    expect(gate.counts.given).toBe(3);
    gate.release();
    await expect(blocks.next()).resolves.toEqual({ value: Buffer.from('ijklmnop'), done: false });
    expect(readOffsets(port)).toEqual([0, 8]);
    gate.release();
    await expect(blocks.next()).resolves.toEqual({ value: Buffer.from('qrst'), done: false });
    await expect(blocks.next()).resolves.toEqual({ value: undefined, done: true });
    // The read at 24 (asked for before the eof at 16 was known) was dropped in the hook, never sent.
    expect({ reads: readOffsets(port), given: gate.counts.given, dropped: gate.counts.dropped }).toEqual({ reads: [0, 8, 16], given: 4, dropped: 1 });
    expect(requestsOn(port).at(-1)).toMatchObject({ method: 'fs/close', params: { handleId: 'h1' } });
  });

  it('unsubscribes through the hook the reads it drops: those still waiting are never sent', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const gate = gatedSchedule();
    const blocks = fs.readIterable('/tmp/a', { blockSize: 4, inFlight: 3, schedule: gate.schedule });
    const first = blocks.next();
    gate.release();
    await expect(first).resolves.toEqual({ value: Buffer.from('abcd'), done: false });
    expect(gate.counts.given).toBe(4); // the window of three ahead, all waiting in the hook
    await blocks.return?.();
    expect({ reads: readOffsets(port), dropped: gate.counts.dropped }).toEqual({ reads: [0], dropped: 3 });
  });

  it('applies to readStream too: every read passes the hook', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    let given = 0;
    const passThrough = <T>(request: Observable<T>): Observable<T> => defer(() => ((given += 1), request));
    const received: Buffer[] = [];
    await new Promise<void>((resolve, reject) => fs.readStream('/tmp/a', { blockSize: 6, inFlight: 2, schedule: passThrough }).subscribe({ next: (b) => received.push(b), error: reject, complete: resolve }));
    expect({ text: Buffer.concat(received).toString(), given, reads: readOffsets(port) }).toEqual({ text: CONTENT.toString(), given: 4, reads: [0, 6, 12, 18] });
  });
});
