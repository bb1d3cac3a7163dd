/** The filesystem API against the real executor (listen mode). */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { RemoteFileSystem } from '../../src';
import { EnvironmentManager, NotFoundError, RpcError } from '../../src';
import { startListeningExecutor } from '../support/executor';

describe('filesystem against the real executor', () => {
  let manager: EnvironmentManager;
  let fs: RemoteFileSystem;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-fs-'));
    const executor = await startListeningExecutor();
    manager = await EnvironmentManager.connect('fs-1', executor.url ?? '', { clientName: 'exec-rx-fs-spec' });
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('no environment');
    fs = environment.getFilesystem();
  });
  afterAll(async () => {
    await manager.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('reads a 128 KiB file back byte-exact, and writes one', async () => {
    const content = randomBytes(128 * 1024);
    writeFileSync(join(work, 'in.bin'), content);
    expect(Buffer.compare(await fs.readFile(join(work, 'in.bin')), content)).toBe(0);
    await fs.writeFile(join(work, 'out.bin'), content);
    expect(Buffer.compare(readFileSync(join(work, 'out.bin')), content)).toBe(0);
  });

  it('writes a file larger than a safe frame in blocks, and streams a large file back', async () => {
    const big = randomBytes(6 * 1024 * 1024 + 17);
    await fs.writeFile(join(work, 'big.bin'), big);
    expect(Buffer.compare(readFileSync(join(work, 'big.bin')), big)).toBe(0);
    const blocks = await lastValueFrom(fs.readStream(join(work, 'big.bin'), 1024 * 1024).pipe(toArray()));
    expect(blocks.length).toBeGreaterThan(6);
    expect(Buffer.compare(Buffer.concat(blocks), big)).toBe(0);
  });

  it('creates directories, reads metadata, lists, walks, canonicalizes, copies and removes', async () => {
    const root = join(work, 'tree');
    await fs.createDirectory(join(root, 'sub', 'deeper'), { recursive: true });
    await fs.writeFile(join(root, 'sub', 'a.txt'), 'hello');
    expect(await fs.getMetadata(join(root, 'sub', 'a.txt'))).toMatchObject({ isFile: true, isDirectory: false, size: 5 });
    const entries = await fs.readDirectory(join(root, 'sub'));
    expect(entries.map((e) => [e.fileName, e.isDirectory]).sort()).toEqual([
      ['a.txt', false],
      ['deeper', true],
    ]);
    const walked = await fs.walk(root, { options: { maxDepth: 5, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false, pruneHiddenDirectories: true } });
    expect(walked.entries.map((e) => e.path).sort()).toEqual([join(root, 'sub'), join(root, 'sub', 'a.txt'), join(root, 'sub', 'deeper')].map((p) => pathToFileURL(p).href).sort());
    expect(await fs.canonicalize(join(root, 'sub', '..', 'sub', 'a.txt'))).toBe(pathToFileURL(join(root, 'sub', 'a.txt')).href);
    await fs.copy(join(root, 'sub'), join(root, 'copy'), { recursive: true });
    expect(readFileSync(join(root, 'copy', 'a.txt'), 'utf8')).toBe('hello');
    await fs.remove(join(root, 'copy'), { recursive: true });
    expect(existsSync(join(root, 'copy'))).toBe(false);
  });

  it('opens a handle for block reads and a replace handle for block writes', async () => {
    const writer = await fs.open(join(work, 'blocks.txt'), 'replace');
    await writer.writeBlock(0, 'hello ');
    await writer.writeBlock(6, 'world');
    await writer.close();
    const reader = await fs.open(join(work, 'blocks.txt'), 'read');
    expect(await reader.readBlock(0, 5)).toEqual({ chunk: Buffer.from('hello'), eof: false });
    expect(await reader.readBlock(6, 100)).toMatchObject({ chunk: Buffer.from('world') });
    expect(await reader.readBlock(100, 10)).toEqual({ chunk: Buffer.alloc(0), eof: true });
    await reader.close();
  });

  it('rejects with typed errors: not found (-32004) and semantic errors (-32600)', async () => {
    await expect(fs.readFile(join(work, 'missing.txt'))).rejects.toBeInstanceOf(NotFoundError);
    const error = await fs.readFile(work).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ rpcCode: -32600 });
  });

  it('sees a missing file appear through watchMissing', async () => {
    const target = join(work, 'appears.txt');
    const appeared = firstValueFrom(fs.watchMissing([target]));
    // Registered once the request was answered: make a round trip before creating the file.
    await fs.getMetadata(work);
    writeFileSync(target, 'now');
    await expect(appeared).resolves.toBeUndefined();
  });
});
