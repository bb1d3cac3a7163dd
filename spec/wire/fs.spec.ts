import * as E from 'fp-ts/lib/Either';
import { decodeWith } from '../../src/wire/decode';
import { FsEmptyResponse, FsOpenParams, FsReadDirectoryResponse, FsWalkParams, FsWalkResponse, FsWatchMissingParams, FsWriteFileParams } from '../../src/wire/fs';

describe('fs codecs', () => {
  it('encodes file data as base64', () => {
    expect(FsWriteFileParams.encode({ path: 'file:///tmp/x', dataBase64: Buffer.from('hello world\n') })).toEqual({
      path: 'file:///tmp/x',
      dataBase64: 'aGVsbG8gd29ybGQK',
    });
  });

  it('accepts an optional sandbox (or null) on path methods', () => {
    const params = { handleId: 'h1', path: 'file:///tmp/x', mode: 'replace', sandbox: null };
    expect(decodeWith(FsOpenParams)(params)).toEqual(E.right(params));
  });

  it('rejects an unknown open mode', () => {
    expect(E.isLeft(decodeWith(FsOpenParams)({ handleId: 'h1', path: 'file:///tmp/x', mode: 'append' }))).toBe(true);
  });

  it('requires every walk option', () => {
    const options = { maxDepth: 0, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: false, pruneHiddenDirectories: true };
    expect(decodeWith(FsWalkParams)({ path: 'file:///tmp', options })).toEqual(E.right({ path: 'file:///tmp', options }));
    expect(E.isLeft(decodeWith(FsWalkParams)({ path: 'file:///tmp', options: { maxDepth: 0 } }))).toBe(true);
  });

  it('decodes directory and walk listings', () => {
    const listing = { entries: [{ fileName: 'sub', isDirectory: true, isFile: false }] };
    const walk = { entries: [{ path: 'file:///tmp/a.txt', kind: 'file' }], errors: [], truncated: false };
    expect([decodeWith(FsReadDirectoryResponse)(listing), decodeWith(FsWalkResponse)(walk)]).toEqual([E.right(listing), E.right(walk)]);
  });

  it('reads any object as the empty result', () => {
    expect(decodeWith(FsEmptyResponse)({})).toEqual(E.right({}));
  });

  it('takes watch ids as integers', () => {
    expect(decodeWith(FsWatchMissingParams)({ watchId: 1, missing: ['file:///tmp/later'] })).toEqual(E.right({ watchId: 1, missing: ['file:///tmp/later'] }));
    expect(E.isLeft(decodeWith(FsWatchMissingParams)({ watchId: 1.5, missing: [] }))).toBe(true);
  });
});
