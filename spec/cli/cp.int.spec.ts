/**
 * `exec-rx cp` and `exec-rx files`, the built cli, against a real host (its file routes) and a real
 * codex executor on this machine (so an environment's path is a path here too, read back with node:fs):
 * a file both ways sha256-exact, `-` both ways, a directory of 200 small files both ways compared entry
 * by entry, a partial copy's exit status and lines, and no progress line when stderr is a pipe.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { ApiHost } from '../host/api/api-host';
import { OPERATOR_TOKEN, startApiHost } from '../host/api/api-host';
import { runCli, runCliBytes } from './cli-process';

jest.setTimeout(120_000);

const ENV = 'cli-cp';
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Every file under `root` (relative path → sha256), and every directory (relative path → 'dir'). */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        out[relative(root, path)] = 'dir';
        walk(path);
      } else out[relative(root, path)] = sha256(readFileSync(path));
    }
  };
  walk(root);
  return out;
}

describe('exec-rx cp', () => {
  let setup: ApiHost;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const cli = (args: readonly string[], stdin: string | Uint8Array = ''): ReturnType<typeof runCliBytes> => runCliBytes(args, stdin, env);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-cp-'));
    setup = await startApiHost({ environmentId: ENV });
    env = { ...process.env, EXEC_RX_HOST: setup.host.url, EXEC_RX_TOKEN: OPERATOR_TOKEN };
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('copies a file up and down sha256-exact, into an existing directory under its own name; no progress line in a pipe', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const local = join(work, 'one.bin');
    writeFileSync(local, data);
    const remoteDir = join(work, 'remote-one');
    const up = await cli(['cp', local, `${ENV}:${remoteDir}/nested/up.bin`]);
    expect({ code: up.code, stderr: up.stderr }).toEqual({ code: 0, stderr: '' });
    expect(sha256(readFileSync(join(remoteDir, 'nested', 'up.bin')))).toBe(sha256(data));
    const down = join(work, 'down-one');
    mkdirSync(down);
    const back = await cli(['cp', `${ENV}:${remoteDir}/nested/up.bin`, down]);
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 0, stderr: '' });
    expect(sha256(readFileSync(join(down, 'up.bin')))).toBe(sha256(data));
    // Nothing beside it: the part file was renamed into place.
    expect(readdirSync(down)).toEqual(['up.bin']);
  });

  it('- both ways: stdin to one remote file, one remote file to stdout, byte-exact', async () => {
    const data = randomBytes(1024 * 1024 + 3);
    const remote = join(work, 'stdio', 'from-stdin.bin');
    const up = await cli(['cp', '-', `${ENV}:${remote}`], data);
    expect({ code: up.code, stderr: up.stderr }).toEqual({ code: 0, stderr: '' });
    expect(sha256(readFileSync(remote))).toBe(sha256(data));
    const down = await cli(['cp', `${ENV}:${remote}`, '-']);
    expect({ code: down.code, stderr: down.stderr }).toEqual({ code: 0, stderr: '' });
    expect(sha256(down.stdout)).toBe(sha256(data));
  });

  it('a directory of 200 small files both ways, compared entry by entry', async () => {
    const source = join(work, 'tree');
    for (let i = 0; i < 200; i += 1) {
      const dir = join(source, `d${i % 7}`, i % 2 === 0 ? 'even' : '');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.txt`), randomBytes(i * 13));
    }
    mkdirSync(join(source, 'empty'));
    const expected = tree(source);
    expect(Object.values(expected).filter((v) => v !== 'dir')).toHaveLength(200);
    const remoteRoot = join(work, 'remote-tree');
    const up = await cli(['cp', '--parallel', '5', source, `${ENV}:${remoteRoot}`]);
    expect({ code: up.code, stderr: up.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tree(remoteRoot)).toEqual(expected);
    const downInto = join(work, 'down-tree');
    mkdirSync(downInto);
    const down = await cli(['cp', `${ENV}:${remoteRoot}`, downInto]);
    expect({ code: down.code, stderr: down.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tree(join(downInto, 'remote-tree'))).toEqual(expected);
  });

  it('a partial copy exits 23 with a line per file not copied and a last line counting them; the others are copied', async () => {
    const source = join(work, 'partial');
    mkdirSync(source);
    writeFileSync(join(source, 'a.txt'), 'a');
    writeFileSync(join(source, 'b.txt'), 'b');
    symlinkSync(join(work, 'nothing-here'), join(source, 'dangling'));
    const remoteRoot = join(work, 'remote-partial');
    const result = await cli(['cp', source, `${ENV}:${remoteRoot}`]);
    expect(result.code).toBe(23);
    expect(result.stderr.split('\n')).toEqual([
      `exec-rx: cannot copy ${join(source, 'dangling')}: a symlink to nothing, not copied`,
      'exec-rx: 1 of 3 files not copied (2 copied)',
      '',
    ]);
    expect(readdirSync(remoteRoot).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('a missing source is one line and exit 1; a refused token too', async () => {
    const missing = await cli(['cp', `${ENV}:${join(work, 'no-such')}`, join(work, 'x')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^exec-rx: .*\(FILE_NOT_FOUND\)\n$/);
    const refused = await runCliBytes(['cp', '-', `${ENV}:${join(work, 'y')}`], 'y', { ...env, EXEC_RX_TOKEN: 'wrong-token-0123456789' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refused the operator token (401)');
  });
});

describe('exec-rx files', () => {
  let setup: ApiHost;
  let work: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-files-'));
    setup = await startApiHost({ environmentId: ENV });
    env = { ...process.env, EXEC_RX_HOST: setup.host.url, EXEC_RX_TOKEN: OPERATOR_TOKEN };
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('mkdir -p, ls like ls -l, stat, rm -r', async () => {
    const dir = join(work, 'a', 'b');
    expect(await runCli(['files', 'mkdir', '-p', `${ENV}:${dir}`], '', env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(statSync(dir).isDirectory()).toBe(true);
    writeFileSync(join(dir, 'hello.txt'), 'hello');
    mkdirSync(join(dir, 'sub'));
    const ls = await runCli(['files', 'ls', `${ENV}:${dir}`], '', env);
    expect({ code: ls.code, stderr: ls.stderr }).toEqual({ code: 0, stderr: '' });
    const [file, sub, end] = ls.stdout.split('\n');
    expect({ file, sub, end }).toEqual({
      file: expect.stringMatching(/^- +5 \d{4}-\d\d-\d\d \d\d:\d\d hello\.txt$/),
      sub: expect.stringMatching(/^d +\d+ \d{4}-\d\d-\d\d \d\d:\d\d sub$/),
      end: '',
    });
    // The sizes are aligned: both names start in the same column.
    expect(file?.indexOf('hello.txt')).toBe(sub?.indexOf('sub'));
    const stat = await runCli(['files', 'stat', '--json', `${ENV}:${join(dir, 'hello.txt')}`], '', env);
    expect(JSON.parse(stat.stdout)).toEqual(expect.objectContaining({ path: join(dir, 'hello.txt'), name: 'hello.txt', type: 'file', size: 5, isSymlink: false }));
    const notEmpty = await runCli(['files', 'rm', `${ENV}:${join(work, 'a')}`], '', env);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.stderr).toMatch(/\(DIRECTORY_NOT_EMPTY\)\n$/);
    expect(await runCli(['files', 'rm', '-r', `${ENV}:${join(work, 'a')}`], '', env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readdirSync(work)).toEqual([]);
  });
});
