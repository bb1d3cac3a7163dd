/** Pipelined reads and streamed writes, on a scripted executor: what goes on the wire, and when. */
import { lastValueFrom, Subject } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { ConsumerOverflowError, HandleLostError } from '../../src/errors';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { FakeSocketPort } from '../support/fake-socket-port';
import type { Handler } from './client-harness';
import { executorPort, fileHandlers, reconnectableClient, requestsOn, scriptedFilesystems } from './client-harness';

const CONTENT = Buffer.from('abcdefghijklmnopqrst'); // 20 bytes

/** The requests of `method` the client sent on `port` that `answered` does not hold yet. */
const unanswered = (port: FakeSocketPort, method: string, answered: Set<unknown>): Record<string, unknown>[] =>
  requestsOn(port).filter((m) => m.method === method && !answered.has(m.id));

async function* chunks(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const text of texts) yield Buffer.from(text);
}

const paramsOf = (m: Record<string, unknown>): Record<string, unknown> => m.params as Record<string, unknown>;

describe('pipelined reads and streamed writes', () => {
  const { connect, track } = scriptedFilesystems();

  /** A file served by hand: reads are held until `answer(id)`. */
  const heldFile = async () => {
    const held = { ...fileHandlers(CONTENT), 'fs/readBlock': () => undefined };
    const { port, fs } = await connect(held);
    const answered = new Set<unknown>();
    const answer = (request: Record<string, unknown>): void => {
      answered.add(request.id);
      const { offset, len } = paramsOf(request);
      const end = Number(offset) + Number(len);
      port.deliver({ id: request.id, result: { chunk: CONTENT.subarray(Number(offset), end).toString('base64'), eof: end >= CONTENT.length } });
    };
    return { port, fs, answered, answer };
  };

  it('sends the first read alone, then keeps inFlight reads outstanding, and emits strictly in file order', async () => {
    const { port, fs, answered, answer } = await heldFile();
    const blocks: string[] = [];
    const done = lastValueFrom(fs.readStream('/tmp/a', { blockSize: 4, inFlight: 3 }).pipe(toArray()));
    await Promise.resolve();
    const first = unanswered(port, 'fs/readBlock', answered);
    expect(first.map((m) => paramsOf(m).offset)).toEqual([0]);
    answer(first[0] ?? {});
    const window = unanswered(port, 'fs/readBlock', answered);
    expect(window.map((m) => paramsOf(m).offset)).toEqual([4, 8, 12]);
    // Answered last first: nothing is emitted before the block ahead of it.
    for (const request of [...window].reverse()) answer(request);
    const rest = unanswered(port, 'fs/readBlock', answered);
    expect(rest.map((m) => paramsOf(m).offset)).toEqual([16, 20, 24]);
    rest.forEach(answer);
    const result = await done;
    blocks.push(...result.map((b) => b.toString()));
    expect(blocks).toEqual(['abcd', 'efgh', 'ijkl', 'mnop', 'qrst']);
    expect(requestsOn(port).at(-1)).toMatchObject({ method: 'fs/close' });
  });

  it('reads a range: from start, with a short last read at end, and nothing past it', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const blocks = await lastValueFrom(fs.readStream('/tmp/a', { blockSize: 4, start: 3, end: 10 }).pipe(toArray()));
    expect(Buffer.concat(blocks).toString()).toBe('defghij');
    const reads = requestsOn(port).filter((m) => m.method === 'fs/readBlock').map((m) => [paramsOf(m).offset, paramsOf(m).len]);
    expect(reads).toEqual([
      [3, 4],
      [7, 3],
    ]);
    expect(requestsOn(port).at(-1)).toMatchObject({ method: 'fs/close' });
  });

  it('completes an empty range at once without a call, and refuses ranges and windows out of bounds', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    await expect(lastValueFrom(fs.readStream('/tmp/a', { start: 5, end: 5 }).pipe(toArray()))).resolves.toEqual([]);
    expect(requestsOn(port)).toEqual([]);
    expect(() => fs.readStream('/tmp/a', { start: 5, end: 4 })).toThrow(RangeError);
    expect(() => fs.readStream('/tmp/a', { start: -1 })).toThrow(RangeError);
    expect(() => fs.readStream('/tmp/a', { inFlight: 17 })).toThrow(RangeError);
    expect(() => fs.readIterable('/tmp/a', { blockSize: 1_048_577 })).toThrow(RangeError);
    expect(() => fs.writeStream('/tmp/a', chunks(), { inFlight: 0 })).toThrow(RangeError);
  });

  it('goes on from where a short block without eof ended', async () => {
    const short: Handler = (params) => {
      const offset = Number(params.offset);
      const len = offset === 0 ? 2 : Number(params.len); // the first read comes back short
      const end = offset + len;
      return { result: { chunk: CONTENT.subarray(offset, end).toString('base64'), eof: end >= CONTENT.length } };
    };
    const { port, fs } = await connect({ ...fileHandlers(CONTENT), 'fs/readBlock': short });
    const blocks = await lastValueFrom(fs.readStream('/tmp/a', { blockSize: 8 }).pipe(toArray()));
    expect(Buffer.concat(blocks)).toEqual(CONTENT);
    expect(requestsOn(port).filter((m) => m.method === 'fs/readBlock').map((m) => paramsOf(m).offset)).toEqual([0, 2, 10, 18]);
  });

  it('readIterable keeps at most inFlight blocks requested or held ahead of the consumer, and return() closes the handle', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const blocks = fs.readIterable('/tmp/a', { blockSize: 2, inFlight: 2 });
    expect(requestsOn(port)).toEqual([]); // nothing before the first pull
    await expect(blocks.next()).resolves.toEqual({ value: Buffer.from('ab'), done: false });
    const readsAfter = (): unknown[] => requestsOn(port).filter((m) => m.method === 'fs/readBlock').map((m) => paramsOf(m).offset);
    expect(readsAfter()).toEqual([0, 2, 4]); // one taken, two ahead
    await expect(blocks.next()).resolves.toEqual({ value: Buffer.from('cd'), done: false });
    expect(readsAfter()).toEqual([0, 2, 4, 6]);
    await expect(blocks.return?.()).resolves.toEqual({ value: undefined, done: true });
    await expect(blocks.next()).resolves.toEqual({ value: undefined, done: true });
    expect(requestsOn(port).at(-1)).toEqual({ id: 7, method: 'fs/close', params: { handleId: 'h1' } });
  });

  it('readIterable yields the whole file in order with for await, then closes the handle', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const blocks: Buffer[] = [];
    for await (const block of fs.readIterable('/tmp/a', { blockSize: 3 })) blocks.push(block);
    expect(Buffer.concat(blocks)).toEqual(CONTENT);
    expect(requestsOn(port).at(-1)).toMatchObject({ method: 'fs/close' });
  });

  it('writeStream keeps at most inFlight writes outstanding and pulls the source only when a slot frees', async () => {
    const { port, fs } = await connect({ ...fileHandlers(CONTENT), 'fs/writeBlock': () => undefined });
    let pulls = 0;
    async function* source(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 5; i += 1) {
        pulls += 1;
        yield Buffer.from(`${i}${i}${i}${i}`);
      }
    }
    const progress: number[] = [];
    const writing = fs.writeStream('/tmp/out', source(), { blockSize: 4, inFlight: 2, onProgress: (n) => progress.push(n) });
    const answered = new Set<unknown>();
    const outstanding = async (count: number): Promise<Record<string, unknown>[]> => {
      for (let turns = 0; turns < 100 && unanswered(port, 'fs/writeBlock', answered).length < count; turns += 1) await Promise.resolve();
      return unanswered(port, 'fs/writeBlock', answered);
    };
    const window = await outstanding(2);
    expect(window.map((m) => paramsOf(m).offset)).toEqual([0, 4]);
    expect(pulls).toBe(2);
    for (let acknowledged = 0; acknowledged < 5; acknowledged += 1) {
      const next = (await outstanding(Math.min(2, 5 - acknowledged)))[0] ?? {};
      expect(pulls - acknowledged).toBeLessThanOrEqual(3);
      answered.add(next.id);
      port.deliver({ id: next.id, result: {} });
    }
    await expect(writing).resolves.toBe(20);
    expect(progress).toEqual([4, 8, 12, 16, 20]);
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', ...Array<string>(5).fill('fs/writeBlock'), 'fs/close']);
    expect(paramsOf(requestsOn(port)[0] ?? {})).toMatchObject({ mode: 'replace' });
  });

  it('writeStream re-chunks an Observable source to blockSize and rejects one it cannot buffer', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const source = new Subject<Uint8Array>();
    const writing = fs.writeStream('/tmp/out', source, { blockSize: 3 });
    source.next(Buffer.from('abcdefg'));
    source.complete();
    await expect(writing).resolves.toBe(7);
    const writes = requestsOn(port).filter((m) => m.method === 'fs/writeBlock').map((m) => [paramsOf(m).offset, Buffer.from(String(paramsOf(m).chunk), 'base64').toString()]);
    expect(writes).toEqual([
      [0, 'abc'],
      [3, 'def'],
      [6, 'g'],
    ]);
    const flood = new Subject<Uint8Array>();
    const flooded = fs.writeStream('/tmp/out2', flood, { maxBufferedChunks: 2 });
    await Promise.resolve();
    for (let i = 0; i < 4; i += 1) flood.next(Buffer.from('x'));
    await expect(flooded).rejects.toBeInstanceOf(ConsumerOverflowError);
    expect(flood.observed).toBe(false);
    expect(requestsOn(port).at(-1)).toMatchObject({ method: 'fs/close', params: { handleId: 'h2' } });
  });

  it('writeStream rejects with the signal reason when aborted, and closes the handle', async () => {
    const { port, fs } = await connect(fileHandlers(CONTENT));
    const controller = new AbortController();
    const never = { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Uint8Array>>(() => undefined) }) };
    const writing = fs.writeStream('/tmp/out', never, { signal: controller.signal });
    await Promise.resolve();
    controller.abort(new Error('stop'));
    await expect(writing).rejects.toThrow('stop');
    expect(requestsOn(port).map((m) => m.method)).toEqual(['fs/open', 'fs/close']);
  });

  it('writeStream rejects with HandleLostError when the connection drops under it, and never reopens', async () => {
    const first = executorPort({ ...fileHandlers(CONTENT), 'fs/writeBlock': (params) => (params.offset === 0 ? { result: {} } : undefined) });
    const second = executorPort(fileHandlers(CONTENT));
    const { client: connected, handIn } = await reconnectableClient(first);
    track(connected);
    const fs = new RemoteFileSystem(connected, { newHandleId: () => 'w1' });
    const writing = fs.writeStream('/tmp/out', chunks('abcd', 'efgh', 'ijkl'), { blockSize: 4 });
    for (let turns = 0; turns < 100 && unanswered(first, 'fs/writeBlock', new Set()).length < 2; turns += 1) await Promise.resolve();
    first.drop();
    handIn(second);
    const error: unknown = await writing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HandleLostError);
    expect(requestsOn(second)).toEqual([]);
  });
});
