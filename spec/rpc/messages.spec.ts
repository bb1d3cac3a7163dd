import { DecodeError, TransportClosedError } from '../../src/errors';
import type { Diagnostic } from '../../src/rpc/diagnostics';
import { RpcConnection } from '../../src/rpc/rpc-connection';
import type { Inbound } from '../../src/wire/jsonrpc';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

/** Everything one subscriber of messages$ saw, completion included. */
interface Seen {
  readonly messages: Inbound[];
  completed: boolean;
  errored: unknown;
}

const watch = (rpc: RpcConnection): Seen => {
  const seen: Seen = { messages: [], completed: false, errored: undefined };
  rpc.messages$.subscribe({
    next: (m) => seen.messages.push(m),
    complete: () => {
      seen.completed = true;
    },
    error: (e: unknown) => {
      seen.errored = e;
    },
  });
  return seen;
};

const opened = (port: FakeSocketPort): { rpc: RpcConnection; diagnostics: Diagnostic[] } => {
  const rpc = new RpcConnection(port);
  const diagnostics: Diagnostic[] = [];
  rpc.diagnostics$.subscribe((d) => diagnostics.push(d));
  rpc.open();
  return { rpc, diagnostics };
};

describe('RpcConnection.messages$', () => {
  it('emits each decoded message once, in arrival order, parsed once and shared by every subscriber', () => {
    const port = new FakeSocketPort();
    const { rpc } = opened(port);
    const first = watch(rpc);
    const second = watch(rpc);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      port.deliver({ id: 1, result: { status: 'ready' } });
      port.deliver({ method: 'fs/missingChanged', params: { watchId: 4 }, jsonrpc: '2.0' });
      port.deliverBinary(Buffer.from(JSON.stringify({ id: 2, error: { code: -32600, message: 'no' } })));
      expect(parse).toHaveBeenCalledTimes(3);
    } finally {
      parse.mockRestore();
    }
    port.deliver({ id: 7, method: 'bogus/ask', params: {} });
    expect(first.messages).toEqual([
      { type: 'response', id: 1, result: { status: 'ready' } },
      { type: 'notification', method: 'fs/missingChanged', params: { watchId: 4 } },
      { type: 'error', id: 2, error: { code: -32600, message: 'no' } },
      { type: 'request', id: 7, method: 'bogus/ask', params: {} },
    ]);
    expect(second.messages).toHaveLength(4);
    second.messages.forEach((m, i) => expect(m).toBe(first.messages[i]));
  });

  it('does not emit frames that fail to parse; they go to diagnostics and the messages around them are emitted', () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = opened(port);
    const seen = watch(rpc);
    port.deliver({ method: 'a/b' });
    port.deliver('{not json');
    port.deliver([1, 2]);
    port.deliver({ id: 1.5, result: {} });
    port.deliver({ id: 3, result: null });
    expect(seen.messages).toEqual([
      { type: 'notification', method: 'a/b', params: undefined },
      { type: 'response', id: 3, result: null },
    ]);
    expect(diagnostics).toEqual([
      { type: 'unknownNotification', method: 'a/b' },
      { type: 'unparsableFrame', error: expect.any(DecodeError) },
      { type: 'unparsableFrame', error: expect.any(DecodeError) },
      { type: 'unparsableFrame', error: expect.any(DecodeError) },
      { type: 'unknownResponse', id: 3 },
    ]);
  });

  it('emits a reply before the call it answers settles', async () => {
    const port = new FakeSocketPort();
    const { rpc } = opened(port);
    const order: string[] = [];
    rpc.messages$.subscribe((m) => order.push(`message ${m.type} (pending ${rpc.pendingCount})`));
    const call = rpc.call('environment/status', undefined).then((r) => order.push(`result ${JSON.stringify(r)}`));
    rpc.request('process/terminate', { processId: 'p' }).subscribe((r) => order.push(`request ${JSON.stringify(r)}`));
    port.deliver({ id: 2, result: { running: false } });
    port.deliver({ id: 1, result: { status: 'ready' } });
    await call;
    expect(order).toEqual(['message response (pending 2)', 'request {"running":false}', 'message response (pending 1)', 'result {"status":"ready"}']);
  });

  it('gives a late subscriber only the messages that arrive after it subscribed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const port = new FakeSocketPort();
      const { rpc } = opened(port);
      cold('-a-b--c-d|', { a: 1, b: 2, c: 3, d: 4 }).subscribe((n) => port.deliver({ method: 'm', params: n }));
      cold('---------a').subscribe(() => port.drop());
      const n = (params: number): Inbound => ({ type: 'notification', method: 'm', params });
      expectObservable(rpc.messages$).toBe('-a-b--c-d|', { a: n(1), b: n(2), c: n(3), d: n(4) });
      expectObservable(rpc.messages$, '----^').toBe('------c-d|', { c: n(3), d: n(4) });
      expectObservable(rpc.messages$, '----------^').toBe('----------|');
    });
  });

  it('completes, never errors, when the connection closes: after pending calls failed, before closed$ emits', async () => {
    for (const end of ['peer drops', 'client closes'] as const) {
      const port = new FakeSocketPort();
      const rpc = new RpcConnection(port);
      const subscription = rpc.open();
      const order: string[] = [];
      const call = rpc.call('environment/status', undefined).catch((e: unknown) => e);
      rpc.messages$.subscribe({ complete: () => order.push(`messages$ complete, closeError ${rpc.closeError?.initiator ?? 'unset'}, pending ${rpc.pendingCount}`) });
      rpc.closed$.subscribe(() => order.push('closed$'));
      const seen = watch(rpc);
      if (end === 'peer drops') port.drop();
      else subscription.unsubscribe();
      const initiator = end === 'peer drops' ? 'remote' : 'local';
      expect(order).toEqual([`messages$ complete, closeError ${initiator}, pending 0`, 'closed$']);
      expect(seen).toEqual({ messages: [], completed: true, errored: undefined });
      expect(await call).toBeInstanceOf(TransportClosedError);
      expect(watch(rpc)).toEqual({ messages: [], completed: true, errored: undefined });
    }
  });

  it('does not act on a message when a subscriber closed the connection from inside next', async () => {
    const port = new FakeSocketPort();
    const rpc = new RpcConnection(port);
    rpc.open();
    rpc.messages$.subscribe(() => rpc.close('seen enough'));
    const call = rpc.call('environment/status', undefined);
    port.deliver({ id: 1, result: { status: 'ready' } });
    await expect(call).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED', initiator: 'local', reason: 'seen enough' });

    const asked: string[] = [];
    const peer = new FakeSocketPort();
    const answering = new RpcConnection(peer, {
      serverRequests: (method) => {
        asked.push(method);
        return undefined;
      },
    });
    answering.open();
    answering.messages$.subscribe(() => answering.close('seen enough'));
    peer.deliver({ id: 9, method: 'bogus/ask', params: {} });
    expect({ asked, sent: peer.sent, open: peer.isOpen }).toEqual({ asked: [], sent: [], open: false });
  });
});
