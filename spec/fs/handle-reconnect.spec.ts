import { lastValueFrom, Subject } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { HandleLostError, TransportClosedError } from '../../src/errors';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { ExecClient } from '../../src/session/exec-client';
import type { SocketPort } from '../../src/transport/socket-port';
import type { FakeSocketPort } from '../support/fake-socket-port';
import { closeIdle, executorPort, fileHandlers, reconnectableClient, requestsOn, SESSION_ID, startClient } from './client-harness';

const CONTENT = Buffer.from('abcdefghijkl');
const RESUME = { id: 1, method: 'initialize', params: { clientName: 'spec', resumeSessionId: SESSION_ID } };

describe('file handles across a reconnect', () => {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });

  /** A reconnectable client on `first`; `reconnect(second)` drops `first` and hands in `second`. */
  const connect = async (first: FakeSocketPort) => {
    const { client: connected, handIn } = await reconnectableClient(first);
    client = connected;
    let n = 0;
    const fs = new RemoteFileSystem(connected, { newHandleId: () => `h${(n += 1)}` });
    const reconnect = (second: FakeSocketPort): void => {
      first.drop();
      handIn(second);
    };
    return { fs, reconnect, connected, handIn };
  };

  it('reopens a read handle with the same handleId on the new connection before its next read', async () => {
    const first = executorPort(fileHandlers(CONTENT));
    const second = executorPort(fileHandlers(CONTENT));
    const { fs, reconnect } = await connect(first);
    const handle = await fs.open('/tmp/data', 'read');
    await expect(handle.readBlock(0, 4)).resolves.toEqual({ chunk: Buffer.from('abcd'), eof: false });
    reconnect(second);
    await expect(handle.readBlock(4, 4)).resolves.toEqual({ chunk: Buffer.from('efgh'), eof: false });
    await expect(handle.readBlock(8, 4)).resolves.toEqual({ chunk: Buffer.from('ijkl'), eof: true });
    await handle.close();
    expect(second.sent[0]).toEqual(RESUME);
    expect(requestsOn(second)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/data', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 4, len: 4 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 8, len: 4 } },
      { id: 5, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('sends a read cut by the drop again on the new connection', async () => {
    const first = executorPort(fileHandlers(CONTENT, (offset) => offset === 4));
    const second = executorPort(fileHandlers(CONTENT));
    const { fs, reconnect } = await connect(first);
    const handle = await fs.open('/tmp/data', 'read');
    const cut = handle.readBlock(4, 4);
    reconnect(second);
    await expect(cut).resolves.toEqual({ chunk: Buffer.from('efgh'), eof: false });
    expect(requestsOn(second).map((m) => m.method)).toEqual(['fs/open', 'fs/readBlock']);
    await handle.close();
  });

  it('goes on with a readStream after a drop in the middle of the file', async () => {
    const first = executorPort(fileHandlers(CONTENT, (offset) => offset >= 4));
    const second = executorPort(fileHandlers(CONTENT));
    const { fs, reconnect } = await connect(first);
    const done = lastValueFrom(fs.readStream('/tmp/data', 4).pipe(toArray()));
    reconnect(second);
    await expect(done).resolves.toEqual([Buffer.from('abcd'), Buffer.from('efgh'), Buffer.from('ijkl')]);
    expect(requestsOn(first)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/data', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 0, len: 4 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 4, len: 4 } },
    ]);
    expect(requestsOn(second)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/data', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 4, len: 4 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 8, len: 4 } },
      { id: 5, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('fails every later call of a write handle with HandleLostError and never reopens it', async () => {
    const first = executorPort(fileHandlers(CONTENT));
    const second = executorPort(fileHandlers(CONTENT));
    const { fs, reconnect } = await connect(first);
    const handle = await fs.open('/tmp/out', 'replace');
    await handle.writeBlock(0, 'abcd');
    first.drop();
    // While recovering it fails at once: the handle cannot come back.
    await expect(handle.writeBlock(4, 'efgh')).rejects.toEqual(new HandleLostError(handle.handleId));
    reconnect(second);
    await expect(handle.writeBlock(4, 'efgh')).rejects.toBeInstanceOf(HandleLostError);
    await expect(handle.readBlock(0, 4)).rejects.toBeInstanceOf(HandleLostError);
    // The executor released it with the old connection: closing sends nothing.
    await handle.close();
    expect(requestsOn(second)).toEqual([]);
  });

  it('rejects a write cut by the drop with TransportClosedError (it may have happened) and does not resend it', async () => {
    const first = executorPort({ ...fileHandlers(CONTENT), 'fs/writeBlock': () => undefined });
    const second = executorPort(fileHandlers(CONTENT));
    const { fs, reconnect } = await connect(first);
    const handle = await fs.open('/tmp/out', 'replace');
    const cut = handle.writeBlock(0, 'abcd');
    reconnect(second);
    await expect(cut).rejects.toBeInstanceOf(TransportClosedError);
    await expect(handle.writeBlock(4, 'efgh')).rejects.toBeInstanceOf(HandleLostError);
    expect(requestsOn(second)).toEqual([]);
  });

  it('rejects a large writeFile cut by the drop and never reopens its replace handle', async () => {
    const first = executorPort({ ...fileHandlers(CONTENT), 'fs/writeBlock': (params) => (params.offset === 0 ? { result: {} } : undefined) });
    const second = executorPort(fileHandlers(CONTENT));
    const sockets = new Subject<SocketPort>();
    const started = startClient(sockets, true);
    sockets.next(first);
    client = await started;
    const fs = new RemoteFileSystem(client, { newHandleId: () => 'w1', writeFileMaxBytes: 4, writeBlockBytes: 4 });
    const writing = fs.writeFile('/tmp/out', 'abcdefghij');
    first.drop();
    sockets.next(second);
    await expect(writing).rejects.toBeInstanceOf(TransportClosedError);
    expect(requestsOn(first).map((m) => m.method)).toEqual(['fs/open', 'fs/writeBlock', 'fs/writeBlock']);
    expect(requestsOn(second)).toEqual([]);
  });

  it('rejects a plain fs call cut by the drop with TransportClosedError and does not resend it', async () => {
    const first = executorPort({ 'fs/readFile': () => undefined });
    const second = executorPort({ 'fs/readFile': () => ({ result: { dataBase64: '' } }) });
    const { fs, reconnect } = await connect(first);
    const cut = fs.readFile('/tmp/a');
    reconnect(second);
    await expect(cut).rejects.toBeInstanceOf(TransportClosedError);
    expect(requestsOn(second)).toEqual([]);
  });

  it('makes new calls wait for the new connection while recovering', async () => {
    const first = executorPort({});
    const metadata = { isDirectory: true, isFile: false, isSymlink: false, size: 0, createdAtMs: 0, modifiedAtMs: 0 };
    const second = executorPort({ 'fs/getMetadata': () => ({ result: metadata }) });
    const { fs, connected, handIn } = await connect(first);
    first.drop();
    expect(connected.state.type).toBe('recovering');
    const waiting = fs.getMetadata('/tmp');
    handIn(second);
    await expect(waiting).resolves.toEqual(metadata);
    expect(requestsOn(first)).toEqual([]);
    expect(requestsOn(second)).toEqual([{ id: 2, method: 'fs/getMetadata', params: { path: 'file:///tmp' } }]);
  });
});
