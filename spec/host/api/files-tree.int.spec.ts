/**
 * The file routes on directories, and their bad input, against a real host and a real codex executor:
 * metadata, a sorted listing, find by glob, mkdir, remove (404 for a missing path, 409 for a non-empty
 * directory without recursive), copy and move; paths that are relative, hold `..` or NUL, or are too long,
 * and a symlink out of `--files-root`, each refused with nothing changed on disk; a view token refused even
 * a GET; a write where the executor cannot write; the change stream's created/changed/removed events.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileChange, FileEntry, FileListing, FindResult } from '../../../src/wire/files-api';
import type { ApiResponse } from './api-client';
import type { ApiHost } from './api-host';
import { expectProblem, expectStatus, OPERATOR_TOKEN, startApiHost } from './api-host';
import { filesUrl, raw } from './files-support';

const ENV = 'files-tree';
const VIEW_TOKEN = 'files-tree-view-token-do-not-print';

describe('operator API: files and directories', () => {
  let setup: ApiHost;
  let base: string;
  let root: string;
  let outside: string;
  const problem = (response: ApiResponse, status: number, code: string): void => void expectProblem(response, status, code, setup.host.instanceId);

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'exec-rx-files-tree-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    setup = await startApiHost({
      environmentId: ENV,
      tokens: [{ name: 'ops', secret: OPERATOR_TOKEN }, { name: 'watcher', role: 'view', secret: VIEW_TOKEN }],
      operator: { files: { roots: [root] } },
    });
  });

  afterAll(() => {
    rmSync(base, { recursive: true, force: true });
  });

  it('answers a path metadata and a directory listing sorted by name, with sizes and times', async () => {
    const dir = join(root, 'listed');
    mkdirSync(dir);
    writeFileSync(join(dir, 'b.txt'), 'bb');
    writeFileSync(join(dir, 'a.txt'), 'a');
    mkdirSync(join(dir, 'c'));
    const meta = expectStatus(await setup.api.get(filesUrl(ENV, '/metadata', { path: join(dir, 'b.txt') })), 200) as FileEntry;
    expect({ ...meta, modifiedAt: typeof meta.modifiedAt }).toEqual({ path: join(dir, 'b.txt'), name: 'b.txt', type: 'file', size: 2, modifiedAt: 'string', isSymlink: false, etag: meta.etag });
    const listing = expectStatus(await setup.api.get(filesUrl(ENV, '/entries', { path: dir })), 200) as FileListing;
    expect({ path: listing.path, truncated: listing.truncated, entries: listing.entries.map((e) => [e.name, e.type, e.size]) }).toEqual({
      path: dir,
      truncated: false,
      entries: [
        ['a.txt', 'file', 1],
        ['b.txt', 'file', 2],
        ['c', 'directory', listing.entries[2]?.size],
      ],
    });
    problem(await setup.api.get(filesUrl(ENV, '/metadata', { path: join(dir, 'missing') })), 404, 'FILE_NOT_FOUND');
    problem(await setup.api.get(filesUrl(ENV, '/entries', { path: join(dir, 'a.txt') })), 409, 'NOT_A_DIRECTORY');
    problem(await setup.api.get(filesUrl(ENV, '/content', { path: dir })), 409, 'IS_A_DIRECTORY');
  });

  it('finds by glob: a name glob anywhere, a path glob from the walked directory', async () => {
    const dir = join(root, 'found');
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    for (const file of ['src/a.ts', 'src/deep/b.ts', 'src/c.js', 'd.ts']) writeFileSync(join(dir, file), '');
    const byName = expectStatus(await setup.api.get(filesUrl(ENV, '/find', { path: dir, glob: '*.ts' })), 200) as FindResult;
    expect(byName.entries.map((e) => e.path).sort()).toEqual([join(dir, 'd.ts'), join(dir, 'src/a.ts'), join(dir, 'src/deep/b.ts')]);
    const byPath = expectStatus(await setup.api.get(filesUrl(ENV, '/find', { path: dir, glob: 'src/**/*.ts' })), 200) as FindResult;
    expect(byPath.entries.map((e) => e.path).sort()).toEqual([join(dir, 'src/a.ts'), join(dir, 'src/deep/b.ts')]);
    const capped = expectStatus(await setup.api.get(filesUrl(ENV, '/find', { path: dir, maxEntries: '2' })), 200) as FindResult;
    expect({ count: capped.entries.length, truncated: capped.truncated }).toEqual({ count: 2, truncated: true });
  });

  it('makes directories (parents on request), removes (404 missing, 409 non-empty without recursive), copies and moves', async () => {
    const dir = join(root, 'ops');
    expectStatus(await setup.api.post(filesUrl(ENV, '/directories'), { path: dir }), 201);
    problem(await setup.api.post(filesUrl(ENV, '/directories'), { path: dir }), 409, 'FILE_EXISTS');
    problem(await setup.api.post(filesUrl(ENV, '/directories'), { path: join(dir, 'x', 'y') }), 404, 'FILE_NOT_FOUND');
    expectStatus(await setup.api.post(filesUrl(ENV, '/directories'), { path: join(dir, 'x', 'y'), parents: true }), 201);
    // With parents, as mkdir -p: a directory already there is no error; a file there still is.
    expect(expectStatus(await setup.api.post(filesUrl(ENV, '/directories'), { path: join(dir, 'x', 'y'), parents: true }), 200)).toMatchObject({ type: 'directory', name: 'y' });
    writeFileSync(join(dir, 'plain'), 'file');
    problem(await setup.api.post(filesUrl(ENV, '/directories'), { path: join(dir, 'plain'), parents: true }), 409, 'FILE_EXISTS');
    rmSync(join(dir, 'plain'));
    writeFileSync(join(dir, 'x', 'y', 'f.txt'), 'payload');
    problem(await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'nothing') })), 404, 'FILE_NOT_FOUND');
    problem(await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'x') })), 409, 'DIRECTORY_NOT_EMPTY');
    expect(existsSync(join(dir, 'x', 'y', 'f.txt'))).toBe(true);
    const copied = expectStatus(await setup.api.post(filesUrl(ENV, '/copy'), { source: join(dir, 'x'), destination: join(dir, 'x2') }), 201) as FileEntry;
    expect(copied.type).toBe('directory');
    expect(readFileSync(join(dir, 'x2', 'y', 'f.txt'), 'utf8')).toBe('payload');
    problem(await setup.api.post(filesUrl(ENV, '/copy'), { source: join(dir, 'x'), destination: join(dir, 'x2') }), 409, 'FILE_EXISTS');
    const moved = expectStatus(await setup.api.post(filesUrl(ENV, '/move'), { source: join(dir, 'x2', 'y', 'f.txt'), destination: join(dir, 'g.txt') }), 201) as FileEntry;
    expect({ name: moved.name, size: moved.size, gone: existsSync(join(dir, 'x2', 'y', 'f.txt')) }).toEqual({ name: 'g.txt', size: 7, gone: false });
    writeFileSync(join(dir, 'h.txt'), 'old');
    problem(await setup.api.post(filesUrl(ENV, '/move'), { source: join(dir, 'g.txt'), destination: join(dir, 'h.txt') }), 409, 'FILE_EXISTS');
    expectStatus(await setup.api.post(filesUrl(ENV, '/move'), { source: join(dir, 'g.txt'), destination: join(dir, 'h.txt'), overwrite: true }), 201);
    expect(readFileSync(join(dir, 'h.txt'), 'utf8')).toBe('payload');
    expect((await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'x'), recursive: 'true' }))).status).toBe(204);
    expect((await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'h.txt') }))).status).toBe(204);
    expect(readdirSync(dir).sort()).toEqual(['x2']);
    const audit = setup.log.filter((line) => line.startsWith('audit: ') && line.includes(dir));
    expect(audit.some((line) => line.startsWith(`audit: file move ${join(dir, 'g.txt')} to ${join(dir, 'h.txt')} in ${ENV} by ops: 201`))).toBe(true);
  });

  it('refuses relative, .., NUL and over-long paths with 400 INVALID_PATH, and changes nothing', async () => {
    const before = readdirSync(root).sort();
    for (const path of ['relative/x', `${root}/../outside/secret.txt`, `${root}/a\0b`, `/${'a'.repeat(4100)}`, '']) {
      problem(await setup.api.get(filesUrl(ENV, '/metadata', { path })), 400, 'INVALID_PATH');
      problem(await raw(setup.host.url, 'PUT', filesUrl(ENV, '/content', { path }), { token: OPERATOR_TOKEN, body: Buffer.from('x') }).then(asApi), 400, 'INVALID_PATH');
      problem(await setup.api.delete(filesUrl(ENV, '', { path })), 400, 'INVALID_PATH');
    }
    expect(readdirSync(root).sort()).toEqual(before);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('refuses a path outside --files-root, and a symlink out of it, with 403 OUTSIDE_FILES_ROOT', async () => {
    symlinkSync(outside, join(root, 'escape'));
    problem(await setup.api.get(filesUrl(ENV, '/content', { path: join(outside, 'secret.txt') })), 403, 'OUTSIDE_FILES_ROOT');
    problem(await setup.api.get(filesUrl(ENV, '/content', { path: join(root, 'escape', 'secret.txt') })), 403, 'OUTSIDE_FILES_ROOT');
    const put = await raw(setup.host.url, 'PUT', filesUrl(ENV, '/content', { path: join(root, 'escape', 'new.txt') }), { token: OPERATOR_TOKEN, body: Buffer.from('x') });
    problem(asApi(put), 403, 'OUTSIDE_FILES_ROOT');
    problem(await setup.api.delete(filesUrl(ENV, '', { path: join(root, 'escape', 'secret.txt') })), 403, 'OUTSIDE_FILES_ROOT');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('refuses a view token every file route, a GET of metadata too (403 FORBIDDEN_ROLE)', async () => {
    const viewer = setup.api.as(VIEW_TOKEN);
    problem(await viewer.get(filesUrl(ENV, '/metadata', { path: root })), 403, 'FORBIDDEN_ROLE');
    problem(await viewer.get(filesUrl(ENV, '/content', { path: join(root, 'x') })), 403, 'FORBIDDEN_ROLE');
    problem(await viewer.post(filesUrl(ENV, '/content/tickets', { path: join(root, 'x') })), 403, 'FORBIDDEN_ROLE');
  });

  it('maps a write the executor cannot make: a file where a directory is meant (409)', async () => {
    // The specs may run as root, for whom permissions are not enforced: a read-only mode proves nothing then.
    writeFileSync(join(root, 'plain'), 'x');
    const under = await raw(setup.host.url, 'PUT', filesUrl(ENV, '/content', { path: join(root, 'plain', 'child.txt') }), { token: OPERATOR_TOKEN, body: Buffer.from('x') });
    problem(asApi(under), 409, 'NOT_A_DIRECTORY');
    expect(readFileSync(join(root, 'plain'), 'utf8')).toBe('x');
  });

  it('maps what /proc refuses even root (a new file there) to 403 FILE_FORBIDDEN or 404, on a host without roots', async () => {
    // The roots of this spec's host confine it to its tree: a second host without roots writes under /proc.
    const open = await startApiHost({ environmentId: `${ENV}-open` });
    const put = await raw(open.host.url, 'PUT', filesUrl(`${ENV}-open`, '/content', { path: '/proc/exec-rx-spec.txt' }), { token: OPERATOR_TOKEN, body: Buffer.from('x') });
    const answer = asApi(put);
    expect(answer.status === 403 || answer.status === 404 ? (answer.body as { code: string }).code : answer.text).toMatch(/^(FILE_FORBIDDEN|FILE_NOT_FOUND)$/);
    expect(existsSync('/proc/exec-rx-spec.txt')).toBe(false);
  });

  it('streams created, changed and removed entries of a watched directory', async () => {
    const dir = join(root, 'watched');
    mkdirSync(dir);
    writeFileSync(join(dir, 'kept.txt'), 'one');
    writeFileSync(join(dir, 'gone.txt'), 'bye');
    const opened = await setup.api.events(filesUrl(ENV, '/changes', { path: dir }));
    if (!('stream' in opened)) throw new Error(`changes answered ${opened.refused.status}: ${opened.refused.text}`);
    try {
      // The stream opened once the first poll took the directory as it was.
      writeFileSync(join(dir, 'new.txt'), 'new');
      const created = await opened.stream.next((e) => e.event === 'change' && (JSON.parse(e.data) as FileChange).entry.name === 'new.txt');
      expect((JSON.parse(created.data) as FileChange).kind).toBe('created');
      writeFileSync(join(dir, 'kept.txt'), 'changed!');
      rmSync(join(dir, 'gone.txt'));
      const changed = await opened.stream.next((e) => e.event === 'change' && (JSON.parse(e.data) as FileChange).entry.name === 'kept.txt');
      const removed = await opened.stream.next((e) => e.event === 'change' && (JSON.parse(e.data) as FileChange).entry.name === 'gone.txt');
      expect([JSON.parse(changed.data), JSON.parse(removed.data)].map((c: FileChange) => [c.kind, c.entry.size])).toEqual([
        ['changed', 8],
        ['removed', 3],
      ]);
    } finally {
      await opened.stream.close();
    }
  });
});

/** A raw answer as the API client's (for expectProblem). */
function asApi(response: { status: number; headers: ApiResponse['headers']; body: Buffer }): ApiResponse {
  const text = response.body.toString('utf8');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, body };
}
