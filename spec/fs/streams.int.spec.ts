/** readStream / readIterable / writeStream against the real executor (listen mode). */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { RemoteFileSystem } from '../../src';
import { EnvironmentManager, HandleLostError } from '../../src';
import { startListeningExecutor, trackForCleanup } from '../support/executor';
import { startDisconnectableProxy } from '../support/ws-proxy';

const MIB = 1024 * 1024;
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Counts the calls each method finished, and lets a spec wait for the next one of a method. */
class CallLog {
  readonly counts = new Map<string, number>();
  private readonly waiters: { readonly method: string; readonly resolve: () => void }[] = [];
  readonly observe = (method: string): void => {
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    for (const waiter of this.waiters.filter((w) => w.method === method)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  next(method: string): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ method, resolve }));
  }
}

async function* chunksOf(bytes: Buffer, size: number, onPull: () => void = () => undefined): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) {
    onPull();
    yield bytes.subarray(at, at + size);
  }
}

describe('streamed reads and writes against the real executor', () => {
  let manager: EnvironmentManager;
  let fs: RemoteFileSystem;
  let work: string;
  const calls = new CallLog();
  const big = randomBytes(6 * MIB + 123);

  const connect = async (url: string, onCall?: (method: string) => void): Promise<{ manager: EnvironmentManager; fs: RemoteFileSystem }> => {
    const connected = await EnvironmentManager.connect('fs-streams', url, { clientName: 'exec-rx-streams-spec', ...(onCall === undefined ? {} : { onCall }) });
    const environment = connected.defaultEnvironment();
    if (environment === undefined) throw new Error('no environment');
    return { manager: connected, fs: environment.getFilesystem() };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-streams-'));
    writeFileSync(join(work, 'big.bin'), big);
    const executor = await startListeningExecutor();
    ({ manager, fs } = await connect(executor.url ?? '', calls.observe));
  });
  afterAll(async () => {
    await manager.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('reads a multi-MiB file with pipelined blocks, sha256-exact, as an Observable and as an AsyncIterable', async () => {
    const blocks = await lastValueFrom(fs.readStream(join(work, 'big.bin'), { inFlight: 8 }).pipe(toArray()));
    expect(blocks.map((b) => b.length)).toEqual([MIB, MIB, MIB, MIB, MIB, MIB, 123]);
    expect(sha256(Buffer.concat(blocks))).toBe(sha256(big));
    const pulled: Buffer[] = [];
    for await (const block of fs.readIterable(join(work, 'big.bin'), { blockSize: 256 * 1024 })) pulled.push(block);
    expect(sha256(Buffer.concat(pulled))).toBe(sha256(big));
  });

  it('reads ranges: inside the file, past its end, and from its end', async () => {
    const path = join(work, 'big.bin');
    const read = async (start: number, end?: number): Promise<Buffer> =>
      Buffer.concat(await lastValueFrom(fs.readStream(path, { blockSize: 100_000, start, ...(end === undefined ? {} : { end }) }).pipe(toArray())));
    expect(sha256(await read(1_000_001, 3_500_003))).toBe(sha256(big.subarray(1_000_001, 3_500_003)));
    expect(sha256(await read(5 * MIB, 10 * MIB))).toBe(sha256(big.subarray(5 * MIB)));
    expect(await read(big.length)).toEqual(Buffer.alloc(0));
    expect(await read(big.length + 10, big.length + 20)).toEqual(Buffer.alloc(0));
  });

  it('closes the handle (fs/close) when the subscriber unsubscribes early and when the iterator is returned', async () => {
    const path = join(work, 'big.bin');
    const closedOnUnsubscribe = calls.next('fs/close');
    const subscription = fs.readStream(path, { blockSize: 4096 }).subscribe({ next: () => subscription.unsubscribe() });
    await closedOnUnsubscribe;
    const blocks = fs.readIterable(path, { blockSize: 4096 });
    await blocks.next();
    const closedOnReturn = calls.next('fs/close');
    await blocks.return?.();
    await closedOnReturn;
  });

  it('writes a multi-MiB stream sha256-exact and reports progress up to the total', async () => {
    const progress: number[] = [];
    const written = await fs.writeStream(join(work, 'out.bin'), chunksOf(big, 300_000), { onProgress: (n) => progress.push(n) });
    expect(written).toBe(big.length);
    expect(progress.at(-1)).toBe(big.length);
    expect(sha256(readFileSync(join(work, 'out.bin')))).toBe(sha256(big));
  });

  it('pulls the source no more than inFlight + 1 blocks ahead of the acknowledged writes', async () => {
    const blockSize = 256 * 1024;
    let pulls = 0;
    let acknowledged = 0;
    let mostAhead = 0;
    const source = chunksOf(big, blockSize, () => {
      pulls += 1;
      mostAhead = Math.max(mostAhead, pulls - acknowledged);
    });
    await fs.writeStream(join(work, 'paced.bin'), source, { blockSize, inFlight: 3, onProgress: (n) => (acknowledged = Math.floor(n / blockSize)) });
    expect(pulls).toBe(Math.ceil(big.length / blockSize));
    expect(mostAhead).toBeGreaterThan(1);
    expect(mostAhead).toBeLessThanOrEqual(3 + 1);
    expect(sha256(readFileSync(join(work, 'paced.bin')))).toBe(sha256(big));
  });

  it('rejects with HandleLostError when the connection drops in the middle of a write', async () => {
    const executor = await startListeningExecutor();
    const proxy = trackForCleanup(await startDisconnectableProxy(executor.url ?? ''));
    const dropped = await connect(proxy.url);
    trackForCleanup({ stop: () => dropped.manager.close() });
    let acknowledged = 0;
    const connections = proxy.connectionCount;
    const source = chunksOf(big, 64 * 1024, () => {
      if (acknowledged > 0 && !proxy.paused) proxy.pause();
    });
    const writing = dropped.fs.writeStream(join(work, 'cut.bin'), source, { blockSize: 64 * 1024, onProgress: (n) => (acknowledged = n) });
    await expect(writing).rejects.toBeInstanceOf(HandleLostError);
    proxy.resume();
    await proxy.waitForConnection(connections + 1);
    await dropped.manager.close();
  });
});
