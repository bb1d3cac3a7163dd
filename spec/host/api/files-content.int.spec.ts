/**
 * The file routes' content, against a real host and a real codex executor: an upload and a download
 * round-trip sha256-exact; Range (206, 416, a malformed one ignored), If-Range by date, HEAD without
 * opening the file, ETag / If-None-Match → 304; uploads with If-None-Match: * and If-Match, over the limit
 * (413), cut halfway (target unchanged, no temp file left); the safety headers; a download ticket.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileEntry } from '../../../src/wire/files-api';
import type { ApiHost } from './api-host';
import { expectProblem, OPERATOR_TOKEN, startApiHost } from './api-host';
import { waitForFileGone } from '../../support/wait-for-file';
import { bytesOf, filesUrl, namesIn, raw, sha256, waitForEntry } from './files-support';

const ENV = 'files-content';
const MAX_UPLOAD = 8 * 1024 * 1024;
const MIB = 1024 * 1024;

describe('operator API: file content', () => {
  let setup: ApiHost;
  let dir: string;
  /** Every JSON-RPC call the host made to the executor, by method, as it settled. */
  const calls: string[] = [];
  const content = (path: string, extra: Record<string, string> = {}): string => filesUrl(ENV, '/content', { path, ...extra });
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) =>
    raw(setup.host.url, method, path, { token: OPERATOR_TOKEN, headers, ...(body === undefined ? {} : { body }) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-content-'));
    setup = await startApiHost({
      environmentId: ENV,
      operator: { files: { maxUploadBytes: MAX_UPLOAD } },
      host: { manager: { onCall: (method) => calls.push(method) } },
    });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips an upload and a download of a few MiB sha256-exact, 201 then 200 with the entry and its ETag', async () => {
    const bytes = bytesOf(5 * MIB + 123);
    const target = join(dir, 'round.bin');
    const created = await send('PUT', content(target), { 'content-type': 'application/octet-stream' }, bytes);
    expect(created.status).toBe(201);
    const entry = JSON.parse(created.body.toString('utf8')) as FileEntry;
    expect({ ...entry, modifiedAt: typeof entry.modifiedAt, etag: typeof entry.etag }).toEqual({
      path: target,
      name: 'round.bin',
      type: 'file',
      size: bytes.byteLength,
      modifiedAt: 'string',
      isSymlink: false,
      etag: 'string',
    });
    expect(created.headers['etag']).toBe(entry.etag);
    expect(sha256(readFileSync(target))).toBe(sha256(bytes));
    const got = await send('GET', content(target));
    expect({ status: got.status, complete: got.complete, sha: sha256(got.body), length: got.headers['content-length'], etag: got.headers['etag'] }).toEqual({
      status: 200,
      complete: true,
      sha: sha256(bytes),
      length: String(bytes.byteLength),
      etag: entry.etag,
    });
    const again = await send('PUT', content(target), {}, Buffer.from('second'));
    expect(again.status).toBe(200);
    expect(readFileSync(target, 'utf8')).toBe('second');
    expect(namesIn(dir).filter((name) => name.includes('exec-rx-upload'))).toEqual([]);
  });

  it('answers a download with the safety headers, a type by extension, and inline only for text and raster images', async () => {
    writeFileSync(join(dir, 'page.html'), '<script>alert(1)</script>');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const html = await send('GET', content(join(dir, 'page.html'), { disposition: 'inline' }));
    expect({
      type: html.headers['content-type'],
      disposition: html.headers['content-disposition'],
      nosniff: html.headers['x-content-type-options'],
      csp: html.headers['content-security-policy'],
    }).toEqual({
      type: 'text/html; charset=utf-8',
      disposition: `attachment; filename="page.html"; filename*=UTF-8''page.html`,
      nosniff: 'nosniff',
      csp: "sandbox; default-src 'none'",
    });
    const text = await send('GET', content(join(dir, 'notes.txt'), { disposition: 'inline' }));
    expect({ type: text.headers['content-type'], disposition: text.headers['content-disposition'], body: text.body.toString() }).toEqual({
      type: 'text/plain; charset=utf-8',
      disposition: `inline; filename="notes.txt"; filename*=UTF-8''notes.txt`,
      body: 'hello',
    });
  });

  it('answers Range with 206 and Content-Range, past the end 416 problem+json with bytes */size, a malformed one with the whole file', async () => {
    const bytes = bytesOf(3 * MIB);
    const target = join(dir, 'ranged.bin');
    writeFileSync(target, bytes);
    const part = await send('GET', content(target), { range: `bytes=${MIB - 10}-${2 * MIB + 9}` });
    expect({ status: part.status, range: part.headers['content-range'], same: part.body.equals(bytes.subarray(MIB - 10, 2 * MIB + 10)) }).toEqual({
      status: 206,
      range: `bytes ${MIB - 10}-${2 * MIB + 9}/${bytes.byteLength}`,
      same: true,
    });
    const suffix = await send('GET', content(target), { range: 'bytes=-100' });
    expect({ status: suffix.status, same: suffix.body.equals(bytes.subarray(bytes.byteLength - 100)) }).toEqual({ status: 206, same: true });
    const past = await send('GET', content(target), { range: `bytes=${bytes.byteLength}-` });
    expect({ status: past.status, range: past.headers['content-range'], type: past.headers['content-type'], body: JSON.parse(past.body.toString()) as unknown }).toEqual({
      status: 416,
      range: `bytes */${bytes.byteLength}`,
      type: 'application/problem+json',
      body: expect.objectContaining({ status: 416, code: 'RANGE_NOT_SATISFIABLE' }),
    });
    for (const malformed of ['bytes=abc', 'lines=1-2', 'bytes=5-1', 'bytes=0-1,5-6']) {
      const whole = await send('GET', content(target), { range: malformed });
      expect({ malformed, status: whole.status, same: whole.body.equals(bytes) }).toEqual({ malformed, status: 200, same: true });
    }
  });

  it('applies Range under If-Range only when the date is the file’s Last-Modified', async () => {
    const target = join(dir, 'if-range.txt');
    writeFileSync(target, '0123456789');
    const head = await send('HEAD', content(target));
    const lastModified = String(head.headers['last-modified']);
    const holds = await send('GET', content(target), { range: 'bytes=2-4', 'if-range': lastModified });
    expect({ status: holds.status, body: holds.body.toString() }).toEqual({ status: 206, body: '234' });
    const stale = await send('GET', content(target), { range: 'bytes=2-4', 'if-range': new Date(Date.parse(lastModified) - 60_000).toUTCString() });
    expect({ status: stale.status, body: stale.body.toString() }).toEqual({ status: 200, body: '0123456789' });
    const byTag = await send('GET', content(target), { range: 'bytes=2-4', 'if-range': String(head.headers['etag']) });
    expect(byTag.status).toBe(200);
  });

  it('answers HEAD from the metadata alone, without opening the file', async () => {
    const target = join(dir, 'head.bin');
    writeFileSync(target, bytesOf(1000));
    const before = calls.length;
    const head = await send('HEAD', content(target));
    expect({ status: head.status, length: head.headers['content-length'], body: head.body.byteLength, ranges: head.headers['accept-ranges'] }).toEqual({
      status: 200,
      length: '1000',
      body: 0,
      ranges: 'bytes',
    });
    // The close of an earlier spec's download may settle after its answer: only what opens or reads counts.
    expect(calls.slice(before).filter((method) => method !== 'fs/close')).toEqual(['fs/getMetadata']);
    const get = calls.length;
    await send('GET', content(target));
    expect(calls.slice(get)).toEqual(expect.arrayContaining(['fs/getMetadata', 'fs/open', 'fs/readBlock', 'fs/close']));
  });

  it('answers If-None-Match with the ETag 304, and a changed file 200', async () => {
    const target = join(dir, 'etag.txt');
    writeFileSync(target, 'one');
    const first = await send('GET', content(target));
    const etag = String(first.headers['etag']);
    expect(etag).toMatch(/^W\/"3-\d+"$/);
    const same = await send('GET', content(target), { 'if-none-match': etag });
    expect({ status: same.status, body: same.body.byteLength }).toEqual({ status: 304, body: 0 });
    writeFileSync(target, 'three');
    expect((await send('GET', content(target), { 'if-none-match': etag })).status).toBe(200);
  });

  it('refuses If-None-Match: * on an existing file and a stale If-Match with 412, leaving the file as it was', async () => {
    const target = join(dir, 'guarded.txt');
    writeFileSync(target, 'kept');
    const exists = await send('PUT', content(target), { 'if-none-match': '*' }, Buffer.from('new'));
    expect(exists.status).toBe(412);
    expect(JSON.parse(exists.body.toString()).code).toBe('PRECONDITION_FAILED');
    const stale = await send('PUT', content(target), { 'if-match': 'W/"4-1"' }, Buffer.from('new'));
    expect({ status: stale.status, code: JSON.parse(stale.body.toString()).code }).toEqual({ status: 412, code: 'PRECONDITION_FAILED' });
    expect(readFileSync(target, 'utf8')).toBe('kept');
    const etag = String((await send('HEAD', content(target))).headers['etag']);
    expect((await send('PUT', content(target), { 'if-match': etag }, Buffer.from('new'))).status).toBe(200);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect((await send('PUT', content(join(dir, 'fresh.txt')), { 'if-none-match': '*' }, Buffer.from('x'))).status).toBe(201);
  });

  it('refuses an upload over the limit with 413 before reading it, leaving the target unchanged', async () => {
    const target = join(dir, 'limit.bin');
    writeFileSync(target, 'before');
    const answer = await send('PUT', content(target), {}, bytesOf(MAX_UPLOAD + 1));
    expectProblem({ status: answer.status, headers: answer.headers, text: answer.body.toString(), body: JSON.parse(answer.body.toString()) }, 413, 'BODY_TOO_LARGE', setup.host.instanceId);
    expect(readFileSync(target, 'utf8')).toBe('before');
    expect(namesIn(dir).filter((name) => name.includes('exec-rx-upload'))).toEqual([]);
  });

  it('leaves the target unchanged and no temp file when the client aborts an upload halfway', async () => {
    const target = join(dir, 'aborted.bin');
    writeFileSync(target, 'unchanged');
    const total = 6 * MIB;
    const url = new URL(setup.host.url);
    const req = request({
      host: url.hostname,
      port: url.port,
      method: 'PUT',
      path: content(target),
      agent: false,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-length': String(total) },
    });
    req.on('error', () => undefined);
    req.write(bytesOf(total / 2));
    // Once the executor holds at least a block of the temp file, the client goes away.
    const temp = await waitForEntry(dir, (name, size) => name.startsWith('.aborted.bin.exec-rx-upload-') && size >= MIB);
    req.destroy();
    await waitForFileGone(join(dir, temp));
    expect(readFileSync(target, 'utf8')).toBe('unchanged');
    expect(namesIn(dir).filter((name) => name.includes('exec-rx-upload'))).toEqual([]);
  });

  it('lets a browser download by a ticket for that one file, once', async () => {
    const target = join(dir, 'ticketed.txt');
    writeFileSync(target, 'by ticket');
    const made = await send('POST', filesUrl(ENV, '/content/tickets', { path: target }));
    expect(made.status).toBe(201);
    const { url } = JSON.parse(made.body.toString()) as { url: string };
    const got = await raw(setup.host.url, 'GET', url, { token: null });
    expect({ status: got.status, body: got.body.toString() }).toEqual({ status: 200, body: 'by ticket' });
    expect((await raw(setup.host.url, 'GET', url, { token: null })).status).toBe(401);
    const other = await send('POST', filesUrl(ENV, '/content/tickets', { path: target }));
    const otherUrl = (JSON.parse(other.body.toString()) as { url: string }).url.replace(encodeURIComponent(target), encodeURIComponent(join(dir, 'notes.txt')));
    expect((await raw(setup.host.url, 'GET', otherUrl, { token: null })).status).toBe(401);
  });
});
