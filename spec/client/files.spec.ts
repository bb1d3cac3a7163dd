/**
 * HostClient.files, in memory (a scripted fetch, no socket): a download cut halfway resumes by Range +
 * If-Range with the exact bytes and says so; a file that changed meanwhile (200 instead of 206, another
 * ETag, a cut at the end of a changed file) is FILE_CHANGED; uploads from a Blob, a stream, bytes and an
 * async iterable report progress as the body is pulled and arrive whole; problems are HostApiError codes;
 * the change stream decodes its events.
 */
import { firstValueFrom, toArray, take } from 'rxjs';
import type { FileEntry } from '../../src/client';
import { HostApiError, HostClient } from '../../src/client';
import { FakeFetch, HOST_A, json, problem, SseBody } from './fake-fetch';
import type { FakeCall } from './fake-fetch';
import { HOST_INSTANCE_HEADER } from '../../src/wire/operator-api';

const ENV = 'env-1';
const FILE = '/work/data.bin';
const ETAG = 'W/"1000-1700000000123"';
const LAST_MODIFIED = 'Tue, 14 Nov 2023 22:13:20 GMT';
const CONTENT = `/api/v1/environments/${ENV}/files/content`;

function client(fetch: typeof globalThis.fetch): HostClient {
  return new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch, retry: { initialDelayMs: 1, maxDelayMs: 4, maxOfflineMs: 500 }, random: () => 0.5 });
}

/** `size` bytes that differ from their neighbours. */
const bytesOf = (size: number): Uint8Array => Uint8Array.from({ length: size }, (_, i) => (i * 7 + (i >> 8)) & 0xff);

/** A body answer: its bytes from an SseBody the spec drives (push, fail, end), with `status` and `headers`. */
function bodyAnswer(body: SseBody, status: number, headers: Record<string, string>): (call: FakeCall) => Response {
  return (call) => {
    call.signal?.addEventListener('abort', () => body.abort(), { once: true });
    return new Response(body.stream, { status, headers: { [HOST_INSTANCE_HEADER]: HOST_A, 'content-type': 'application/octet-stream', ...headers } });
  };
}

const entry = (path: string, size: number, type: FileEntry['type'] = 'file'): FileEntry => ({
  path,
  name: path.split('/').pop() ?? '',
  type,
  size,
  modifiedAt: '2023-11-14T22:13:20.123Z',
  isSymlink: false,
  etag: type === 'file' ? `W/"${size}-1700000000123"` : null,
});

/** Reads a whole stream. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe('HostFiles.read', () => {
  const file = bytesOf(1000);

  it('resumes a download cut halfway by Range + If-Range: the bytes are exact, onResume says where, the second request asks for the rest', async () => {
    const first = new SseBody().pushBytes(file.subarray(0, 500)).fail();
    const second = new SseBody().pushBytes(file.subarray(500, 800)).pushBytes(file.subarray(800)).end();
    const fake = new FakeFetch().reply(
      bodyAnswer(first, 200, { 'content-length': '1000', etag: ETAG, 'last-modified': LAST_MODIFIED }),
      bodyAnswer(second, 206, { 'content-range': 'bytes 500-999/1000', 'content-length': '500', etag: ETAG, 'last-modified': LAST_MODIFIED }),
    );
    const resumed: number[] = [];
    const read = await drain(client(fake.fetch).files(ENV).read(FILE, { onResume: (offset) => resumed.push(offset) }));
    expect(Buffer.from(read).equals(Buffer.from(file))).toBe(true);
    expect(resumed).toEqual([500]);
    expect(fake.calls.map((c) => [c.method, c.url.pathname, c.url.searchParams.get('path'), c.headers['range'], c.headers['if-range']])).toEqual([
      ['GET', CONTENT, FILE, undefined, undefined],
      ['GET', CONTENT, FILE, 'bytes=500-', LAST_MODIFIED],
    ]);
  });

  it('asks for start/end as one range (end exclusive), and resumes within it', async () => {
    const first = new SseBody().pushBytes(file.subarray(100, 150)).fail();
    const second = new SseBody().pushBytes(file.subarray(150, 200)).end();
    const fake = new FakeFetch().reply(
      bodyAnswer(first, 206, { 'content-range': 'bytes 100-199/1000', etag: ETAG }),
      bodyAnswer(second, 206, { 'content-range': 'bytes 150-199/1000', etag: ETAG }),
    );
    const read = await drain(client(fake.fetch).files(ENV).read(FILE, { start: 100, end: 200 }));
    expect(Buffer.from(read).equals(Buffer.from(file.subarray(100, 200)))).toBe(true);
    // Without a Last-Modified, the ETag is the If-Range validator.
    expect(fake.calls.map((c) => [c.headers['range'], c.headers['if-range']])).toEqual([
      ['bytes=100-199', undefined],
      ['bytes=150-199', ETAG],
    ]);
  });

  it('fails FILE_CHANGED when the resumed request gets the whole file (200 instead of 206: If-Range did not match)', async () => {
    const fake = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file.subarray(0, 500)).fail(), 200, { 'content-length': '1000', etag: ETAG, 'last-modified': LAST_MODIFIED }),
      bodyAnswer(new SseBody().pushBytes(bytesOf(1200)).end(), 200, { 'content-length': '1200', etag: 'W/"1200-1700000009999"' }),
    );
    const error = await drain(client(fake.fetch).files(ENV).read(FILE)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect((error as HostApiError).code).toBe('FILE_CHANGED');
  });

  it('fails FILE_CHANGED when the 206 carries another ETag (a change within the second of Last-Modified)', async () => {
    const fake = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file.subarray(0, 500)).fail(), 200, { 'content-length': '1000', etag: ETAG, 'last-modified': LAST_MODIFIED }),
      bodyAnswer(new SseBody().pushBytes(file.subarray(500)).end(), 206, { 'content-range': 'bytes 500-999/1000', etag: 'W/"1000-1700000000999"', 'last-modified': LAST_MODIFIED }),
    );
    const error = await drain(client(fake.fetch).files(ENV).read(FILE)).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('FILE_CHANGED');
  });

  it('fails FILE_CHANGED when the host cut the answer after its last byte and the file is another now (its end check); whole when it is the same', async () => {
    const changed = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file).fail(), 200, { 'content-length': '1000', etag: ETAG }),
      new Response(null, { status: 200, headers: { etag: 'W/"1000-1700000005555"' } }),
    );
    const error = await drain(client(changed.fetch).files(ENV).read(FILE)).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('FILE_CHANGED');
    expect(changed.calls.map((c) => c.method)).toEqual(['GET', 'HEAD']);

    const same = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file).fail(), 200, { 'content-length': '1000', etag: ETAG }),
      new Response(null, { status: 200, headers: { etag: ETAG } }),
    );
    expect(Buffer.from(await drain(client(same.fetch).files(ENV).read(FILE))).equals(Buffer.from(file))).toBe(true);
  });

  it('fails FILE_CHANGED when the resumed range is past the end now (416: the file is shorter)', async () => {
    const fake = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file.subarray(0, 500)).fail(), 200, { 'content-length': '1000', etag: ETAG }),
      problem(416, 'RANGE_NOT_SATISFIABLE'),
    );
    const error = await drain(client(fake.fetch).files(ENV).read(FILE)).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('FILE_CHANGED');
  });

  it('read$ emits the chunks in order and completes; a missing file errors FILE_NOT_FOUND', async () => {
    const fake = new FakeFetch().reply(
      bodyAnswer(new SseBody().pushBytes(file.subarray(0, 300)).pushBytes(file.subarray(300)).end(), 200, { 'content-length': '1000', etag: ETAG }),
      problem(404, 'FILE_NOT_FOUND'),
    );
    const files = client(fake.fetch).files(ENV);
    const chunks = await firstValueFrom(files.read$(FILE).pipe(toArray()));
    expect(Buffer.concat(chunks).equals(Buffer.from(file))).toBe(true);
    const error = await firstValueFrom(files.read$('/missing')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect({ code: (error as HostApiError).code, status: (error as HostApiError).status }).toEqual({ code: 'FILE_NOT_FOUND', status: 404 });
  });
});

/** A fetch that reads the request body whole (as the host does) before the scripted answer, recording it. */
function receiving(fake: FakeFetch): { readonly fetch: typeof fetch; readonly bodies: Uint8Array[]; readonly duplex: unknown[] } {
  const bodies: Uint8Array[] = [];
  const duplex: unknown[] = [];
  return {
    bodies,
    duplex,
    fetch: async (input, init) => {
      duplex.push(init !== undefined && 'duplex' in init ? init.duplex : undefined);
      bodies.push(new Uint8Array(await new Response(init?.body ?? null).arrayBuffer()));
      return fake.fetch(input, init);
    },
  };
}

describe('HostFiles.write', () => {
  const data = bytesOf(200 * 1024);
  const answer = (): Response => json(201, entry(FILE, data.byteLength));

  it.each([
    ['a Blob', (): Blob => new Blob([data]), data.byteLength],
    ['bytes', (): Uint8Array => data, data.byteLength],
    ['a string', (): string => 'x'.repeat(100_000), 100_000],
  ] as const)('counts the progress of %s as the body is pulled, with its total, and sends it whole', async (_, make, total) => {
    const fake = new FakeFetch().reply(answer());
    const upload = receiving(fake);
    const progress: [number, number | undefined][] = [];
    const written = await client(upload.fetch).files(ENV).write(FILE, make(), { onProgress: (sent, all) => progress.push([sent, all]) });
    expect(written).toEqual(entry(FILE, data.byteLength));
    expect(upload.bodies[0]?.byteLength).toBe(total);
    expect(progress[0]).toEqual([0, total]);
    expect(progress.at(-1)).toEqual([total, total]);
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every(([sent], i) => i === 0 || sent > (progress[i - 1]?.[0] ?? 0))).toBe(true);
    expect(upload.duplex).toEqual(['half']);
    expect(fake.calls.map((c) => [c.method, c.url.pathname, c.url.searchParams.get('path'), c.headers['content-type']])).toEqual([['PUT', CONTENT, FILE, 'application/octet-stream']]);
  });

  it('counts a stream and an async iterable as pulled (no total), and sends them with duplex half, byte-exact', async () => {
    const chunks = [data.subarray(0, 70_000), data.subarray(70_000, 140_000), data.subarray(140_000)];
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    async function* iterable(): AsyncIterable<Uint8Array> {
      for (const chunk of chunks) yield chunk;
    }
    for (const source of [stream, iterable()]) {
      const fake = new FakeFetch().reply(answer());
      const upload = receiving(fake);
      const progress: [number, number | undefined][] = [];
      await client(upload.fetch).files(ENV).write(FILE, source, { onProgress: (sent, all) => progress.push([sent, all]) });
      expect(Buffer.from(upload.bodies[0] ?? []).equals(Buffer.from(data))).toBe(true);
      expect(progress).toEqual([[0, undefined], [70_000, undefined], [140_000, undefined], [data.byteLength, undefined]]);
      expect(upload.duplex).toEqual(['half']);
    }
  });

  it('sends If-None-Match and If-Match; a 412 is PRECONDITION_FAILED; bytes without progress go as they are and are sent again after a 503', async () => {
    const fake = new FakeFetch().reply(problem(412, 'PRECONDITION_FAILED'), problem(503, 'FILE_BUSY', { headers: { 'retry-after': '0' } }), answer());
    const upload = receiving(fake);
    const files = client(upload.fetch).files(ENV);
    const error = await files.write(FILE, data, { ifNoneMatch: '*' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect({ code: (error as HostApiError).code, status: (error as HostApiError).status }).toEqual({ code: 'PRECONDITION_FAILED', status: 412 });
    await files.write(FILE, data, { ifMatch: ETAG });
    expect(fake.calls.map((c) => [c.headers['if-none-match'], c.headers['if-match']])).toEqual([['*', undefined], [undefined, ETAG], [undefined, ETAG]]);
    expect(upload.duplex).toEqual([undefined, undefined, undefined]);
    expect(upload.bodies.map((b) => b.byteLength)).toEqual([data.byteLength, data.byteLength, data.byteLength]);
  });

  it('does not send a stream twice: a 503 to a streamed upload is its error (UPLOAD_INTERRUPTED)', async () => {
    const fake = new FakeFetch().reply(problem(503, 'UPLOAD_INTERRUPTED', { headers: { 'retry-after': '1' } }));
    const upload = receiving(fake);
    const stream = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(data), c.close()) });
    const error = await client(upload.fetch).files(ENV).write(FILE, stream).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('UPLOAD_INTERRUPTED');
    expect(fake.calls).toHaveLength(1);
  });
});

describe('HostFiles directory calls', () => {
  it.each([
    ['stat', 404, 'FILE_NOT_FOUND'],
    ['list', 409, 'NOT_A_DIRECTORY'],
    ['remove', 409, 'DIRECTORY_NOT_EMPTY'],
    ['mkdir', 403, 'OUTSIDE_FILES_ROOT'],
    ['stat', 400, 'INVALID_PATH'],
    ['copy', 507, 'INSUFFICIENT_STORAGE'],
  ] as const)('%s: a %i problem is a HostApiError with its code %s', async (call, status, code) => {
    const fake = new FakeFetch().reply(problem(status, code));
    const files = client(fake.fetch).files(ENV);
    const calls = { stat: () => files.stat(FILE), list: () => files.list(FILE), remove: () => files.remove(FILE), mkdir: () => files.mkdir(FILE), copy: () => files.copy(FILE, '/b') };
    const error = await calls[call]().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect({ code: (error as HostApiError).code, status: (error as HostApiError).status, detail: (error as HostApiError).detail }).toEqual({ code, status, detail: `detail of ${code}` });
  });

  it('sends each call to its route with its query or body, and decodes the answers', async () => {
    const dir = entry('/work', 0, 'directory');
    const fake = new FakeFetch().reply(
      json(200, entry(FILE, 3)),
      json(200, { path: '/work', entries: [entry(FILE, 3)], truncated: false }),
      json(200, { path: '/work', entries: [{ path: FILE, type: 'file' }], truncated: true }),
      json(201, dir),
      new Response(null, { status: 204 }),
      json(201, entry('/work/b', 3)),
      json(201, entry('/work/c', 3)),
      json(200, { url: `/api/v1/environments/${ENV}/files/content?ticket=T1`, expiresAt: '2030-01-01T00:00:00.000Z' }),
    );
    const files = client(fake.fetch).files(ENV);
    expect(await files.stat(FILE)).toEqual(entry(FILE, 3));
    expect(await files.list('/work')).toEqual({ path: '/work', entries: [entry(FILE, 3)], truncated: false });
    expect(await files.find('/work', { glob: '*.bin', maxDepth: 3, maxEntries: 10 })).toEqual({ path: '/work', entries: [{ path: FILE, type: 'file' }], truncated: true });
    expect(await files.mkdir('/work', { parents: true })).toEqual(dir);
    await files.remove('/work', { recursive: true });
    expect(await files.copy(FILE, '/work/b', { overwrite: true })).toEqual(entry('/work/b', 3));
    expect(await files.move(FILE, '/work/c')).toEqual(entry('/work/c', 3));
    expect(await files.downloadUrl(FILE, { inline: true })).toBe(`http://host.test:8080/api/v1/environments/${ENV}/files/content?ticket=T1&disposition=inline`);
    const base = `/api/v1/environments/${ENV}/files`;
    expect(fake.calls.map((c) => [c.method, `${c.url.pathname}${c.url.search}`, c.body])).toEqual([
      ['GET', `${base}/metadata?path=%2Fwork%2Fdata.bin`, undefined],
      ['GET', `${base}/entries?path=%2Fwork`, undefined],
      ['GET', `${base}/find?path=%2Fwork&glob=*.bin&maxDepth=3&maxEntries=10`, undefined],
      ['POST', `${base}/directories`, { path: '/work', parents: true }],
      ['DELETE', `${base}?path=%2Fwork&recursive=true`, undefined],
      ['POST', `${base}/copy`, { source: FILE, destination: '/work/b', overwrite: true }],
      ['POST', `${base}/move`, { source: FILE, destination: '/work/c', overwrite: false }],
      ['POST', `${base}/content/tickets?path=%2Fwork%2Fdata.bin`, undefined],
    ]);
  });

  it('an answer that is not a file entry is DECODE_FAILED', async () => {
    const fake = new FakeFetch().reply(json(200, { path: FILE }));
    const error = await client(fake.fetch).files(ENV).stat(FILE).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('DECODE_FAILED');
  });
});

describe('HostFiles.changes$', () => {
  it('decodes each change event, ignores other events, and closes the stream on unsubscribe', async () => {
    const created = { kind: 'created', entry: entry('/work/new.txt', 5) };
    const removed = { kind: 'removed', entry: entry('/work/old.txt', 9) };
    const body = new SseBody(': ping\n\n', `event: change\ndata: ${JSON.stringify(created)}\n\n`, 'event: other\ndata: {}\n\n', `event: change\ndata: ${JSON.stringify(removed)}\n\n`);
    const fake = new FakeFetch().reply(body);
    const changes = await firstValueFrom(client(fake.fetch).files(ENV).changes$('/work').pipe(take(2), toArray()));
    expect(changes).toEqual([created, removed]);
    expect(`${fake.calls[0]?.url.pathname}${fake.calls[0]?.url.search}`).toBe(`/api/v1/environments/${ENV}/files/changes?path=%2Fwork`);
    expect(body.cancelled).toBe(true);
  });

  it('a change event that does not decode is DECODE_FAILED', async () => {
    const fake = new FakeFetch().reply(new SseBody(`event: change\ndata: ${JSON.stringify({ kind: 'renamed', entry: entry('/w', 1) })}\n\n`));
    const error = await firstValueFrom(client(fake.fetch).files(ENV).changes$('/work')).catch((e: unknown) => e);
    expect((error as HostApiError).code).toBe('DECODE_FAILED');
  });
});
