/**
 * `RpcConnectionOptions.onCall`: each call heard once as it settles, with its method, `ok` or the
 * library's error code, and the time it took on the connection's scheduler (virtual here).
 */
import { RpcConnection } from '../../src/rpc/rpc-connection';
import { FakeSocketPort } from '../support/fake-socket-port';
import { VirtualClock } from '../support/virtual-time';

describe('RpcConnectionOptions.onCall', () => {
  it('hears each settled call: ok, an RPC error, a timeout, a closed connection; not a call dropped by its caller', async () => {
    const clock = new VirtualClock();
    const port = new FakeSocketPort();
    const heard: [string, string, number][] = [];
    const rpc = new RpcConnection(port, { scheduler: clock, requestTimeoutMs: 5_000, onCall: (method, outcome, ms) => heard.push([method, outcome, ms]) });
    const subscription = rpc.open();
    const ok = rpc.call('environment/status', undefined);
    const failed = rpc.call('process/terminate', { processId: 'p' }).catch((error: unknown) => error);
    const timedOut = rpc.call('fs/readFile', { path: 'file:///x' }).catch((error: unknown) => error);
    rpc.request('environment/status', undefined).subscribe().unsubscribe();
    await clock.advance(40);
    port.deliver({ id: 1, result: { status: 'ready' } });
    port.deliver({ id: 2, error: { code: -32000, message: 'no' } });
    await clock.advance(5_000);
    await Promise.all([ok, failed, timedOut]);
    subscription.unsubscribe();
    rpc.close();
    expect(await rpc.call('environment/status', undefined).catch((error: unknown) => error)).toBeInstanceOf(Error);
    expect(heard).toEqual([
      ['environment/status', 'ok', 40],
      ['process/terminate', 'RPC_ERROR', 40],
      ['fs/readFile', 'REQUEST_TIMEOUT', 5_000],
      ['environment/status', 'TRANSPORT_CLOSED', 0],
    ]);
  });
});
