/**
 * `HostServer.monitor`: the figures of the moment and the events as they happen, read from a real host
 * with a real executor joined; and the host's log line for each kind of diagnostic.
 */
import { firstValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import { RpcError, DecodeError, TransportClosedError } from '../../src/errors';
import type { HostEvent } from '../../src/host/hosted-environment';
import { describeDiagnostic } from '../../src/host/host-monitor';
import { paths, within } from './api/api-client';
import { startApiHost, startProcess } from './api/api-host';

describe('the host monitor', () => {
  it('counts environments, processes, history and event streams, and tells each state change as it happens', async () => {
    const { host, environmentId, api } = await startApiHost({ environmentId: 'monitor-1' });
    expect(host.monitor.facts()).toMatchObject({
      environments: { starting: 0, connecting: 0, connected: 1, disconnected: 0, failed: 0, closed: 0 },
      processes: { running: 0, exited: 0, closed: 0, failed: 0 },
      pendingCalls: 0,
      eventStreams: 0,
    });

    const started = await startProcess(api, environmentId, { argv: ['sh', '-c', 'printf hello; read line'], pipeStdin: true });
    const opened = await api.events(paths.events(environmentId, started.id));
    if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
    await opened.stream.next((event) => event.event === 'output');
    // The command's process, and the FIFO helper that feeds its stdin (listed apart, unlisted for the API).
    const facts = host.monitor.facts();
    expect(facts.processes.running).toBeGreaterThanOrEqual(1);
    expect(facts).toMatchObject({ eventStreams: 1, historySubscribers: expect.any(Number) });
    expect(facts.retainedBytes).toBeGreaterThanOrEqual(5);
    expect(facts.processRoutes).toBeGreaterThanOrEqual(1);
    await opened.stream.close();
    await within(firstValueFrom(host.monitor.facts$(10).pipe(filter((f) => f.eventStreams === 0))), 10_000, 'the stream leaving the count');

    const states = firstValueFrom(
      host.monitor.events$.pipe(
        filter((event): event is Extract<HostEvent, { type: 'state' }> => event.type === 'state'),
        take(2),
        toArray(),
      ),
    );
    expect(host.dropSocket(environmentId)).toBe(true);
    expect(await within(states, 30_000, 'the reconnect')).toEqual([
      { type: 'state', environmentId, generation: 1, state: 'disconnected', errorCode: 'TRANSPORT_CLOSED' },
      { type: 'state', environmentId, generation: 1, state: 'connected', errorCode: undefined },
    ]);
  });

  it('completes its streams when the host closes', async () => {
    const { host } = await startApiHost({ environmentId: 'monitor-2' });
    const events = firstValueFrom(host.monitor.events$.pipe(toArray()));
    const ticks = firstValueFrom(host.monitor.facts$(5).pipe(toArray()));
    await host.close();
    // Both complete (a stream left open would hold `within` to its limit), the facts after one tick at least.
    const told = await within(events, 5_000, 'events$ completing on close');
    expect(told.every((event) => event.environmentId === 'monitor-2')).toBe(true);
    expect((await within(ticks, 5_000, 'facts$ completing on close')).length).toBeGreaterThanOrEqual(1);
  });
});

describe('describeDiagnostic', () => {
  it('names each kind of diagnostic by what identifies it, never by a frame content', () => {
    const secretFrame = 'token=do-not-print-this';
    const lines = [
      describeDiagnostic({ type: 'unparsableFrame', error: new DecodeError('JSON', [secretFrame]) }),
      describeDiagnostic({ type: 'unattributedError', error: new RpcError('unknown', -32700, secretFrame) }),
      describeDiagnostic({ type: 'unknownResponse', id: 7 }),
      describeDiagnostic({ type: 'malformedNotification', method: 'process/exited', error: new DecodeError('params', [secretFrame]) }),
      describeDiagnostic({ type: 'unknownNotification', method: `x/${'y'.repeat(200)}` }),
      describeDiagnostic({ type: 'serverRequestFailed', method: 'network/policyRequest', error: new TransportClosedError('remote', 1006, secretFrame) }),
    ];
    expect(lines).toEqual([
      'an unparsable frame from the executor (ignored)',
      'the executor could not parse a message we sent (-32700)',
      'a reply to id 7, which no call awaits (ignored)',
      'a process/exited notification that failed its codec (ignored)',
      `an unknown notification ${JSON.stringify(`x/${'y'.repeat(62)}`)} (ignored)`,
      'the executor\'s "network/policyRequest" request could not be answered well (TRANSPORT_CLOSED)',
    ]);
    for (const line of lines) expect(line).not.toContain('do-not-print');
  });
});
