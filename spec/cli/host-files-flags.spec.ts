/** `exec-rx host`'s operator API flags beside the storage ones: the file routes' and `--api-rate`. */
import { parseHostArgs, UsageError } from '../../src/cli/args';

describe('exec-rx host file and API flags', () => {
  it('takes --max-upload-bytes as a size, --files-root repeated, --file-requests and --api-rate as numbers', () => {
    const options = parseHostArgs(['--max-upload-bytes', '4GiB', '--files-root', '/srv/a', '--files-root', '/srv/b', '--file-requests', '8', '--api-rate', '2000']);
    expect({ maxUploadBytes: options.maxUploadBytes, filesRoots: options.filesRoots, fileRequests: options.fileRequests, apiRate: options.apiRate }).toEqual({
      maxUploadBytes: 4 * 1024 ** 3,
      filesRoots: ['/srv/a', '/srv/b'],
      fileRequests: 8,
      apiRate: 2000,
    });
  });

  it('leaves each unset when not given (the operator API defaults: 16 GiB, no root, 4, 100/s)', () => {
    const options = parseHostArgs([]);
    expect({ maxUploadBytes: options.maxUploadBytes, filesRoots: options.filesRoots, fileRequests: options.fileRequests, apiRate: options.apiRate }).toEqual({
      maxUploadBytes: undefined,
      filesRoots: [],
      fileRequests: undefined,
      apiRate: undefined,
    });
  });

  it.each([
    [['--files-root', 'relative/dir'], '--files-root expects an absolute directory'],
    [['--files-root', '/srv/../etc'], '--files-root expects an absolute directory'],
    [['--file-requests', '0'], '--file-requests expects a whole number from 1 to 64'],
    [['--file-requests', '65'], '--file-requests expects a whole number from 1 to 64'],
    [['--api-rate', '0'], '--api-rate expects a whole number'],
    [['--api-rate', '1.5'], '--api-rate expects a whole number'],
    [['--max-upload-bytes', 'lots'], '--max-upload-bytes'],
  ])('refuses %j with a usage error', (args, message) => {
    expect(() => parseHostArgs(args)).toThrow(UsageError);
    expect(() => parseHostArgs(args)).toThrow(message);
  });
});
