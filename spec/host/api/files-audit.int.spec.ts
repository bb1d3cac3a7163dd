/**
 * Every file act through the operator API goes to the audit trail (issue 41): a write, a mkdir, a copy,
 * a move and a remove, each with its path (and destination), a write with its size, the token's name and
 * the status; never the file's content. Against a real host and a real codex executor.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogFields } from '../../../src/host/host-logger';
import type { ApiHost } from './api-host';
import { OPERATOR_TOKEN, startApiHost } from './api-host';
import { filesUrl, raw } from './files-support';

jest.setTimeout(60_000);

const ENV = 'files-audit-1';
/** A marker in the uploaded content: it must appear in no audit line. */
const SECRET_CONTENT = 'content-that-must-not-be-audited-7f3a';

describe('operator API: the audit trail of file acts', () => {
  let setup: ApiHost;
  let dir: string;
  const lines: { readonly fields: LogFields; readonly msg: string }[] = [];
  const keep = (fields: LogFields, msg: string): void => void lines.push({ fields, msg });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-audit-'));
    setup = await startApiHost({ environmentId: ENV, host: { audit: { debug: keep, info: keep, warn: keep, error: keep } } });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('records a write with its path and size, mkdir, copy, move and remove with their paths, and never the content', async () => {
    const body = Buffer.from(`${SECRET_CONTENT}\n`.repeat(100));
    const file = join(dir, 'a.txt');
    expect((await raw(setup.host.url, 'PUT', filesUrl(ENV, '/content', { path: file }), { token: OPERATOR_TOKEN, body })).status).toBe(201);
    expect((await setup.api.post(filesUrl(ENV, '/directories'), { path: join(dir, 'sub') })).status).toBe(201);
    expect((await setup.api.post(filesUrl(ENV, '/copy'), { source: file, destination: join(dir, 'sub', 'b.txt') })).status).toBe(201);
    expect((await setup.api.post(filesUrl(ENV, '/move'), { source: join(dir, 'sub', 'b.txt'), destination: join(dir, 'c.txt') })).status).toBe(201);
    expect((await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'c.txt') }))).status).toBe(204);
    // A refused act is recorded too, with its code.
    expect((await setup.api.delete(filesUrl(ENV, '', { path: join(dir, 'missing') }))).status).toBe(404);

    const acts = lines.filter((line) => line.fields['audit'] === true).map(({ fields }) => ({
      act: fields['act'],
      path: fields['path'],
      destination: fields['destination'],
      size: fields['size'],
      tokenName: fields['tokenName'],
      environmentId: fields['environmentId'],
      status: fields['status'],
      code: fields['code'],
    }));
    const common = { tokenName: 'token-1', environmentId: ENV };
    expect(acts).toEqual([
      { ...common, act: 'file write', path: file, destination: undefined, size: body.byteLength, status: 201, code: undefined },
      { ...common, act: 'mkdir', path: join(dir, 'sub'), destination: undefined, size: undefined, status: 201, code: undefined },
      { ...common, act: 'file copy', path: file, destination: join(dir, 'sub', 'b.txt'), size: expect.any(Number), status: 201, code: undefined },
      { ...common, act: 'file move', path: join(dir, 'sub', 'b.txt'), destination: join(dir, 'c.txt'), size: expect.any(Number), status: 201, code: undefined },
      { ...common, act: 'file remove', path: join(dir, 'c.txt'), destination: undefined, size: expect.any(Number), status: 204, code: undefined },
      { ...common, act: 'file remove', path: join(dir, 'missing'), destination: undefined, size: undefined, status: 404, code: 'FILE_NOT_FOUND' },
    ]);
    expect(JSON.stringify(lines)).not.toContain(SECRET_CONTENT);
  });
});
