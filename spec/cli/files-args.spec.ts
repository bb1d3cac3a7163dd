/**
 * `exec-rx cp` and `exec-rx files` command lines: which side is remote, `-`, `--parallel`, the actions
 * and their own flags, and the host and token found as for `ls`; plus the ls/stat lines and the progress
 * line's figures.
 */
import { VirtualTimeScheduler } from 'rxjs';
import { parseCpArgs, parseFilesArgs, remotePathOf } from '../../src/cli/files-args';
import { UsageError } from '../../src/cli/usage-error';
import { lsLines, statLines } from '../../src/cli/remote/files-command';
import { CopyProgress, formatBytes, formatDuration } from '../../src/cli/remote/copy-progress';
import { remoteBase, remoteJoin, remoteParent } from '../../src/cli/remote/cp-plan';

const ENV = { EXEC_RX_HOST: 'http://127.0.0.1:8080', EXEC_RX_TOKEN: 'tok-0123456789' };
const access = { url: 'http://127.0.0.1:8080', token: 'tok-0123456789' };

describe('exec-rx cp arguments', () => {
  it('reads ENV:/abs/path as the remote side and anything else as a local path', () => {
    expect(parseCpArgs(['./build', 'local:/tmp/build'], ENV)).toEqual({
      access,
      source: { kind: 'local', path: './build' },
      destination: { kind: 'remote', environmentId: 'local', path: '/tmp/build' },
      parallel: 8,
    });
    expect(parseCpArgs(['--parallel', '3', 'env-1:/var/log/app.log', '-'], ENV)).toEqual({
      access,
      source: { kind: 'remote', environmentId: 'env-1', path: '/var/log/app.log' },
      destination: { kind: 'stdio' },
      parallel: 3,
    });
    expect(parseCpArgs(['-', 'win:C:\\Users\\a.txt'], ENV).destination).toEqual({ kind: 'remote', environmentId: 'win', path: 'C:\\Users\\a.txt' });
  });

  it('a colon after a slash, or a relative remote path, is a local path', () => {
    expect(remotePathOf('./a:/b')).toBeUndefined();
    expect(remotePathOf('env:relative')).toBeUndefined();
    expect(remotePathOf('/abs/x:y')).toBeUndefined();
  });

  it.each([
    [['a', 'b'], "cp: one side must be an environment's path, ENV:/abs/path"],
    [['e:/a', 'f:/b'], "cp: only one side may be an environment's path (a copy within an environment: exec-rx run -- cp)"],
    [['-', '-'], "cp: one side must be an environment's path, ENV:/abs/path"],
    [['e:/a'], 'cp takes a source and a destination: exec-rx cp SRC DST'],
    [['--parallel', '0', 'e:/a', 'b'], '--parallel expects a whole number from 1 to 64'],
    [['--parallel', '65', 'e:/a', 'b'], '--parallel expects a whole number from 1 to 64'],
    [['--parallel', '2x', 'e:/a', 'b'], '--parallel expects a whole number from 1 to 64'],
    [['bad id:/a', 'b'], '"bad id:/a": the environment id before ":" must be letters, digits, ".", "_" or "-" (a local path with a colon: write ./bad id:/a)'],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseCpArgs(args, ENV)).toThrow(new UsageError(message));
  });

  it('takes the host and token as ls does: --host (repeated for replicas), --token-file, else the environment; none is a usage error', () => {
    const read = (path: string): string => (path === '/t' ? 'file-token-0123\n' : '');
    expect(parseCpArgs(['--host', 'http://a:1', '--host', 'http://b:2', '--token-file', '/t', 'e:/a', 'b'], {}, read).access).toEqual({
      url: 'http://a:1',
      urls: ['http://a:1', 'http://b:2'],
      token: 'file-token-0123',
    });
    expect(() => parseCpArgs(['e:/a', 'b'], {})).toThrow(new UsageError('no host: pass --host URL or set EXEC_RX_HOST'));
    expect(() => parseCpArgs(['--token', 'x', 'e:/a', 'b'], ENV)).toThrow(UsageError);
  });
});

describe('exec-rx files arguments', () => {
  it('parses each action with its own flag', () => {
    const target = { kind: 'remote', environmentId: 'e', path: '/w' };
    expect(parseFilesArgs(['ls', '--json', 'e:/w'], ENV)).toEqual({ action: 'ls', access, targets: [target], json: true });
    expect(parseFilesArgs(['stat', 'e:/w'], ENV)).toEqual({ action: 'stat', access, targets: [target], json: false });
    expect(parseFilesArgs(['rm', '-r', 'e:/w', 'e:/x'], ENV)).toEqual({ action: 'rm', access, targets: [target, { ...target, path: '/x' }], recursive: true });
    expect(parseFilesArgs(['mkdir', '-p', 'e:/w'], ENV)).toEqual({ action: 'mkdir', access, targets: [target], parents: true });
    expect(parseFilesArgs(['mkdir', '--parents', 'e:/w'], ENV)).toEqual({ action: 'mkdir', access, targets: [target], parents: true });
  });

  it.each([
    [[], 'files needs ls, stat, rm or mkdir'],
    [['cat', 'e:/w'], 'files: unknown action "cat"'],
    [['ls'], 'files ls needs at least one ENV:/path'],
    [['ls', '/local'], 'files ls: "/local" is not ENV:/abs/path'],
    [['ls', '-r', 'e:/w'], 'files ls takes no --recursive'],
    [['rm', '-p', 'e:/w'], 'files rm takes no --parents'],
    [['mkdir', '--json', 'e:/w'], 'files mkdir takes no --json'],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseFilesArgs(args, ENV)).toThrow(new UsageError(message));
  });
});

describe('what cp and files print', () => {
  const entry = (name: string, type: 'file' | 'directory' | 'other', size: number, isSymlink = false) => ({
    path: `/w/${name}`,
    name,
    type,
    size,
    modifiedAt: '2024-03-05T07:08:09.123Z',
    isSymlink,
    etag: type === 'file' ? `W/"${size}-1709622489123"` : null,
  });

  it('ls: one line per entry like ls -l, the sizes aligned', () => {
    expect(lsLines([entry('a.txt', 'file', 5), entry('dir', 'directory', 4096), entry('link', 'file', 12, true), entry('fifo', 'other', 0)])).toBe(
      ['-    5 2024-03-05 07:08 a.txt', 'd 4096 2024-03-05 07:08 dir', 'l   12 2024-03-05 07:08 link', '?    0 2024-03-05 07:08 fifo', ''].join('\n'),
    );
  });

  it('stat: the fields one per line', () => {
    expect(statLines(entry('a.txt', 'file', 5))).toBe('path: /w/a.txt\ntype: file\nsize: 5\nmodified: 2024-03-05T07:08:09.123Z\netag: W/"5-1709622489123"\n');
  });

  it('remote paths: join, base and parent, POSIX and Windows', () => {
    expect([remoteJoin('/w', 'a'), remoteJoin('/', 'a'), remoteJoin('C:\\w', 'a')]).toEqual(['/w/a', '/a', 'C:\\w\\a']);
    expect([remoteBase('/w/a/'), remoteBase('C:\\w\\b')]).toEqual(['a', 'b']);
    expect([remoteParent('/w/a'), remoteParent('/a'), remoteParent('C:\\a'), remoteParent('/')]).toEqual(['/w', '/', 'C:\\', undefined]);
  });

  it('the progress line: files, bytes, rate and ETA on a terminal, redrawn on the scheduler; nothing when not a terminal', () => {
    const scheduler = new VirtualTimeScheduler();
    const written: string[] = [];
    const progress = new CopyProgress({ write: (text) => written.push(text), isTTY: true }, scheduler);
    progress.planned(4 * 1024 * 1024);
    progress.planned(4 * 1024 * 1024);
    progress.start();
    progress.moved(2 * 1024 * 1024);
    progress.filesDone = 0;
    scheduler.maxFrames = 1000;
    scheduler.flush();
    expect(written.at(-1)).toBe('\r\u001b[K0/2 files  2.0 MiB / 8.0 MiB  2.0 MiB/s  ETA 3s');
    progress.say('cannot copy x: gone');
    expect(written.slice(-2)).toEqual(['\r\u001b[K', 'exec-rx: cannot copy x: gone\n']);
    progress.stop();

    const piped: string[] = [];
    const quiet = new CopyProgress({ write: (text) => piped.push(text) }, scheduler);
    quiet.planned(10);
    quiet.start();
    quiet.moved(10);
    scheduler.flush();
    quiet.stop();
    expect(piped).toEqual([]);
    expect([formatBytes(512), formatBytes(1536), formatDuration(59), formatDuration(61), formatDuration(3723)]).toEqual(['512 B', '1.5 KiB', '59s', '1:01', '1:02:03']);
  });
});
