/**
 * What a finished process the caller keeps still holds (issue 40: the bench's "1000 finished processes
 * kept" grew by ~170 bytes each when a closure and a request object came in with a file split, unseen by
 * every spec). A kept process must replay its output; it needs no closure, no request object until it
 * makes a request, no event object for `exited` and `closed` (its history holds them as numbers), and no
 * slice of Node's buffer pool for a few bytes of output (each pinned a share of an 8 KiB slab).
 */
import { asyncScheduler, lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { ExecBackend } from '../../src/exec/exec-backend';
import type { ExecProcess } from '../../src/exec/exec-process';
import type { ProcessEvent } from '../../src/exec/process-event';
import { ProcessRequests } from '../../src/exec/process-requests';
import type { PeerScript } from '../support/fake-socket-port';
import { FakeSocketPort } from '../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../support/scripted-client';

/** A scripted executor: initialize and process/start answered, process/signal answered. */
const executor = (): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = frame['method'];
    if (typeof method !== 'string' || !('id' in frame)) return;
    if (method === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') return peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
    if (method === 'process/signal') return peer.deliver({ id: frame['id'], result: {} });
  };
  return new FakeSocketPort(script);
};

/**
 * Everything reachable from `root` through own fields, except through `shared` (the session, the
 * process list, the scheduler: every process holds them, so the walk stops there).
 */
function ownedValues(root: object, shared: ReadonlySet<unknown>): unknown[] {
  const seen = new Set<unknown>([root]);
  const queue: object[] = [root];
  const values: unknown[] = [];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const value of Object.values(next)) {
      if (shared.has(value) || seen.has(value)) continue;
      seen.add(value);
      values.push(value);
      if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) queue.push(value);
    }
  }
  return values;
}

const isEvent = (value: unknown): boolean => typeof value === 'object' && value !== null && 'type' in value && 'seq' in value;

describe('a finished process kept by its caller', () => {
  it('holds no closure, no request object and no event object, and still replays every event', async () => {
    const port = executor();
    const { client } = await connectedClient(port);
    const table = listEndingWith(client);
    const backend = new ExecBackend(client, () => ({}), table);
    const shared = new Set<unknown>([client, table, asyncScheduler]);
    const finished = async (processId: string): Promise<{ process: ExecProcess; seen: ProcessEvent[] }> => {
      const { process } = await backend.start({ processId, argv: ['echo', 'hello'], cwd: '/tmp' });
      const live = lastValueFrom(process.events$.pipe(toArray()));
      port.deliver({ method: 'process/output', params: { processId, seq: 1, stream: 'stdout', chunk: Buffer.from('hello\n').toString('base64') } });
      port.deliver({ method: 'process/exited', params: { processId, seq: 2, exitCode: 0, sandboxDenied: false } });
      port.deliver({ method: 'process/closed', params: { processId, seq: 3 } });
      const seen = await live;
      expect(process.state).toBe('closed');
      return { process, seen };
    };
    const { process, seen } = await finished('p');
    const other = await finished('q');

    const held = ownedValues(process, shared);
    // A function held by one process and not the other was made for it: a closure (module functions are shared).
    const othersHeld = new Set(ownedValues(other.process, shared));
    expect(held.filter((value) => typeof value === 'function' && !othersHeld.has(value))).toEqual([]);
    expect(held.filter((value) => value instanceof ProcessRequests)).toEqual([]);
    expect(held.filter(isEvent)).toEqual([]);
    expect(process.nextWriteId).toBe(1);
    // Its 6 bytes in a ring of exactly their size on V8's heap, not a slice of a slab of Node's pool.
    const views = held.filter((value) => ArrayBuffer.isView(value));
    expect(views.map((view) => [view.constructor.name, view.byteLength])).toEqual([['Uint8Array', 6]]);

    // The replay of what it kept: every event once, in order, equal to what the live subscriber saw.
    const replay = await lastValueFrom(process.events$.pipe(toArray()));
    expect(replay).toEqual(seen);
    expect(replay.map((event) => (event.type === 'output' ? Buffer.from(event.chunk).toString() : event.type))).toEqual(['hello\n', 'exited', 'closed']);

    // A request makes its object, once.
    await process.interrupt();
    expect(ownedValues(process, shared).filter((value) => value instanceof ProcessRequests)).toHaveLength(1);
    expect(process.nextWriteId).toBe(1);
    client.close();
  });
});
