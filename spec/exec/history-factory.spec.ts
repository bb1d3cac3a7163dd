/**
 * The output-history seam: whoever starts a process supplies its history (a HistoryFactory), and the
 * process appends its events there and its readers replay from it. The history here is written against
 * the OutputHistory port alone and keeps every event until released, as a disk log would.
 */
import type { Subscriber } from 'rxjs';
import { lastValueFrom, Observable } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { EnvironmentManager } from '../../src/environment/environment-manager';
import { ExecBackend } from '../../src/exec/exec-backend';
import type { HistoryFactory, HistoryInput, HistoryLaunch, OutputHistory } from '../../src/exec/output-history';
import type { FailedEvent, ProcessEvent } from '../../src/exec/process-event';
import { ProcessTable } from '../../src/exec/process-table';
import type { ExecClient } from '../../src/session/exec-client';
import type { SequencedEvent } from '../../src/wire/process-event';
import { FakeSocketPort } from '../support/fake-socket-port';
import { connectedClient } from '../support/scripted-client';

/** Payload bytes an event holds (what a history counts as retained). */
const eventBytes = (event: ProcessEvent): number => (event.type === 'output' ? event.chunk.byteLength : 0);

/** Keeps every event until released; records what its owner wrote and whether it released it. */
class KeepAllHistory implements OutputHistory {
  /** Every append, in call order. */
  readonly appended: HistoryInput[] = [];
  released = false;
  private held: SequencedEvent[] = [];
  private dropped = 0;
  private droppedBytes = 0;
  private lastSeq = 0;
  private end: 'closed' | FailedEvent | undefined;
  /** Live subscribers, each with the seq it wants events after. */
  private readonly live = new Map<Subscriber<ProcessEvent>, number>();

  get historyStartSeq(): number {
    return this.held[0]?.seq ?? this.lastSeq + 1;
  }

  get retainedEvents(): number {
    return this.held.length;
  }

  get retainedBytes(): number {
    return this.held.reduce((sum, event) => sum + eventBytes(event), 0);
  }

  get subscriberCount(): number {
    return this.live.size;
  }

  append(event: HistoryInput): void {
    if (this.end !== undefined) return;
    if (event.type === 'truncated') return; // an adopted process's hole: not used by these specs
    this.appended.push(event);
    if (event.type !== 'failed') {
      this.lastSeq = event.seq;
      if (!this.released) this.held.push(event);
      else this.drop([event]);
    }
    for (const [subscriber, afterSeq] of [...this.live]) if (event.type === 'failed' || event.seq > afterSeq) subscriber.next(event);
    if (event.type !== 'closed' && event.type !== 'failed') return;
    this.end = event.type === 'closed' ? 'closed' : event;
    for (const subscriber of [...this.live.keys()]) subscriber.complete();
    this.live.clear();
  }

  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    return new Observable<ProcessEvent>((subscriber) => {
      const nextSeq = this.historyStartSeq;
      if (this.dropped > 0 && afterSeq + 1 < nextSeq) subscriber.next({ type: 'truncated', nextSeq, droppedEvents: this.dropped, droppedBytes: this.droppedBytes });
      for (const event of this.held) if (event.seq > afterSeq) subscriber.next(event);
      if (this.end !== undefined) {
        if (this.end !== 'closed') subscriber.next(this.end);
        subscriber.complete();
        return undefined;
      }
      this.live.set(subscriber, afterSeq);
      return () => this.live.delete(subscriber);
    });
  }

  release(): void {
    this.released = true;
    this.drop(this.held);
    this.held = [];
  }

  private drop(events: readonly SequencedEvent[]): void {
    this.dropped += events.length;
    for (const event of events) this.droppedBytes += eventBytes(event);
  }
}

/** A factory of KeepAllHistory that keeps what it made, by process id. */
function keepAll(): { readonly factory: HistoryFactory; readonly made: Map<string, KeepAllHistory> } {
  const made = new Map<string, KeepAllHistory>();
  const factory: HistoryFactory = (processId) => {
    const history = new KeepAllHistory();
    made.set(processId, history);
    return history;
  };
  return { factory, made };
}

/** A scripted executor: answers initialize and process/start, nothing else. */
const executor = (): FakeSocketPort =>
  new FakeSocketPort((frame, peer) => {
    const method = frame['method'];
    if (method === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
  });

const output = (processId: string, seq: number, text: string): Record<string, unknown> => ({
  method: 'process/output',
  params: { processId, seq, stream: 'stdout', chunk: Buffer.from(text).toString('base64') },
});
const exited = (processId: string, seq: number): Record<string, unknown> => ({ method: 'process/exited', params: { processId, seq, exitCode: 0, sandboxDenied: false } });
const closed = (processId: string, seq: number): Record<string, unknown> => ({ method: 'process/closed', params: { processId, seq } });

const texts = (events: readonly ProcessEvent[]): string[] =>
  events.map((e) => (e.type === 'output' ? `${e.seq}:${Buffer.from(e.chunk).toString()}` : e.type === 'truncated' ? `truncated:${e.nextSeq}` : 'seq' in e ? `${e.seq}:${e.type}` : e.type));
const all = (events$: Observable<ProcessEvent>): Promise<ProcessEvent[]> => lastValueFrom(events$.pipe(toArray()));

async function connected(port: FakeSocketPort): Promise<ExecClient> {
  return (await connectedClient(port)).client;
}

describe('a history factory supplied by whoever starts the process', () => {
  it('gets each event appended in seq order, and the process reads every view from it, live and late', async () => {
    const port = executor();
    const client = await connected(port);
    const { factory, made } = keepAll();
    // The default history would keep one event: the supplied factory makes its bounds moot.
    const backend = new ExecBackend(client, () => ({ outputHistory: factory, historyEvents: 1, historyBytes: 1 }), new ProcessTable());
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const history = made.get('p');
    const live = all(process.events$);
    expect(history?.subscriberCount).toBe(1);

    port.deliver(output('p', 1, 'a'));
    port.deliver(output('p', 2, 'b'));
    port.deliver(exited('p', 3));
    port.deliver(closed('p', 4));

    expect({ made: [...made.keys()], appended: texts(history?.appended ?? []) }).toEqual({ made: ['p'], appended: ['1:a', '2:b', '3:exited', '4:closed'] });
    expect(texts(await live)).toEqual(['1:a', '2:b', '3:exited', '4:closed']);
    // Late readers, after the close, replay from the supplied history.
    expect(texts(await all(process.events$))).toEqual(['1:a', '2:b', '3:exited', '4:closed']);
    expect(texts(await all(process.eventsAfter$(2)))).toEqual(['3:exited', '4:closed']);
    expect(await process.collect()).toEqual({ stdout: 'ab', stderr: '', pty: '', exitCode: 0 });
    expect({ start: process.historyStartSeq, retained: process.retained }).toEqual({ start: 1, retained: { events: 4, bytes: 2, subscribers: 0 } });

    // The process releases it (its list, hearing of it, releases it again: idempotent); a later reader
    // gets only the marker of what it no longer holds.
    process.release();
    expect(history?.released).toBe(true);
    expect(texts(await all(process.events$))).toEqual(['truncated:5']);
    client.close();
  });

  it('is passed by an EnvironmentManager (the seam the host uses) to every process its environment starts', async () => {
    const port = executor();
    const { factory, made } = keepAll();
    const manager = await EnvironmentManager.fromAcceptedWebsocket('env', port, { clientName: 'spec', keepalive: false, outputHistory: factory });
    const backend = manager.defaultEnvironment()?.getExecBackend();
    const one = await backend?.start({ processId: 'one', argv: ['x'], cwd: '/tmp' });
    const two = await backend?.start({ processId: 'two', argv: ['y'], cwd: '/tmp' });

    port.deliver(output('one', 1, 'a'));
    port.deliver(output('two', 1, 'b'));
    port.deliver(output('one', 2, 'c'));

    expect([...made.keys()]).toEqual(['one', 'two']);
    expect({ one: texts(made.get('one')?.appended ?? []), two: texts(made.get('two')?.appended ?? []) }).toEqual({ one: ['1:a', '2:c'], two: ['1:b'] });
    const replay: ProcessEvent[] = [];
    one?.process.eventsAfter$(1).subscribe((event) => replay.push(event)).unsubscribe();
    expect({ replay: texts(replay), retained: one?.process.retained }).toEqual({ replay: ['2:c'], retained: { events: 2, bytes: 2, subscribers: 0 } });

    // Closing the manager fails the running processes: the failure ends each supplied history too.
    await manager.close();
    expect({ one: texts(made.get('one')?.appended ?? []), two: texts(made.get('two')?.appended ?? []), state: two?.process.state }).toEqual({
      one: ['1:a', '2:c', 'failed'],
      two: ['1:b', 'failed'],
      state: 'failed',
    });
  });

  it('is told how a listed process was started (argv, tty), and nothing for an unlisted one', async () => {
    const port = executor();
    const client = await connected(port);
    const launches = new Map<string, HistoryLaunch | undefined>();
    const { factory } = keepAll();
    const telling: HistoryFactory = (processId, launch) => {
      launches.set(processId, launch);
      return factory(processId);
    };
    const backend = new ExecBackend(client, () => ({ outputHistory: telling }), new ProcessTable());
    const started = [
      await backend.start({ processId: 'listed', argv: ['make', 'all'], cwd: '/tmp' }),
      await backend.start({ processId: 'pty', argv: ['top'], cwd: '/tmp', tty: true }),
      await backend.send({ processId: 'helper', argv: ['mkfifo', '/tmp/f'], cwd: '/tmp' }, { unlisted: true }),
      await backend.send({ processId: 'shown-as', argv: ['sh', '-c', 'wrapped'], cwd: '/tmp' }, { listedArgv: ['cat'] }),
    ];
    expect(Object.fromEntries(launches)).toEqual({
      listed: { argv: ['make', 'all'], tty: false },
      pty: { argv: ['top'], tty: true },
      helper: undefined,
      'shown-as': { argv: ['cat'], tty: false },
    });
    client.close();
    for (const { process } of started) process.release(); // the list keeps an ended process for a while: no timer left behind
  });

  it('releases the history of a start the executor refused: whoever keeps histories lists nothing of it', async () => {
    const refusing = new FakeSocketPort((frame, peer) => {
      const method = frame['method'];
      if (method === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
      if (method === 'process/start') peer.deliver({ id: frame['id'], error: { code: -32603, message: 'No such file or directory (os error 2)', data: { kind: 'spawnNotFound' } } });
    });
    const client = await connected(refusing);
    const { factory, made } = keepAll();
    const backend = new ExecBackend(client, () => ({ outputHistory: factory }), new ProcessTable());
    await expect(backend.start({ processId: 'missing', argv: ['no-such-program'], cwd: '/tmp' })).rejects.toMatchObject({ code: 'SPAWN_FAILED' });
    expect({ made: [...made.keys()], released: made.get('missing')?.released }).toEqual({ made: ['missing'], released: true });
    client.close();
  });

  it('holds the start until a history that keeps the process elsewhere is ready (a disk log naming it): then process/start is sent', async () => {
    const port = executor();
    const client = await connected(port);
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const { factory, made } = keepAll();
    const waiting: HistoryFactory = (processId) => Object.assign(factory(processId), { ready: () => ready });
    const backend = new ExecBackend(client, () => ({ outputHistory: waiting }), new ProcessTable());
    const starts = (): unknown[] => port.sent.filter((frame) => frame['method'] === 'process/start');

    const starting = backend.start({ processId: 'durable', argv: ['make'], cwd: '/tmp' });
    // Nothing else can let the start go: it waits on `ready` alone, which nothing resolves yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect({ made: [...made.keys()], starts: starts().length }).toEqual({ made: ['durable'], starts: 0 });

    markReady();
    const { process } = await starting;
    expect(starts()).toEqual([expect.objectContaining({ params: expect.objectContaining({ processId: 'durable' }) })]);
    client.close();
    process.release();
  });
});
