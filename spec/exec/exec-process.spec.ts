import { firstValueFrom, lastValueFrom, Subject } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import { ProcessGapError, StdinClosedError, TransportClosedError } from '../../src/errors';
import { ExecBackend } from '../../src/exec/exec-backend';
import { SAFE_CHUNK_BYTES } from '../../src/wire/limits';
import type { ProcessEvent } from '../../src/exec/process-event';
import { ExecClient } from '../../src/session/exec-client';
import type { PeerScript } from '../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../support/scripted-client';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';
import { settle } from '../support/virtual-time';

type Handler = (params: Record<string, unknown>, peer: FakeSocketPort, id: unknown) => void;

/** A scripted executor: initialize answers session-1, the rest by handler (unanswered when none). */
const executor = (handlers: Record<string, Handler> = {}): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = frame['method'];
    if (typeof method !== 'string' || !('id' in frame)) return;
    if (method === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') return peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
    handlers[method]?.(frame['params'] as Record<string, unknown>, peer, frame['id']);
  };
  return new FakeSocketPort(script);
};

const output = (seq: number, text: string, stream = 'stdout'): Record<string, unknown> => ({
  method: 'process/output',
  params: { processId: 'p', seq, stream, chunk: Buffer.from(text).toString('base64') },
});
const read = (chunks: [number, string][], nextSeq: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  chunks: chunks.map(([seq, text]) => ({ seq, stream: 'stdout', chunk: Buffer.from(text).toString('base64') })),
  nextSeq,
  exited: false,
  exitCode: null,
  closed: false,
  failure: null,
  sandboxDenied: false,
  ...extra,
});

/** A process list that ends with the client, as an Environment's does. */
async function started(first: FakeSocketPort): Promise<{ client: ExecClient; sockets: Subject<FakeSocketPort>; backend: ExecBackend }> {
  const { client, sockets } = await connectedClient(first);
  return { client, sockets, backend: new ExecBackend(client, () => ({}), listEndingWith(client)) };
}

const texts = (events: ProcessEvent[]): string[] => events.flatMap((e) => (e.type === 'output' ? [`${e.seq}:${Buffer.from(e.chunk).toString()}`] : ['seq' in e ? `${e.seq}:${e.type}` : e.type]));

describe('ExecProcess over a scripted executor', () => {
  it('delivers every chunk exactly once, in order, across a replacement in the middle of the stream', async () => {
    const first = executor();
    const { client, sockets, backend } = await started(first);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const all = lastValueFrom(process.events$.pipe(toArray()));
    first.deliver(output(1, 'a'));
    first.deliver(output(2, 'b'));
    client.markRecovering('replaced');
    // seq 3 and 4 were produced while detached; the new socket redirects 4 and 5 before the read answers.
    const second = executor({
      'process/read': (params, peer, id) => {
        expect(params).toEqual({ processId: 'p', afterSeq: 2, maxBytes: null, waitMs: 0 });
        peer.deliver(output(4, 'd'));
        peer.deliver(output(5, 'e'));
        peer.deliver({ id, result: read([[3, 'c'], [4, 'd']], 5) });
        peer.deliver({ method: 'process/exited', params: { processId: 'p', seq: 6, exitCode: 0, sandboxDenied: false } });
        peer.deliver({ method: 'process/closed', params: { processId: 'p', seq: 7 } });
      },
    });
    sockets.next(second);
    expect(texts(await all)).toEqual(['1:a', '2:b', '3:c', '4:d', '5:e', '6:exited', '7:closed']);
    expect(client.processCount).toBe(0);
    client.close();
  });

  it('fails the process with a typed gap error when the executor no longer holds the missing range, and terminates it', async () => {
    const { client, sockets, backend } = await started(executor());
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    client.markRecovering('replaced');
    const terminated: unknown[] = [];
    sockets.next(
      executor({
        'process/read': (_params, peer, id) => peer.deliver({ id, result: read([[400, 'late']], 401) }),
        'process/terminate': (params, peer, id) => {
          terminated.push(params);
          peer.deliver({ id, result: { running: true } });
        },
      }),
    );
    const events = await lastValueFrom(process.events$.pipe(toArray()));
    expect(events).toEqual([{ type: 'failed', error: new ProcessGapError('p', 1, 400) }]);
    expect(terminated).toEqual([{ processId: 'p' }]);
    client.close();
  });

  it('fills a malformed notification with a read from the last published seq', async () => {
    const reads: unknown[] = [];
    const port = executor({
      'process/read': (params, peer, id) => {
        reads.push(params);
        peer.deliver({ id, result: read([[2, 'b']], 3) });
      },
    });
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const all = lastValueFrom(process.events$.pipe(toArray()));
    port.deliver(output(1, 'a'));
    port.deliver({ method: 'process/output', params: { processId: 'p', seq: 2, stream: 'stdout', chunk: '!!not base64' } });
    port.deliver(output(3, 'c'));
    port.deliver({ method: 'process/closed', params: { processId: 'p', seq: 4 } });
    expect(texts(await all)).toEqual(['1:a', '2:b', '3:c', '4:closed']);
    expect(reads).toEqual([{ processId: 'p', afterSeq: 1, maxBytes: null, waitMs: 0 }]);
    client.close();
  });

  it('fills a lost notification after the hole-fill delay (virtual time)', async () => {
    const reads: unknown[] = [];
    const port = executor({
      'process/read': (params, peer, id) => {
        reads.push(params);
        peer.deliver({ id, result: read([[1, 'a']], 3) });
      },
    });
    const { client } = await started(port);
    const scheduler = testScheduler();
    const backend = new ExecBackend(client, () => ({ holeFillDelayMs: 250, scheduler }), listEndingWith(client));
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const seen: string[] = [];
    process.events$.subscribe((e) => seen.push(...texts([e])));
    port.deliver(output(2, 'b'));
    scheduler.flush();
    expect(scheduler.now()).toBe(250);
    expect(reads).toEqual([{ processId: 'p', afterSeq: 0, maxBytes: null, waitMs: 0 }]);
    expect(seen).toEqual(['1:a', '2:b']);
    client.close();
  });

  describe('a recovery read of a process the executor is still spawning (-32600 "is starting")', () => {
    /** A client on virtual time with process `p` started, its socket replaced by one answering `starting` reads "is starting" first. */
    async function recovering(starting: number): Promise<{ reads: unknown[]; times: number[]; events: ProcessEvent[]; scheduler: ReturnType<typeof testScheduler>; client: ExecClient }> {
      const scheduler = testScheduler();
      scheduler.maxFrames = 60_000;
      const sockets = new Subject<FakeSocketPort>();
      const client = new ExecClient(sockets, { clientName: 'spec', reconnectable: true, rpc: {}, scheduler });
      const ready = client.start();
      sockets.next(executor());
      await ready;
      const backend = new ExecBackend(client, () => ({}), listEndingWith(client));
      const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
      const events: ProcessEvent[] = [];
      process.events$.subscribe((event) => events.push(event));
      client.markRecovering('replaced');
      const reads: unknown[] = [];
      const times: number[] = [];
      sockets.next(
        executor({
          'process/read': (params, peer, id) => {
            reads.push(params);
            times.push(scheduler.now());
            if (reads.length <= starting) peer.deliver({ id, error: { code: -32600, message: 'process id p is starting' } });
            else peer.deliver({ id, result: read([[1, 'a']], 2) });
          },
        }),
      );
      return { reads, times, events, scheduler, client };
    }

    it('reads it again every 100 ms until it answers, and the process goes on', async () => {
      const { reads, times, events, scheduler, client } = await recovering(2);
      expect(reads).toHaveLength(1);
      scheduler.flush();
      expect(reads).toEqual([1, 2, 3].map(() => ({ processId: 'p', afterSeq: 0, maxBytes: null, waitMs: 0 })));
      expect(times).toEqual([0, 100, 200]);
      expect(texts(events)).toEqual(['1:a']);
      expect(client.processCount).toBe(1);
      client.close();
    });

    it('fails the process with the executor\'s error once 30 reads again still found it starting', async () => {
      const { reads, times, events, scheduler, client } = await recovering(1_000);
      scheduler.flush();
      expect(reads).toHaveLength(31);
      expect(times.at(-1)).toBe(3_000);
      expect(events.map((event) => [event.type, 'error' in event ? event.error.message : ''])).toEqual([
        ['failed', 'process p failed: exec-server rejected process/read (-32600): process id p is starting'],
      ]);
      client.close();
    });
  });

  it('fills a hole of a process the executor still says is starting once it answers: asked again after each delay (virtual time)', async () => {
    const reads: number[] = [];
    const scheduler = testScheduler();
    const port = executor({
      'process/read': (_params, peer, id) => {
        reads.push(scheduler.now());
        if (reads.length <= 2) peer.deliver({ id, error: { code: -32600, message: 'process id p is starting' } });
        else peer.deliver({ id, result: read([[1, 'a']], 3) });
      },
    });
    const { client } = await started(port);
    const backend = new ExecBackend(client, () => ({ holeFillDelayMs: 250, scheduler }), listEndingWith(client));
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const seen: string[] = [];
    process.events$.subscribe({ next: (e) => seen.push(...texts([e])), error: (error: unknown) => seen.push(String(error)) });
    port.deliver(output(2, 'b'));
    // Each answer comes back through a promise: flush the clock again once it did.
    for (let turn = 0; turn < 4; turn += 1) {
      scheduler.flush();
      await settle();
    }
    expect(reads).toEqual([250, 500, 750]);
    expect(seen).toEqual(['1:a', '2:b']);
    client.close();
  });

  it('sends a write again after a reconnect with the same writeId', async () => {
    const first = executor({ 'process/write': () => undefined });
    const { client, sockets, backend } = await started(first);
    const { process } = await backend.start({ processId: 'p', argv: ['cat'], cwd: '/tmp', pipeStdin: true });
    const writing = process.write('hello\n');
    first.drop('gone');
    const writes: unknown[] = [];
    sockets.next(
      executor({
        'process/read': (_p, peer, id) => peer.deliver({ id, result: read([], 1) }),
        'process/write': (params, peer, id) => {
          writes.push(params);
          peer.deliver({ id, result: { status: 'accepted' } });
        },
      }),
    );
    await expect(writing).resolves.toBeUndefined();
    const sentFirst = first.sent.filter((m) => m['method'] === 'process/write').map((m) => m['params']);
    expect(sentFirst).toEqual([{ processId: 'p', chunk: 'aGVsbG8K', writeId: '1' }]);
    expect(writes).toEqual(sentFirst);
    client.close();
  });

  it.each(['stdinClosed', 'unknownProcess', 'starting'] as const)('rejects a write the executor answers %s with StdinClosedError (STDIN_CLOSED, as the operator API says it), sending no later chunk', async (status) => {
    const writes: unknown[] = [];
    const { client, backend } = await started(
      executor({
        'process/write': (params, peer, id) => {
          writes.push(params);
          peer.deliver({ id, result: { status } });
        },
      }),
    );
    const { process } = await backend.start({ processId: 'p', argv: ['cat'], cwd: '/tmp' });
    const refused = await process.write(new Uint8Array(SAFE_CHUNK_BYTES + 1)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StdinClosedError);
    expect(refused).toMatchObject({ code: 'STDIN_CLOSED', processId: 'p', status, message: `process p did not take the write: the executor answered ${status}` });
    expect(writes.length).toBe(1);
    client.close();
  });

  it('drops what the reorder buffer cannot hold while a recovery read is out, and publishes all of it once the read brings it: no overflow', async () => {
    const first = executor();
    const { client, sockets, backend } = await started(first);
    const { process } = await backend.start({ processId: 'p', argv: ['yes'], cwd: '/tmp' });
    const seen: ProcessEvent[] = [];
    process.events$.subscribe((event) => seen.push(event));
    first.drop('gone');
    // The executor went on while nobody was attached: seqs 1..300. Its answer to the recovery read comes
    // after 300 notifications of what it kept producing, more than the buffer holds (256).
    const lines: [number, string][] = Array.from({ length: 600 }, (_, i) => [i + 1, `line ${i + 1}\n`]);
    sockets.next(
      executor({
        'process/read': (_params, peer, id) => {
          for (const [seq, text] of lines.slice(300)) peer.deliver(output(seq, text));
          peer.deliver({ id, result: read(lines, 601) });
        },
      }),
    );
    await firstValueFrom(process.events$.pipe(filter((event) => 'seq' in event && event.seq === 600)));
    expect({ state: process.state, failure: process.failure?.message, seqs: seen.map((e) => ('seq' in e ? e.seq : e.type)) }).toEqual({ state: 'running', failure: undefined, seqs: lines.map(([seq]) => seq) });
    expect(Buffer.concat(seen.flatMap((e) => (e.type === 'output' ? [Buffer.from(e.chunk)] : []))).toString()).toBe(lines.map(([, text]) => text).join(''));
    client.close();
  });

  it('waits locally for a read with waitMs, so other calls are not held up behind it', async () => {
    const port = executor({
      'process/read': (params, peer, id) => peer.deliver({ id, result: read([[1, 'a']], 2) }),
      'environment/status': (_p, peer, id) => peer.deliver({ id, result: { status: 'ready' } }),
    });
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const reading = process.read(0, null, 60_000);
    await expect(firstValueFrom(client.call('environment/status', undefined))).resolves.toEqual({ status: 'ready' });
    expect(port.sent.filter((m) => m['method'] === 'process/read')).toEqual([]);
    port.deliver(output(1, 'a'));
    await expect(reading).resolves.toMatchObject({ nextSeq: 2 });
    expect(port.sent.filter((m) => m['method'] === 'process/read').map((m) => m['params'])).toEqual([{ processId: 'p', afterSeq: 0, maxBytes: null, waitMs: 0 }]);
    client.close();
  });

  it('does not send a start again when its socket died before the reply, and terminates that id once reconnected', async () => {
    const first = new FakeSocketPort((frame, peer) => {
      if (frame['method'] === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    });
    const { client, sockets, backend } = await started(first);
    const starting = backend.start({ processId: 'maybe', argv: ['x'], cwd: '/tmp' }).then(() => undefined, (e: unknown) => e);
    first.drop('gone');
    expect(await starting).toBeInstanceOf(TransportClosedError);
    const terminated: unknown[] = [];
    const second = executor({
      'process/terminate': (params, peer, id) => {
        terminated.push(params);
        peer.deliver({ id, result: { running: true } });
      },
    });
    sockets.next(second);
    await Promise.resolve();
    expect(second.sent.filter((m) => m['method'] === 'process/start')).toEqual([]);
    expect(terminated).toEqual([{ processId: 'maybe' }]);
    client.close();
  });

  it('leaves no route, subscription or pending call once closed and unsubscribed', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const state = client.state;
    if (state.type !== 'connected') throw new Error('expected connected');
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const subscription = process.events$.subscribe();
    expect(state.rpc.processRouteCount).toBe(1);
    port.deliver(output(1, 'a'));
    port.deliver({ method: 'process/exited', params: { processId: 'p', seq: 2, exitCode: 3, sandboxDenied: false } });
    port.deliver({ method: 'process/closed', params: { processId: 'p', seq: 3 } });
    subscription.unsubscribe();
    process.release();
    expect({ routes: state.rpc.processRouteCount, pending: state.rpc.pendingCount, processes: client.processCount, retained: process.retained }).toEqual({
      routes: 0,
      pending: 0,
      processes: 0,
      retained: { events: 0, bytes: 0, subscribers: 0 },
    });
    expect(process.exitCode).toBe(3);
    client.close();
  });
});
