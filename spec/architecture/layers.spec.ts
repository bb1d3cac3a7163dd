/**
 * The layer order of src/ (`.dependency-cruiser.js`, run by `npm test` as `npm run layers`) refuses what
 * it should: each case writes a tiny src/ tree into a temp dir and runs the real checker on it with the
 * project's own config.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.js');
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');

interface Outcome {
  readonly code: number;
  readonly output: string;
}

function depcruise(cwd: string): Promise<Outcome> {
  return new Promise((settle) => {
    execFile(DEPCRUISE, ['src', '--config', CONFIG, '--no-cache'], { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      settle({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Writes `files` (path → source) under a fresh temp dir and runs the checker there. */
async function cruise(files: Readonly<Record<string, string>>): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-layers-'));
  try {
    for (const [path, source] of Object.entries(files)) {
      await mkdir(join(dir, dirname(path)), { recursive: true });
      await writeFile(join(dir, path), source);
    }
    return await depcruise(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the layer order', () => {
  it('passes on the real src/', async () => {
    const outcome = await depcruise(ROOT);
    expect(outcome).toEqual({ code: 0, output: expect.stringContaining('no dependency violations found') });
  });

  it('refuses a type-only import from wire/ up into exec/', async () => {
    const outcome = await cruise({
      'src/exec/process-event.ts': 'export interface Shape { readonly seq: number }\n',
      'src/wire/process.ts': "import type { Shape } from '../exec/process-event';\nexport const seqOf = (s: Shape): number => s.seq;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error layer-wire: src/wire/process.ts → src/exec/process-event.ts');
  });

  it('refuses the host importing the main entry, and exec/ importing fs/ on its own floor', async () => {
    const outcome = await cruise({
      'src/index.ts': 'export const version = 1;\n',
      'src/host/host-server.ts': "import { version } from '../index';\nexport const v = version;\n",
      'src/fs/files.ts': 'export const files = 1;\n',
      'src/exec/process.ts': "import { files } from '../fs/files';\nexport const f = files;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error layer-host: src/host/host-server.ts → src/index.ts');
    expect(outcome.output).toContain('error layer-exec: src/exec/process.ts → src/fs/files.ts');
  });

  it("keeps the command line's run/ and remote/ apart, and terminal/ under both", async () => {
    const outcome = await cruise({
      'src/cli/terminal/terminal-size.ts': 'export const rows = 24;\n',
      'src/cli/terminal/stdin-relay.ts': "import { launch } from '../run/launch';\nexport const relay = launch;\n",
      'src/cli/run/launch.ts': "import { rows } from '../terminal/terminal-size';\nexport const launch = rows;\n",
      'src/cli/run/run-command.ts': "import { start } from '../remote/remote-run';\nexport const run = start;\n",
      'src/cli/remote/remote-run.ts': "import { rows } from '../terminal/terminal-size';\nexport const start = rows;\n",
      'src/cli/remote/remote-supervisor.ts': "import { launch } from '../run/launch';\nexport const supervise = launch;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error cli-run-and-remote-apart: src/cli/run/run-command.ts → src/cli/remote/remote-run.ts');
    expect(outcome.output).toContain('error cli-run-and-remote-apart: src/cli/remote/remote-supervisor.ts → src/cli/run/launch.ts');
    expect(outcome.output).toContain('error cli-terminal-under-run-and-remote: src/cli/terminal/stdin-relay.ts → src/cli/run/launch.ts');
    expect(outcome.output).not.toContain('src/cli/run/launch.ts → src/cli/terminal/terminal-size.ts');
    expect(outcome.output).not.toContain('src/cli/remote/remote-run.ts → src/cli/terminal/terminal-size.ts');
  });

  it('refuses fs, with or without its node: prefix, outside the disk adapter, the configuration loaders, the command line and the executor spawner', async () => {
    const outcome = await cruise({
      'src/exec/output-log.ts': "import { appendFileSync } from 'node:fs';\nexport const sink = appendFileSync;\n",
      'src/wire/spool.ts': "import { writeFile } from 'fs/promises';\nexport const spool = writeFile;\n",
      'src/host/disk-log.ts': "import { open } from 'fs';\nexport const store = open;\n",
      'src/store/memory/spill.ts': "import { writeFile } from 'node:fs/promises';\nexport const spill = writeFile;\n",
      'src/store/log-store.ts': "import { statSync } from 'node:fs';\nexport const size = statSync;\n",
      'src/store/disk/segment.ts': "import { open } from 'node:fs/promises';\nexport const segment = open;\n",
      'src/host/host-credentials.ts': "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
      'src/host/api/operator-tokens.ts': "import { statSync } from 'fs';\nexport const stat = statSync;\n",
      'src/host/api/ui-bundle.ts': "import { readFile } from 'node:fs/promises';\nexport const read = readFile;\n",
      'src/cli/host-command.ts': "import { writeSync } from 'node:fs';\nexport const write = writeSync;\n",
      'src/executor/spawn-executor.ts': "import { mkdtemp } from 'fs/promises';\nexport const temp = mkdtemp;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error fs-where-files-are-the-job: src/exec/output-log.ts → fs');
    expect(outcome.output).toContain('error fs-where-files-are-the-job: src/wire/spool.ts → fs/promises');
    expect(outcome.output).toContain('error fs-where-files-are-the-job: src/host/disk-log.ts → fs');
    expect(outcome.output).toContain('error fs-where-files-are-the-job: src/store/memory/spill.ts → fs/promises');
    expect(outcome.output).toContain('error fs-where-files-are-the-job: src/store/log-store.ts → fs');
    for (const allowed of ['store/disk/segment', 'host/host-credentials', 'host/api/operator-tokens', 'host/api/ui-bundle', 'cli/host-command', 'executor/spawn-executor']) expect(outcome.output).not.toContain(`src/${allowed}.ts`);
    expect(outcome.output).toMatch(/\b5 dependency violations \(5 errors/);
  });

  it('lets the host reach storage only through the ports, the adapters chosen by startHostServer alone, and keeps store/ under the host', async () => {
    const outcome = await cruise({
      'src/store/log-store.ts': 'export interface LogStore { readonly name: string }\n',
      'src/store/disk/disk-log-store.ts': "import type { LogStore } from '../log-store';\nexport const disk: LogStore = { name: 'disk' };\n",
      'src/store/memory/memory-log-store.ts': "import type { LogStore } from '../log-store';\nexport const memory: LogStore = { name: 'memory' };\n",
      'src/host/hosted-environments.ts': "import { disk } from '../store/disk/disk-log-store';\nexport const logs = disk;\n",
      'src/host/api/process-reads.ts': "import type { LogStore } from '../../store/log-store';\nimport { memory } from '../../store/memory/memory-log-store';\nexport const reader: LogStore = memory;\n",
      'src/host/host-server.ts': "import { disk } from '../store/disk/disk-log-store';\nimport { memory } from '../store/memory/memory-log-store';\nexport const chosen = [disk, memory];\n",
      'src/host/index.ts': "export { memory } from '../store/memory/memory-log-store';\n",
      'src/host/host-options.ts': 'export const options = 1;\n',
      'src/store/redis/redis-log-store.ts': "import { options } from '../../host/host-options';\nexport const redis = options;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error host-through-the-ports: src/host/hosted-environments.ts → src/store/disk/disk-log-store.ts');
    expect(outcome.output).toContain('error host-through-the-ports: src/host/api/process-reads.ts → src/store/memory/memory-log-store.ts');
    expect(outcome.output).toContain('error layer-store: src/store/redis/redis-log-store.ts → src/host/host-options.ts');
    expect(outcome.output).not.toContain('src/host/host-server.ts →');
    expect(outcome.output).not.toContain('src/host/index.ts →');
    expect(outcome.output).not.toContain('src/host/api/process-reads.ts → src/store/log-store.ts');
    expect(outcome.output).toMatch(/\b3 dependency violations \(3 errors/);
  });

  it('keeps a Redis client (ioredis, redis, @redis/*) in store/redis/ alone', async () => {
    const outcome = await cruise({
      'node_modules/ioredis/package.json': '{ "name": "ioredis", "version": "5.0.0", "main": "index.js" }\n',
      'node_modules/ioredis/index.js': 'module.exports = class Redis {};\n',
      'node_modules/@redis/client/package.json': '{ "name": "@redis/client", "version": "1.0.0", "main": "index.js" }\n',
      'node_modules/@redis/client/index.js': 'module.exports = { createClient() {} };\n',
      'src/store/redis/redis-state-store.ts': "import Redis from 'ioredis';\nimport { createClient } from '@redis/client';\nexport const clients = [Redis, createClient];\n",
      'src/store/disk/cache.ts': "import Redis from 'ioredis';\nexport const cache = Redis;\n",
      'src/host/cluster.ts': "import { createClient } from '@redis/client';\nexport const cluster = createClient;\n",
      'src/exec/output-log.ts': "import Redis from 'ioredis';\nexport const sink = Redis;\n",
      'node_modules/redis/package.json': '{ "name": "redis", "version": "4.0.0", "main": "index.js" }\n',
      'node_modules/redis/index.js': 'module.exports = { createClient() {} };\n',
      'src/store/memory/shared.ts': "import { createClient } from 'redis';\nexport const shared = createClient;\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toContain('error redis-in-store-redis: src/store/memory/shared.ts → node_modules/redis/index.js');
    expect(outcome.output).toContain('error redis-in-store-redis: src/store/disk/cache.ts → node_modules/ioredis/index.js');
    expect(outcome.output).toContain('error redis-in-store-redis: src/host/cluster.ts → node_modules/@redis/client/index.js');
    expect(outcome.output).toContain('error redis-in-store-redis: src/exec/output-log.ts → node_modules/ioredis/index.js');
    expect(outcome.output).not.toContain('src/store/redis/redis-state-store.ts');
    expect(outcome.output).toMatch(/\b4 dependency violations \(4 errors/);
  });

  it('refuses an import cycle inside one room', async () => {
    const outcome = await cruise({
      'src/cli/run/run-command.ts': "import type { Io } from './run-supervisor';\nexport interface Launched { readonly io: Io }\n",
      'src/cli/run/run-supervisor.ts': "import type { Launched } from './run-command';\nexport interface Io { readonly launched?: Launched }\n",
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toMatch(/error no-circular: src\/cli\/run\/run-(command|supervisor)\.ts → /);
  });
});
