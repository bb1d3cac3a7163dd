import type { ConnectionState } from '../../src';
import { TransportClosedError } from '../../src';
import { reportConnection } from '../../src/cli/connection-reporter';
import { testScheduler } from '../support/marbles';

const lost: ConnectionState = { state: 'disconnected', error: new TransportClosedError('remote', 1006, 'connection to accepted lost') };
const retried: ConnectionState = { state: 'disconnected', error: new TransportClosedError('remote', 1006, 'replacement refused') };
const values: Record<string, ConnectionState> = { s: { state: 'connecting' }, c: { state: 'connected' }, d: lost, e: retried };

/** Runs the reporter over `marbles` in virtual time (asyncScheduler is virtual inside run()). */
function report(marbles: string, verbose: boolean): string[] {
  const lines: string[] = [];
  testScheduler().run(({ cold, flush }) => {
    reportConnection(cold(marbles, values), (line) => lines.push(line), { verbose });
    flush();
  });
  return lines;
}

describe('reportConnection', () => {
  it('stays quiet about starting and about a drop shorter than a second', () => {
    expect(report('s c 500ms d 400ms c', false)).toEqual([]);
  });

  it('reports a drop that lasts over a second, and its end', () => {
    expect(report('s c d 1500ms c', false)).toEqual(['lost the connection to the executor (exec-server transport disconnected: connection to accepted lost); resuming', 'connection resumed after 1.5 s']);
  });

  it('reports one loss, with its first reason, while the recovery error changes', () => {
    expect(report('s c d 500ms e 999ms c', false)).toEqual(['lost the connection to the executor (exec-server transport disconnected: connection to accepted lost); resuming', 'connection resumed after 1.5 s']);
  });

  it('reports every drop at once with --verbose', () => {
    expect(report('c d 10ms c', true)).toEqual(['lost the connection to the executor (exec-server transport disconnected: connection to accepted lost); resuming', expect.stringMatching(/^connection resumed after 0\.0 s$/)]);
  });

  it('names the peer it was given, and a peer not reached yet as such', () => {
    const lines: string[] = [];
    testScheduler().run(({ cold, flush }) => {
      reportConnection(cold('s 200ms d 1500ms c 100ms d 1200ms c', values), (line) => lines.push(line), { verbose: false, peer: 'the host' });
      flush();
    });
    expect(lines).toEqual([
      'cannot reach the host yet (exec-server transport disconnected: connection to accepted lost); retrying',
      'connected after 1.5 s',
      'lost the connection to the host (exec-server transport disconnected: connection to accepted lost); resuming',
      'connection resumed after 1.2 s',
    ]);
  });
});
