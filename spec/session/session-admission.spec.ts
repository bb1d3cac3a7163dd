/**
 * The first socket's admission (`ExecClientOptions.admit`, issue 38): asked once the executor answered
 * `initialize` on it and before anything else is read, so a host claims an environment only on a socket
 * whose executor answers. A rejection fails the client and closes the socket; a process the admission
 * registers is bound and read on that socket before the client attaches; a replacement is never asked.
 */
import { Subject } from 'rxjs';
import type { Subscription } from 'rxjs';
import { StaleClaimError } from '../../src/errors';
import type { ExecClientError } from '../../src/errors';
import type { RpcConnection } from '../../src/rpc/rpc-connection';
import { ExecClient } from '../../src/session/exec-client';
import type { AdmittedSession } from '../../src/session/exec-client-options';
import type { ProcessSink } from '../../src/session/process-sink';
import type { ReadResponse } from '../../src/wire/process';
import type { PeerScript } from '../support/fake-socket-port';
import { FakeSocketPort } from '../support/fake-socket-port';

const READ: ReadResponse = { chunks: [], nextSeq: 4, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false };

/** A peer that answers initialize with `session-1` and every `process/read` with {@link READ}, logging what it got. */
const executor = (log: string[]): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = String(frame['method']);
    log.push(`peer:${method}`);
    if (method === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/read') peer.deliver({ id: frame['id'], result: READ });
  };
  return new FakeSocketPort(script);
};

/** A process as the connection layer sees it, logging what is done to it. */
class LoggedSink implements ProcessSink {
  readonly lastPublishedSeq = 3;
  constructor(
    readonly processId: string,
    private readonly log: string[],
  ) {}
  bind(_rpc: RpcConnection): Subscription {
    this.log.push(`${this.processId}:bind`);
    return new Subject<never>().subscribe();
  }
  beginRecovery(): void {
    this.log.push(`${this.processId}:beginRecovery`);
  }
  recover(read: ReadResponse): void {
    this.log.push(`${this.processId}:recover ${read.nextSeq}`);
  }
  abandon(): void {
    this.log.push(`${this.processId}:abandon`);
  }
  fail(error: ExecClientError): void {
    this.log.push(`${this.processId}:fail ${error.code}`);
  }
}

describe('the first socket\'s admission', () => {
  it('is asked once the executor answered initialize, before any read, and the client attaches only after it', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const made: { client?: ExecClient } = {};
    const admit = async (session: AdmittedSession): Promise<void> => {
      log.push(`admit ${JSON.stringify(session)} while ${made.client?.state.type ?? 'none'}`);
      await Promise.resolve();
      made.client?.addProcess(new LoggedSink('p-1', log));
    };
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {}, admit });
    made.client = client;
    const started = client.start();
    sockets.next(executor(log));
    await started;
    expect(log).toEqual([
      'peer:initialize',
      'peer:initialized',
      'admit {"sessionId":"session-1","resumed":false} while connecting',
      'p-1:bind',
      'p-1:beginRecovery',
      'peer:process/read',
      'p-1:recover 4',
    ]);
    expect(client.state.type).toBe('connected');

    // A replacement resumes the session without a word to the admission.
    log.length = 0;
    client.markRecovering('replaced');
    sockets.next(executor(log));
    await Promise.resolve();
    expect(log.filter((line) => line.startsWith('admit'))).toEqual([]);
    expect(client.state.type).toBe('connected');
    client.close();
  });

  it('says the session was resumed when it is the one asked for', async () => {
    const said: AdmittedSession[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {}, resumeSessionId: 'session-1', admit: async (session) => void said.push(session) });
    const started = client.start();
    sockets.next(executor([]));
    await started;
    expect(said).toEqual([{ sessionId: 'session-1', resumed: true }]);
    client.close();
  });

  it('fails the client with its error when it refuses, closing the socket; nothing is read', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const refusal = new StaleClaimError('env-1', 1_000, 2_000, 7);
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {}, admit: () => Promise.reject(refusal) });
    const started = client.start();
    const socket = executor(log);
    sockets.next(socket);
    await expect(started).rejects.toBe(refusal);
    expect({ state: client.state.type, closed: socket.closedWith !== undefined, log }).toEqual({ state: 'failed', closed: true, log: ['peer:initialize', 'peer:initialized'] });
  });

  it('is never asked when the executor does not answer initialize: the socket closes first', async () => {
    const asked: AdmittedSession[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {}, admit: async (session) => void asked.push(session) });
    const started = client.start();
    const silent = new FakeSocketPort();
    sockets.next(silent);
    silent.drop('the executor gave up on this socket');
    await expect(started).rejects.toBeInstanceOf(Error);
    expect(asked).toEqual([]);
    expect(client.state.type).toBe('failed');
  });
});
