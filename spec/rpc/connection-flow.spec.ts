import { mergeMap } from 'rxjs/operators';
import { RequestTimeoutError, TransportClosedError } from '../../src/errors';
import type { FlowTarget } from '../../src/rpc/connection-flow';
import { ConnectionFlow } from '../../src/rpc/connection-flow';
import type { ProcessWireEvent } from '../../src/rpc/notification-router';
import { RpcConnection } from '../../src/rpc/rpc-connection';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

/** A reading side that logs what the flow does to it, with the virtual time. */
const recordingTarget = (log: string[], name: string, now: () => number): FlowTarget => ({
  pauseReading: () => log.push(`${name} paused @${now()}`),
  resumeReading: () => log.push(`${name} resumed @${now()}`),
});

describe('ConnectionFlow (reference-counted holds)', () => {
  it('pauses on the first hold, resumes when the last is released, and counts pauses and paused time', () => {
    const scheduler = testScheduler();
    const flow = new ConnectionFlow(scheduler);
    const log: string[] = [];
    const paused: boolean[] = [];
    flow.paused$.subscribe((p) => paused.push(p));
    flow.attach(recordingTarget(log, 'socket', () => scheduler.now()));
    const a = flow.hold();
    let b = flow.hold();
    scheduler.schedule(() => a.release(), 10);
    scheduler.schedule(() => a.release(), 15); // released twice: counts once
    scheduler.schedule(() => b.release(), 20);
    scheduler.schedule(() => (b = flow.hold()), 100);
    scheduler.schedule(() => {
      expect(flow.facts).toEqual({ paused: true, holds: 1, pauses: 2, pausedMs: 20 + 50 });
      b.release();
    }, 150);
    scheduler.flush();
    expect(log).toEqual(['socket paused @0', 'socket resumed @20', 'socket paused @100', 'socket resumed @150']);
    expect(paused).toEqual([false, true, false, true, false]);
    expect(flow.facts).toEqual({ paused: false, holds: 0, pauses: 2, pausedMs: 70 });
  });

  it('counts holds without a socket and pauses the socket attached next at once (a replacement carries the pause over)', () => {
    const scheduler = testScheduler();
    const flow = new ConnectionFlow(scheduler);
    const log: string[] = [];
    const hold = flow.hold();
    expect(flow.facts).toEqual({ paused: false, holds: 1, pauses: 0, pausedMs: 0 });
    const detachFirst = flow.attach(recordingTarget(log, 'first', () => scheduler.now()));
    scheduler.schedule(() => {
      detachFirst();
      expect(flow.paused).toBe(false);
    }, 30);
    scheduler.schedule(() => flow.attach(recordingTarget(log, 'second', () => scheduler.now())), 40);
    scheduler.schedule(() => hold.release(), 100);
    scheduler.flush();
    // The retired socket is left paused (it is closing); the replacement is paused until the hold goes.
    expect(log).toEqual(['first paused @0', 'second paused @40', 'second resumed @100']);
    expect(flow.facts).toEqual({ paused: false, holds: 0, pauses: 2, pausedMs: 30 + 60 });
  });
});

describe('RpcConnection held paused (virtual time)', () => {
  it('pauses again when what resuming hands over takes a new hold', () => {
    const port = new FakeSocketPort();
    const rpc = new RpcConnection(port);
    const seqs: number[] = [];
    let again: { release(): void } | undefined;
    rpc.routeProcess('p1', {
      next: (event) => {
        if (event.type !== 'output') return;
        seqs.push(event.seq);
        if (event.seq === 1) again = rpc.flow.hold();
      },
      complete: () => undefined,
    });
    rpc.open();
    const hold = rpc.flow.hold();
    for (const seq of [1, 2, 3]) port.deliver({ method: 'process/output', params: { processId: 'p1', seq, stream: 'stdout', chunk: 'eQo=' } });
    hold.release();
    expect(seqs).toEqual([1]);
    expect({ paused: port.paused, held: port.heldCount, facts: rpc.flow.facts }).toMatchObject({ paused: true, held: 2, facts: { paused: true, holds: 1, pauses: 2 } });
    again?.release();
    expect(seqs).toEqual([1, 2, 3]);
    expect(port.paused).toBe(false);
    expect(rpc.flow.facts).toMatchObject({ paused: false, holds: 0, pauses: 2 });
    rpc.close();
  });

  it('survives a 60 s stall: the socket is not dropped, no call times out, nothing is lost; an unanswered ping then still drops it', () => {
    const scheduler = testScheduler();
    const port = new FakeSocketPort();
    const rpc = new RpcConnection(port, { keepalive: { intervalMs: 30_000, timeoutMs: 10_000 }, requestTimeoutMs: 30_000 });
    const routed: string[] = [];
    const route = (event: ProcessWireEvent): void => void routed.push(`${event.type} ${'seq' in event ? event.seq : ''} @${scheduler.now()}`);
    rpc.routeProcess('p1', { next: route, complete: () => undefined });
    const facts: unknown[] = [];
    scheduler.run(({ cold, expectObservable }) => {
      rpc.open();
      const output = (seq: number): unknown => ({ method: 'process/output', params: { processId: 'p1', seq, stream: 'stdout', chunk: 'eQo=' } });
      cold('1s a').subscribe(() => {
        const hold = rpc.flow.hold();
        cold('60s a').subscribe(() => {
          facts.push({ ...rpc.flow.facts, held: port.heldCount });
          hold.release();
        });
      });
      // The executor answers and writes output while nobody reads the socket.
      cold('2s a').subscribe(() => port.deliver({ id: 1, result: { status: 'ready' } }));
      cold('3s a').subscribe(() => port.deliver(output(1)));
      cold('4s a').subscribe(() => port.deliver(output(2)));
      // The first ping goes out after 30 s of reading (at 90 s) and is answered; the second is not.
      cold('90001ms a').subscribe(() => port.pong());
      expectObservable(rpc.request('environment/status', undefined)).toBe('61s (a|)', { a: { status: 'ready' } });
      expectObservable(rpc.closed$).toBe('130s (a|)', { a: new TransportClosedError('remote', 1006, 'no pong from fake within 10000ms') });
    });
    expect(facts).toEqual([{ paused: true, holds: 1, pauses: 1, pausedMs: 60_000, held: 3 }]);
    expect(routed).toEqual(['output 1 @61000', 'output 2 @61000']);
    expect(port.pings).toBe(2);
    expect(port.pauses).toBe(1);
    expect(rpc.flow.facts).toEqual({ paused: false, holds: 0, pauses: 1, pausedMs: 60_000 });
  });

  it('does not count paused time against a ping waiting for its pong', () => {
    const port = new FakeSocketPort();
    const rpc = new RpcConnection(port, { keepalive: { intervalMs: 30_000, timeoutMs: 10_000 } });
    testScheduler().run(({ cold, expectObservable }) => {
      rpc.open();
      // The ping at 30 s waits 5 s, then 60 s paused, then 5 s more: dropped at 100 s, not 40 s.
      cold('35s a').subscribe(() => {
        const hold = rpc.flow.hold();
        cold('60s a').subscribe(() => hold.release());
      });
      expectObservable(rpc.closed$).toBe('100s (a|)', { a: new TransportClosedError('remote', 1006, 'no pong from fake within 10000ms') });
    });
    expect(port.pings).toBe(1);
  });

  it('runs a call deadline only while the socket is read', () => {
    const port = new FakeSocketPort();
    const rpc = new RpcConnection(port);
    testScheduler().run(({ cold, expectObservable }) => {
      rpc.open();
      cold('1s a').subscribe(() => {
        const hold = rpc.flow.hold();
        cold('60s a').subscribe(() => hold.release());
      });
      // 1 s before the pause, 4 s after it: 65 s.
      expectObservable(rpc.request('fs/readFile', { path: 'file:///x' }, { timeoutMs: 5_000 })).toBe('65s #', undefined, new RequestTimeoutError('fs/readFile', 5_000));
      // Armed while paused (at 30 s): its 5 s start on resume.
      const late = cold('30s a').pipe(mergeMap(() => rpc.request('fs/readFile', { path: 'file:///y' }, { timeoutMs: 5_000 })));
      expectObservable(late).toBe('66s #', undefined, new RequestTimeoutError('fs/readFile', 5_000));
    });
  });
});
