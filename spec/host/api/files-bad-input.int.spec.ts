/**
 * Bad input to the file routes that needs more than a path (issue 41, "Bad input"), against a real host and
 * a real codex executor, each with a clear error and nothing changed on disk:
 * - a 60 MB upload by Node's fetch over a 1 MiB `maxUploadBytes` gets the 413 problem+json (with a
 *   Content-Length and chunked): the host drains the refused body (lingering close) instead of resetting;
 * - disk full: a tmpfs of 4 MiB (mounted by the spec; we run as root) takes an 8 MiB upload → 507;
 * - a read-only directory (a tmpfs remounted read-only: the executor runs as root, so mode bits refuse
 *   nothing) → 403 `FILE_FORBIDDEN`, saying read-only;
 * - an upload cut by a reconnect (the executor's socket dropped by a TCP proxy mid-upload) → 503
 *   `UPLOAD_INTERRUPTED` with Retry-After, the target unchanged, the temp file removed once it is back; and
 *   one cut by an executor restarted under the same id (a new generation): the temp file the old one left is
 *   removed as soon as the new one is connected, not at the next sweep;
 * - the scheduled sweep of orphan temp files, on virtual time (the host's scheduler; the executor's
 *   connection keeps real time): an orphan older than the age is removed, a young one and the temp file of
 *   an upload in flight are kept.
 * The mounts fail the spec loudly when they cannot be made, and are unmounted in afterAll.
 */
import { repeatedBody } from '../../support/repeated-body';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncScheduler, firstValueFrom, VirtualTimeScheduler } from 'rxjs';
import { filter } from 'rxjs/operators';
import { ORPHAN_AGE_MS, SWEEP_EVERY_MS } from '../../../src/host/api/files/upload-sweeper';
import { waitForFileGone } from '../../support/wait-for-file';
import type { DisconnectableProxy } from '../../support/ws-proxy';
import { startDisconnectableProxy } from '../../support/ws-proxy';
import { startDirectExecutor, trackForCleanup } from '../../support/executor';
import { within } from './api-client';
import type { ApiHost } from './api-host';
import { environmentReady, EXECUTOR_CREDENTIALS, OPERATOR_TOKEN, startApiHost } from './api-host';
import { bytesOf, filesUrl, raw, startUpload, waitForEntry } from './files-support';

const ENV = 'files-bad-input';
const MIB = 1024 * 1024;
const SIXTY_MB = 60 * 1000 * 1000;
/** The host's upload limit here: 16 MiB (the 413 host has its own of 1 MiB). */
const MAX_UPLOAD = 16 * MIB;

/** The names of upload temp files in `dir`. */
const tempsIn = (dir: string): string[] => readdirSync(dir).filter((name) => name.includes('.exec-rx-upload-'));

/** Mounts a tmpfs of `size` at `dir` (`mount -t tmpfs`), failing loudly when it cannot. */
function mountTmpfs(dir: string, size: string): void {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error: unknown) {
    throw new Error(`this spec mounts a tmpfs at ${dir} and could not (it must run as root with mount allowed): ${String(error)}`);
  }
}

/** Unmounts `dir` when it is a mount point (afterAll: never throws, so the other cleanup runs). */
function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    // Not mounted (its beforeAll failed before mounting).
  }
}

/** The problem+json of an answer. */
function problemOf(answer: { readonly status: number; readonly headers: Record<string, string | string[] | undefined>; readonly body: Buffer }): { status: number; type: string | undefined; code: unknown; detail: unknown } {
  const body = JSON.parse(answer.body.toString('utf8')) as { code?: unknown; detail?: unknown };
  const type = answer.headers['content-type'];
  return { status: answer.status, type: typeof type === 'string' ? type : undefined, code: body.code, detail: body.detail };
}

describe('operator API: file uploads over the limit, sent by fetch', () => {
  const LIMIT = MIB;
  let setup: ApiHost;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-413-'));
    setup = await startApiHost({ environmentId: `${ENV}-413`, operator: { files: { maxUploadBytes: LIMIT } } });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const url = (path: string): string => `${setup.host.url}${filesUrl(`${ENV}-413`, '/content', { path })}`;
  const headers = { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/octet-stream' };

  const expectBodyTooLarge = async (response: Response): Promise<void> => {
    expect({ status: response.status, type: response.headers.get('content-type') }).toEqual({ status: 413, type: 'application/problem+json' });
    expect(await response.json()).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE', detail: `an upload may be at most ${LIMIT} bytes (--max-upload-bytes)` });
  };

  it('gets 413 BODY_TOO_LARGE for a 60 MB PUT with a Content-Length; the target is unchanged, no temp file', async () => {
    const target = join(dir, 'declared.bin');
    writeFileSync(target, 'before');
    await expectBodyTooLarge(await fetch(url(target), { method: 'PUT', headers, body: Buffer.alloc(SIXTY_MB, 0x61) }));
    expect({ content: readFileSync(target, 'utf8'), temps: tempsIn(dir) }).toEqual({ content: 'before', temps: [] });
  });

  it('gets 413 BODY_TOO_LARGE for a 60 MB PUT streamed chunked, cut once past the limit; the target is unchanged, no temp file', async () => {
    const target = join(dir, 'chunked.bin');
    writeFileSync(target, 'before');
    const body = repeatedBody(SIXTY_MB, new Uint8Array(MIB / 4).fill(0x62));
    await expectBodyTooLarge(await fetch(url(target), { method: 'PUT', headers, body, duplex: 'half' } as RequestInit));
    expect({ content: readFileSync(target, 'utf8'), temps: tempsIn(dir) }).toEqual({ content: 'before', temps: [] });
  });
});

describe('operator API: file uploads the executor cannot take', () => {
  let setup: ApiHost;
  let dir: string;
  let full: string;
  let readOnly: string;
  const content = (path: string): string => filesUrl(ENV, '/content', { path });
  const send = (method: string, path: string, body?: Buffer) => raw(setup.host.url, method, path, { token: OPERATOR_TOKEN, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-bad-input-'));
    full = join(dir, 'full');
    readOnly = join(dir, 'read-only');
    mkdirSync(full);
    mkdirSync(readOnly);
    mountTmpfs(full, '4m');
    writeFileSync(join(full, 'small.txt'), 'small and kept');
    mountTmpfs(readOnly, '1m');
    writeFileSync(join(readOnly, 'kept.txt'), 'kept');
    execFileSync('mount', ['-o', 'remount,ro', readOnly], { stdio: 'pipe' });
    setup = await startApiHost({ environmentId: ENV, operator: { files: { maxUploadBytes: MAX_UPLOAD } } });
  });

  afterAll(() => {
    unmount(full);
    unmount(readOnly);
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 507 INSUFFICIENT_STORAGE for 8 MiB into a 4 MiB tmpfs: the existing file unchanged, no temp file left", async () => {
    const target = join(full, 'small.txt');
    const answer = await send('PUT', content(target), bytesOf(8 * MIB));
    expect(problemOf(answer)).toMatchObject({ status: 507, type: 'application/problem+json', code: 'INSUFFICIENT_STORAGE' });
    expect({ content: readFileSync(target, 'utf8'), names: readdirSync(full) }).toEqual({ content: 'small and kept', names: ['small.txt'] });
  });

  it('answers 403 FILE_FORBIDDEN saying read-only for a write into a read-only file system, and changes nothing', async () => {
    const replaced = await send('PUT', content(join(readOnly, 'kept.txt')), Buffer.from('new'));
    expect(problemOf(replaced)).toMatchObject({ status: 403, type: 'application/problem+json', code: 'FILE_FORBIDDEN', detail: expect.stringContaining('read-only') as string });
    const created = await send('PUT', content(join(readOnly, 'new.txt')), Buffer.from('new'));
    expect(problemOf(created)).toMatchObject({ status: 403, code: 'FILE_FORBIDDEN', detail: expect.stringContaining('read-only') as string });
    expect({ content: readFileSync(join(readOnly, 'kept.txt'), 'utf8'), names: readdirSync(readOnly) }).toEqual({ content: 'kept', names: ['kept.txt'] });
  });
  it('cuts a download whose file changed while it was read: the client sees a short transfer, never a torn file passed as whole', async () => {
    const path = join(dir, 'changing.bin');
    const size = 32 * MIB;
    writeFileSync(path, bytesOf(size));
    const host = new URL(setup.host.url);
    const result = await new Promise<{ status: number; bytes: number; complete: boolean }>((resolve, reject) => {
      const req = request({ host: host.hostname, port: host.port, path: content(path), agent: false, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } }, (res) => {
        let bytes = 0;
        let changed = false;
        const done = (): void => resolve({ status: res.statusCode ?? 0, bytes, complete: res.complete });
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
          if (changed) return;
          changed = true;
          // At the first bytes (32 MiB are far from read) the file grows: size and mtime change.
          appendFileSync(path, 'more');
        });
        res.once('end', done);
        res.once('aborted', done);
        res.once('error', done);
      });
      req.once('error', reject);
      req.end();
    });
    expect(result.status).toBe(200);
    expect(result.complete).toBe(false);
    expect(result.bytes).toBeLessThan(size);
  });
});

describe('operator API: an upload cut by a reconnect', () => {
  const PROXIED = `${ENV}-proxied`;
  let setup: ApiHost;
  let proxy: DisconnectableProxy;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-reconnect-'));
    setup = await startApiHost({ environmentId: `${ENV}-direct` });
    // A second executor dials the host through a TCP proxy that can drop its socket.
    proxy = trackForCleanup(await startDisconnectableProxy(Number(new URL(setup.host.url).port)));
    const ready = environmentReady(setup.host, PROXIED);
    await startDirectExecutor({ remoteUrl: `http://127.0.0.1:${proxy.port}`, environmentId: PROXIED, credentials: EXECUTOR_CREDENTIALS });
    await within(ready, 30_000, `environment ${PROXIED} joining`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers 503 UPLOAD_INTERRUPTED with Retry-After; the target is unchanged and the temp file removed once the environment is back', async () => {
    const target = join(dir, 'target.bin');
    writeFileSync(target, 'unchanged');
    const total = 8 * MIB;
    const { req, answer } = startUpload(setup.host.url, filesUrl(PROXIED, '/content', { path: target }), OPERATOR_TOKEN, total, bytesOf(total / 2));
    // Once the executor holds a block of the temp file, its socket is dropped; then the rest is sent.
    const fail = (error: unknown): void => void req.destroy(error instanceof Error ? error : new Error(String(error)));
    void waitForEntry(dir, (name, size) => name.startsWith('.target.bin.exec-rx-upload-') && size >= MIB).then(() => {
      const before = proxy.connectionCount;
      proxy.pause();
      proxy.resume();
      void proxy.waitForConnection(before + 1, 30_000).then(() => req.end(bytesOf(total / 2)), fail);
    }, fail);
    const refused = await answer;
    expect(problemOf(refused)).toMatchObject({ status: 503, type: 'application/problem+json', code: 'UPLOAD_INTERRUPTED' });
    expect(refused.headers['retry-after']).toBe('2');
    const temps = tempsIn(dir);
    await Promise.all(temps.map((name) => waitForFileGone(join(dir, name), 30_000)));
    expect({ content: readFileSync(target, 'utf8'), temps: tempsIn(dir) }).toEqual({ content: 'unchanged', temps: [] });
  });
});

describe('operator API: an upload cut by an executor restarted under the same id', () => {
  const RESTARTED = `${ENV}-restarted`;
  let setup: ApiHost;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-restart-'));
    setup = await startApiHost({ environmentId: RESTARTED });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers 503 UPLOAD_INTERRUPTED; the temp file the old executor left is removed as soon as the new generation is connected', async () => {
    const target = join(dir, 'target.bin');
    writeFileSync(target, 'unchanged');
    const total = 8 * MIB;
    const { req, answer } = startUpload(setup.host.url, filesUrl(RESTARTED, '/content', { path: target }), OPERATOR_TOKEN, total, bytesOf(total / 2));
    const temp = join(dir, await waitForEntry(dir, (name, size) => name.startsWith('.target.bin.exec-rx-upload-') && size >= MIB));
    await setup.executor.stop();
    await startDirectExecutor({ remoteUrl: setup.host.url, environmentId: RESTARTED, credentials: EXECUTOR_CREDENTIALS });
    await firstValueFrom(setup.host.environments$.pipe(filter((list) => list.some((e) => e.id === RESTARTED && e.generation === 2 && e.state === 'connected'))));
    req.end(bytesOf(total / 2));
    const refused = await answer;
    expect(problemOf(refused)).toMatchObject({ status: 503, type: 'application/problem+json', code: 'UPLOAD_INTERRUPTED' });
    // Not at the next scheduled sweep (10 minutes): once the environment is back.
    await waitForFileGone(temp, 20_000);
    expect({ content: readFileSync(target, 'utf8'), temps: tempsIn(dir) }).toEqual({ content: 'unchanged', temps: [] });
  });
});

describe('operator API: the sweep of orphan upload temp files (virtual time)', () => {
  const SWEPT = `${ENV}-sweep`;
  let setup: ApiHost;
  let dir: string;
  /** The host's clock: virtual, starting at the real now (the SigV4 clock-skew check reads it). */
  const clock = new VirtualTimeScheduler();
  /** The executor calls that settled, by method. */
  const calls: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-sweep-'));
    clock.frame = Date.now();
    setup = await startApiHost({
      environmentId: SWEPT,
      host: { scheduler: clock, manager: { scheduler: asyncScheduler, onCall: (method) => calls.push(method) } },
      // The upload in flight waits out the sweep's hours of virtual time: its client's pause is not what this spec bounds.
      operator: { files: { uploadIdleMs: 24 * 3_600_000 } },
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Resolves once `method` settled `count` more times than `since` had seen. */
  async function settled(method: string, since: number, count: number): Promise<void> {
    const seen = (): number => calls.slice(since).filter((m) => m === method).length;
    for (let spins = 0; seen() < count; spins += 1) {
      if (spins > 100_000) throw new Error(`${method} settled ${seen()} of ${count} times`);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  it('removes an orphan older than the age at the scheduled sweep, keeps a young one and an upload in flight', async () => {
    // An upload to the directory: the host sweeps the directories it uploaded to.
    expect((await raw(setup.host.url, 'PUT', filesUrl(SWEPT, '/content', { path: join(dir, 'done.txt') }), { token: OPERATOR_TOKEN, body: Buffer.from('done') })).status).toBe(201);
    const old = join(dir, '.gone.bin.exec-rx-upload-0123456789abcdef');
    const young = join(dir, '.young.bin.exec-rx-upload-fedcba9876543210');
    writeFileSync(old, 'left by a host that died');
    writeFileSync(young, 'just written');
    const longAgo = new Date(Date.now() - ORPHAN_AGE_MS - 60_000);
    utimesSync(old, longAgo, longAgo);
    // An upload in flight: half its body sent, its temp file holds a block.
    const total = 2 * MIB;
    const { req, answer } = startUpload(setup.host.url, filesUrl(SWEPT, '/content', { path: join(dir, 'flying.bin') }), OPERATOR_TOKEN, total, bytesOf(MIB));
    const flying = await waitForEntry(dir, (name, size) => name.startsWith('.flying.bin.exec-rx-upload-') && size >= MIB);
    // The sweep is due SWEEP_EVERY_MS after the first upload: move the host's clock there.
    const since = calls.length;
    clock.maxFrames = clock.frame + SWEEP_EVERY_MS;
    clock.flush();
    // It stats each of the three temp files and removes one.
    await settled('fs/getMetadata', since, 3);
    await settled('fs/remove', since, 1);
    await waitForFileGone(old, 20_000);
    expect(tempsIn(dir).sort()).toEqual([young, join(dir, flying)].map((path) => path.slice(dir.length + 1)).sort());
    // The upload in flight goes on and lands.
    req.end(bytesOf(MIB));
    expect((await answer).status).toBe(201);
    expect(tempsIn(dir)).toEqual(['.young.bin.exec-rx-upload-fedcba9876543210']);
  });
});

describe('operator API: an upload whose client pauses (virtual time)', () => {
  const IDLE = 'files-idle-1';
  let setup: ApiHost;
  let dir: string;
  /** The host's clock: virtual, starting at the real now (the SigV4 clock-skew check reads it). */
  const clock = new VirtualTimeScheduler();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-idle-'));
    clock.frame = Date.now();
    setup = await startApiHost({ environmentId: IDLE, host: { scheduler: clock, manager: { scheduler: asyncScheduler } } });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has no deadline as a whole past 15 s, and is cut with its temp file removed once its client sends nothing for uploadIdleMs (60 s)', async () => {
    writeFileSync(join(dir, 'target.bin'), 'before');
    const { answer } = startUpload(setup.host.url, filesUrl(IDLE, '/content', { path: join(dir, 'target.bin') }), OPERATOR_TOKEN, 2 * MIB, bytesOf(MIB));
    const closed = answer.then(
      (res) => `answered ${res.status}`,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    await waitForEntry(dir, (name, size) => name.startsWith('.target.bin.exec-rx-upload-') && size >= MIB);
    // 59 s of the client's silence: past the 15 s a request's body has, short of the upload's idle bound.
    const paused = clock.frame;
    clock.maxFrames = paused + 59_000;
    clock.flush();
    expect(readdirSync(dir).filter((name) => name.includes('exec-rx-upload-'))).toHaveLength(1);
    // One more second: cut, the temp file removed, the target as it was.
    clock.maxFrames = paused + 60_001;
    clock.flush();
    expect(await closed).toMatch(/ECONNRESET|socket hang up|answered 408/);
    await waitForFileGone(join(dir, readdirSync(dir).find((name) => name.includes('exec-rx-upload-')) ?? 'none'), 20_000);
    expect(readFileSync(join(dir, 'target.bin'), 'utf8')).toBe('before');
  });
});
