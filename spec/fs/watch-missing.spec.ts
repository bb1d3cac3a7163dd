import { ClosedError, RpcError } from '../../src/errors';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { ExecClient } from '../../src/session/exec-client';
import type { FakeSocketPort } from '../support/fake-socket-port';
import type { Handler } from './client-harness';
import { closeIdle, executorPort, reconnectableClient, requestsOn } from './client-harness';

const watching: Handler = (params) => ({ result: { watching: Array.isArray(params.missing) && params.missing.length > 0 } });
const changed = (watchId: number) => ({ method: 'fs/missingChanged', params: { watchId } });
const watch = (id: number, watchId: number, missing: string[]) => ({ id, method: 'fs/watchMissing', params: { watchId, missing } });

describe('RemoteFileSystem.watchMissing', () => {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });

  const connect = async (first: FakeSocketPort) => {
    const { client: connected, handIn } = await reconnectableClient(first);
    client = connected;
    let n = 6;
    const fs = new RemoteFileSystem(connected, { newWatchId: () => (n += 1) });
    return { fs, connected, handIn };
  };

  it('registers with a fresh watchId, emits for each fs/missingChanged of that watch, and unwatches on unsubscribe', async () => {
    const port = executorPort({ 'fs/watchMissing': watching });
    const { fs } = await connect(port);
    let emissions = 0;
    const subscription = fs.watchMissing(['/tmp/demo/later.txt', 'file:///tmp/demo/other']).subscribe(() => (emissions += 1));
    port.deliver(changed(7));
    port.deliver(changed(8));
    port.deliver(changed(7));
    subscription.unsubscribe();
    port.deliver(changed(7));
    expect(emissions).toBe(2);
    expect(requestsOn(port)).toEqual([watch(2, 7, ['file:///tmp/demo/later.txt', 'file:///tmp/demo/other']), watch(3, 7, [])]);
  });

  it('gives each subscription its own watch', async () => {
    const port = executorPort({ 'fs/watchMissing': watching });
    const { fs } = await connect(port);
    const watch$ = fs.watchMissing(['/a']);
    const seen: string[] = [];
    const one = watch$.subscribe(() => seen.push('one'));
    const two = watch$.subscribe(() => seen.push('two'));
    port.deliver(changed(8));
    one.unsubscribe();
    two.unsubscribe();
    expect(seen).toEqual(['two']);
    expect(requestsOn(port)).toEqual([watch(2, 7, ['file:///a']), watch(3, 8, ['file:///a']), watch(4, 7, []), watch(5, 8, [])]);
  });

  it('hears a change announced in the same tick as the registration reply', async () => {
    const port = executorPort({
      'fs/watchMissing': (params, peer) => {
        peer.deliver(changed(Number(params.watchId)));
        return { result: { watching: true } };
      },
    });
    const { fs } = await connect(port);
    let emissions = 0;
    fs.watchMissing(['/a'])
      .subscribe(() => (emissions += 1))
      .unsubscribe();
    expect(emissions).toBe(1);
  });

  it('completes at once for an empty list (an empty list means unwatch)', async () => {
    const port = executorPort({ 'fs/watchMissing': watching });
    const { fs } = await connect(port);
    let completed = false;
    fs.watchMissing([]).subscribe({ complete: () => (completed = true) });
    expect(completed).toBe(true);
    expect(requestsOn(port)).toEqual([]);
  });

  it('registers again on the new connection after a reconnect, emits once, and unwatches there', async () => {
    const first = executorPort({ 'fs/watchMissing': watching });
    const second = executorPort({ 'fs/watchMissing': watching });
    const { fs, handIn } = await connect(first);
    let emissions = 0;
    const subscription = fs.watchMissing(['/a']).subscribe(() => (emissions += 1));
    first.drop();
    expect(emissions).toBe(0);
    handIn(second);
    expect(emissions).toBe(1);
    second.deliver(changed(7));
    expect(emissions).toBe(2);
    subscription.unsubscribe();
    expect(requestsOn(first)).toEqual([watch(2, 7, ['file:///a'])]);
    expect(requestsOn(second)).toEqual([watch(2, 7, ['file:///a']), watch(3, 7, [])]);
  });

  it('errors with the RpcError of a rejected registration', async () => {
    const port = executorPort({ 'fs/watchMissing': () => ({ error: { code: -32602, message: 'invalid URI' } }) });
    const { fs } = await connect(port);
    let failure: unknown;
    fs.watchMissing(['/a']).subscribe({ error: (e: unknown) => (failure = e) });
    expect(failure).toBeInstanceOf(RpcError);
    expect(failure).toMatchObject({ method: 'fs/watchMissing', rpcCode: -32602 });
  });

  it('errors with the failure when the client closes, without unwatching on the closed socket', async () => {
    const port = executorPort({ 'fs/watchMissing': watching });
    const { fs, connected } = await connect(port);
    let failure: unknown;
    fs.watchMissing(['/a']).subscribe({ error: (e: unknown) => (failure = e) });
    connected.close();
    client = undefined;
    expect(failure).toBeInstanceOf(ClosedError);
    expect(requestsOn(port)).toEqual([watch(2, 7, ['file:///a'])]);
  });
});
