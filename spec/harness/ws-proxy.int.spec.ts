/** The disconnectable TCP proxy, against a plain `ws` server (no executor). */
import { startAcceptor } from '../support/acceptor';
import { trackForCleanup } from '../support/executor';
import { startDisconnectableProxy } from '../support/ws-proxy';
import { dial, dialOpen, wrapSocket } from './raw-peer';

describe('startDisconnectableProxy', () => {
  it('forwards WebSocket traffic, keeping the target path in its url', async () => {
    const acceptor = trackForCleanup(await startAcceptor());
    const proxy = trackForCleanup(await startDisconnectableProxy(`${acceptor.url}direct?token=abc`));
    expect(proxy.url).toBe(`ws://127.0.0.1:${proxy.port}/direct?token=abc`);

    const client = trackForCleanup(await dialOpen(proxy.url));
    const server = wrapSocket(await acceptor.nextAccepted());
    const echoed = server.peer.notification('ping');
    client.peer.notify('ping', { n: 1 });
    expect((await echoed)['params']).toEqual({ n: 1 });
    expect({ connections: proxy.connectionCount, live: proxy.liveConnections }).toEqual({ connections: 1, live: 1 });
  });

  it('pause() drops both sides, refuses new connections at the TCP level, and resume() lets them through', async () => {
    const acceptor = trackForCleanup(await startAcceptor());
    const proxy = trackForCleanup(await startDisconnectableProxy(acceptor.url));
    const client = trackForCleanup(await dialOpen(proxy.url));
    const server = wrapSocket(await acceptor.nextAccepted());

    proxy.pause();
    expect(await client.closed).toBe(1006);
    expect(await server.closed).toBe(1006);
    expect(proxy.liveConnections).toBe(0);

    // While paused: the TCP connection is accepted and destroyed, never answered with HTTP.
    await expect(dial(proxy.url)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect({ paused: proxy.paused, refused: proxy.acceptedWhilePaused, through: proxy.connectionCount }).toEqual({
      paused: true,
      refused: 1,
      through: 1,
    });

    proxy.resume();
    const reconnected = proxy.waitForConnection();
    const again = trackForCleanup(await dialOpen(proxy.url));
    expect(await reconnected).toBe(2);
    const accepted = wrapSocket(await acceptor.nextAccepted());
    const seen = accepted.peer.notification('hello');
    again.peer.notify('hello', {});
    await seen;
  });

  it('close() destroys live connections and rejects pending waits', async () => {
    const acceptor = trackForCleanup(await startAcceptor());
    const proxy = await startDisconnectableProxy(acceptor.url);
    const client = trackForCleanup(await dialOpen(proxy.url));
    const pending = proxy.waitForConnection(5);
    await proxy.close();
    await expect(pending).rejects.toThrow('proxy: closed');
    expect(await client.closed).toBe(1006);
  });
});

