import { firstValueFrom, lastValueFrom } from 'rxjs';
import { take, toArray } from 'rxjs/operators';
import { ClosedError, NotFoundError } from '../../src/errors';
import { currentRpc, fileHandlers, requestsOn, scriptedFilesystems } from './client-harness';

const CONTENT = Buffer.from('hello world!');

describe('RemoteFileHandle and readStream', () => {
  const { connect } = scriptedFilesystems({ writeBlockBytes: 4 });

  it('opens with a client-chosen handleId, reads blocks at explicit offsets and closes', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const handle = await fs.open('/tmp/a.txt', 'read');
    expect({ handleId: handle.handleId, path: handle.path, mode: handle.mode }).toEqual({ handleId: 'h1', path: 'file:///tmp/a.txt', mode: 'read' });
    await expect(handle.readBlock(0, 5)).resolves.toEqual({ chunk: Buffer.from('hello'), eof: false });
    await expect(handle.readBlock(6, 100)).resolves.toEqual({ chunk: Buffer.from('world!'), eof: true });
    await handle.close();
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/a.txt', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 0, len: 5 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 6, len: 100 } },
      { id: 5, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('gives every handle its own id and splits a writeBlock into blocks of writeBlockBytes', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const first = await fs.open('/tmp/x', 'replace');
    const second = await fs.open('/tmp/y', 'replace');
    await second.writeBlock(10, 'abcdef');
    await Promise.all([first.close(), second.close()]);
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/x', mode: 'replace' } },
      { id: 3, method: 'fs/open', params: { handleId: 'h2', path: 'file:///tmp/y', mode: 'replace' } },
      { id: 4, method: 'fs/writeBlock', params: { handleId: 'h2', offset: 10, chunk: 'YWJjZA==' } },
      { id: 5, method: 'fs/writeBlock', params: { handleId: 'h2', offset: 14, chunk: 'ZWY=' } },
      { id: 6, method: 'fs/close', params: { handleId: 'h1' } },
      { id: 7, method: 'fs/close', params: { handleId: 'h2' } },
    ]);
  });

  it('rejects calls on a closed handle with ClosedError and closes only once', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const handle = await fs.open('/tmp/a.txt', 'read');
    await handle.close();
    await handle.close();
    await expect(handle.readBlock(0, 1)).rejects.toBeInstanceOf(ClosedError);
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/close']);
  });

  it('rejects open with NotFoundError for a missing file', async () => {
    const { fs } = await connect({ 'fs/open': () => ({ error: { code: -32004, message: 'No such file or directory (os error 2)' } }) });
    await expect(fs.open('/tmp/missing', 'read')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('streams a file block by block until eof, then closes the handle', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const blocks = await lastValueFrom(fs.readStream('/tmp/a.txt', 5).pipe(toArray()));
    expect(blocks).toEqual([Buffer.from('hello'), Buffer.from(' worl'), Buffer.from('d!')]);
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/a.txt', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 0, len: 5 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 5, len: 5 } },
      { id: 5, method: 'fs/readBlock', params: { handleId: 'h1', offset: 10, len: 5 } },
      { id: 6, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('stops at an empty block even without eof, and emits nothing for an empty file', async () => {
    const { port, fs } = await connect({ ...fileHandlers(CONTENT), 'fs/readBlock': () => ({ result: { chunk: '', eof: false } }) });
    await expect(lastValueFrom(fs.readStream('/tmp/empty').pipe(toArray()))).resolves.toEqual([]);
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/readBlock', 'fs/close']);
  });

  it('closes the handle when the subscriber unsubscribes in the middle of the file', async () => {
    const { port, fs, connected } = await connect(fileHandlers(CONTENT, (offset) => offset >= 5));
    const blocks: Buffer[] = [];
    const subscription = fs.readStream('/tmp/a.txt', 5).subscribe((b) => blocks.push(b));
    expect(currentRpc(connected).pendingCount).toBe(1);
    subscription.unsubscribe();
    expect(blocks).toEqual([Buffer.from('hello')]);
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/a.txt', mode: 'read' } },
      { id: 3, method: 'fs/readBlock', params: { handleId: 'h1', offset: 0, len: 5 } },
      { id: 4, method: 'fs/readBlock', params: { handleId: 'h1', offset: 5, len: 5 } },
      { id: 5, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('closes the handle when the consumer takes only the first block', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    await expect(firstValueFrom(fs.readStream('/tmp/a.txt', 5).pipe(take(1)))).resolves.toEqual(Buffer.from('hello'));
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/readBlock', 'fs/close']);
  });

  it('errors with NotFoundError for a missing file and sends no fs/close', async () => {
    const { port, fs } = await connect({ 'fs/open': () => ({ error: { code: -32004, message: 'No such file or directory (os error 2)' } }) });
    await expect(lastValueFrom(fs.readStream('/tmp/missing'))).rejects.toBeInstanceOf(NotFoundError);
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open']);
  });

  it('closes the handle when a read fails', async () => {
    const { port, fs } = await connect({ ...fileHandlers(CONTENT), 'fs/readBlock': () => ({ error: { code: -32603, message: 'Is a directory (os error 21)' } }) });
    await expect(lastValueFrom(fs.readStream('/tmp/dir'))).rejects.toMatchObject({ code: 'RPC_ERROR', method: 'fs/readBlock', rpcCode: -32603 });
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/readBlock', 'fs/close']);
  });
});
