import { NotFoundError, RpcError } from '../../src/errors';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { ExecClient } from '../../src/session/exec-client';
import { SAFE_CHUNK_BYTES, WRITE_BLOCK_MAX_BYTES } from '../../src/wire/limits';
import type { Handler } from './client-harness';
import { closeIdle, connectedTo, executorPort, ok, requestsOn } from './client-harness';

const WALK_LIMITS = { maxDepth: 2, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: false, pruneHiddenDirectories: true };
const METADATA = { isDirectory: false, isFile: true, isSymlink: true, size: 12, createdAtMs: 0, modifiedAtMs: 1796022732051 };
const ENTRIES = [{ fileName: 'sub', isDirectory: true, isFile: false }];
const WALKED = { entries: [{ path: 'file:///tmp/demo/a.txt', kind: 'file' }], errors: [], truncated: false };

interface MethodCase {
  readonly name: string;
  readonly method: string;
  readonly result: unknown;
  readonly call: (fs: RemoteFileSystem) => Promise<unknown>;
  readonly params: unknown;
  readonly resolves: unknown;
}

// Wire results are the recorded ones of docs/protocol.md#filesystem-methods.
const CASES: readonly MethodCase[] = [
  { name: 'readFile', method: 'fs/readFile', result: { dataBase64: 'aGVsbG8gd29ybGQK' }, call: (fs) => fs.readFile('/tmp/demo/a.txt'), params: { path: 'file:///tmp/demo/a.txt' }, resolves: Buffer.from('hello world\n') },
  { name: 'readFile with options', method: 'fs/readFile', result: { dataBase64: '' }, call: (fs) => fs.readFile('file:///tmp/demo/a.txt', { followSymlinks: false, sandbox: null }), params: { path: 'file:///tmp/demo/a.txt', followSymlinks: false, sandbox: null }, resolves: Buffer.alloc(0) },
  { name: 'writeFile of a string', method: 'fs/writeFile', result: {}, call: (fs) => fs.writeFile('/tmp/my dir/a b.txt', 'hi'), params: { path: 'file:///tmp/my%20dir/a%20b.txt', dataBase64: 'aGk=' }, resolves: undefined },
  { name: 'writeFile of bytes', method: 'fs/writeFile', result: {}, call: (fs) => fs.writeFile('/tmp/b', new Uint8Array([0, 255])), params: { path: 'file:///tmp/b', dataBase64: 'AP8=' }, resolves: undefined },
  { name: 'createDirectory', method: 'fs/createDirectory', result: {}, call: (fs) => fs.createDirectory('/tmp/d/e', { recursive: true }), params: { path: 'file:///tmp/d/e', recursive: true }, resolves: undefined },
  { name: 'getMetadata', method: 'fs/getMetadata', result: METADATA, call: (fs) => fs.getMetadata('/tmp/link'), params: { path: 'file:///tmp/link' }, resolves: METADATA },
  { name: 'canonicalize', method: 'fs/canonicalize', result: { path: 'file:///tmp/demo/fsroot/sub/b.txt' }, call: (fs) => fs.canonicalize('/tmp/demo/link'), params: { path: 'file:///tmp/demo/link' }, resolves: 'file:///tmp/demo/fsroot/sub/b.txt' },
  { name: 'readDirectory', method: 'fs/readDirectory', result: { entries: ENTRIES }, call: (fs) => fs.readDirectory('/tmp/demo'), params: { path: 'file:///tmp/demo' }, resolves: ENTRIES },
  { name: 'walk', method: 'fs/walk', result: WALKED, call: (fs) => fs.walk('/tmp/demo', { options: WALK_LIMITS }), params: { path: 'file:///tmp/demo', options: WALK_LIMITS }, resolves: WALKED },
  { name: 'remove', method: 'fs/remove', result: {}, call: (fs) => fs.remove('/tmp/demo', { recursive: true, force: false }), params: { path: 'file:///tmp/demo', recursive: true, force: false }, resolves: undefined },
  { name: 'copy (recursive defaults to false)', method: 'fs/copy', result: {}, call: (fs) => fs.copy('/tmp/a', '/tmp/b'), params: { sourcePath: 'file:///tmp/a', destinationPath: 'file:///tmp/b', recursive: false }, resolves: undefined },
  { name: 'copy recursive', method: 'fs/copy', result: {}, call: (fs) => fs.copy('/tmp/a', 'file:///tmp/b', { recursive: true }), params: { sourcePath: 'file:///tmp/a', destinationPath: 'file:///tmp/b', recursive: true }, resolves: undefined },
];

describe('RemoteFileSystem', () => {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });

  const connect = async (handlers: Readonly<Record<string, Handler>>, options?: ConstructorParameters<typeof RemoteFileSystem>[1]) => {
    const port = executorPort(handlers);
    const connected = await connectedTo(port);
    client = connected;
    let n = 0;
    const fs = new RemoteFileSystem(connected, { newHandleId: () => `h${(n += 1)}`, ...options });
    return { port, fs, connected };
  };

  it.each(CASES)('$name sends exactly its params (paths as file URIs) and resolves with the decoded result', async (c) => {
    const { port, fs } = await connect({ [c.method]: ok(c.result) });
    await expect(c.call(fs)).resolves.toEqual(c.resolves);
    expect(requestsOn(port)).toEqual([{ id: 2, method: c.method, params: c.params }]);
  });

  it('rejects with NotFoundError for -32004 and with RpcError for other JSON-RPC errors', async () => {
    const { fs } = await connect({
      'fs/readFile': () => ({ error: { code: -32004, message: 'No such file or directory (os error 2)' } }),
      'fs/copy': () => ({ error: { code: -32600, message: 'fs/copy requires recursive: true when sourcePath is a directory' } }),
    });
    const missing = fs.readFile('/tmp/missing');
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    await expect(missing).rejects.toMatchObject({ code: 'NOT_FOUND', method: 'fs/readFile', rpcCode: -32004 });
    await expect(fs.copy('/tmp/dir', '/tmp/to')).rejects.toMatchObject({ code: 'RPC_ERROR', method: 'fs/copy', rpcCode: -32600 });
    await expect(fs.copy('/tmp/dir', '/tmp/to')).rejects.toBeInstanceOf(RpcError);
  });

  it('writes data up to 4 MiB in one fs/writeFile', async () => {
    const { port, fs } = await connect({ 'fs/writeFile': ok() });
    const data = Buffer.alloc(SAFE_CHUNK_BYTES, 7);
    await fs.writeFile('/tmp/big', data);
    expect(requestsOn(port)).toEqual([{ id: 2, method: 'fs/writeFile', params: { path: 'file:///tmp/big', dataBase64: data.toString('base64') } }]);
  });

  it('writes larger data through fs/open (replace), fs/writeBlocks of at most 1 MiB in order, and fs/close', async () => {
    const { port, fs } = await connect({ 'fs/open': ok({ handleId: 'h1' }), 'fs/writeBlock': ok(), 'fs/close': ok() });
    const data = Buffer.alloc(SAFE_CHUNK_BYTES + 1);
    for (let i = 0; i < data.length; i += 1) data[i] = i % 251;
    await fs.writeFile('/tmp/big', data);
    const block = (i: number, offset: number, end: number) => ({ id: 3 + i, method: 'fs/writeBlock', params: { handleId: 'h1', offset, chunk: data.subarray(offset, end).toString('base64') } });
    const mib = WRITE_BLOCK_MAX_BYTES;
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/big', mode: 'replace' } },
      block(0, 0, mib),
      block(1, mib, 2 * mib),
      block(2, 2 * mib, 3 * mib),
      block(3, 3 * mib, 4 * mib),
      block(4, 4 * mib, 4 * mib + 1),
      { id: 8, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('honours smaller thresholds and passes the sandbox to fs/open', async () => {
    const { port, fs } = await connect({ 'fs/open': ok({ handleId: 'h1' }), 'fs/writeBlock': ok(), 'fs/close': ok() }, { writeFileMaxBytes: 8, writeBlockBytes: 4 });
    await fs.writeFile('/tmp/t', 'abcdefghij', { sandbox: { cwd: 'file:///tmp' } });
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'fs/open', params: { handleId: 'h1', path: 'file:///tmp/t', mode: 'replace', sandbox: { cwd: 'file:///tmp' } } },
      { id: 3, method: 'fs/writeBlock', params: { handleId: 'h1', offset: 0, chunk: 'YWJjZA==' } },
      { id: 4, method: 'fs/writeBlock', params: { handleId: 'h1', offset: 4, chunk: 'ZWZnaA==' } },
      { id: 5, method: 'fs/writeBlock', params: { handleId: 'h1', offset: 8, chunk: 'aWo=' } },
      { id: 6, method: 'fs/close', params: { handleId: 'h1' } },
    ]);
  });

  it('closes the handle and rejects when a block of a large write fails', async () => {
    const failSecond: Handler = (params) => (params.offset === 4 ? { error: { code: -32603, message: 'No space left on device (os error 28)' } } : { result: {} });
    const { port, fs } = await connect({ 'fs/open': ok({ handleId: 'h1' }), 'fs/writeBlock': failSecond, 'fs/close': ok() }, { writeFileMaxBytes: 8, writeBlockBytes: 4 });
    await expect(fs.writeFile('/tmp/t', 'abcdefghij')).rejects.toMatchObject({ code: 'RPC_ERROR', method: 'fs/writeBlock', rpcCode: -32603 });
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/writeBlock', 'fs/writeBlock', 'fs/close']);
  });

  it('refuses block sizes outside 1 … 1 MiB before sending anything', async () => {
    const { port, fs, connected } = await connect({});
    expect(() => new RemoteFileSystem(connected, { writeBlockBytes: WRITE_BLOCK_MAX_BYTES + 1 })).toThrow(RangeError);
    expect(() => fs.readStream('/tmp/x', 0)).toThrow(RangeError);
    expect(requestsOn(port)).toEqual([]);
  });
});
