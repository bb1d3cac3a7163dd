/**
 * A real `redis-server` (Debian's 7.0) on a free loopback port with its own temp dir, `--save ''` and,
 * unless asked for, `--appendonly no`; restarted on the same port (with its data, after a clean stop or a
 * crash, or wiped empty), paused and resumed, stopped by its owner. The one launcher of the bench (the
 * replicas suite, the nemesis) and of the specs (`spec/support/redis-server.ts` re-exports it). A machine
 * without `redis-server` fails loudly with the command that installs it.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, halt } from './loopback';

const READY = /Ready to accept connections/;
const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/** How a redis-server runs. */
export interface RedisServerOptions {
  /** `--appendonly yes --appendfsync everysec` (what "restarted with its data" keeps); default no. */
  readonly appendOnly?: boolean;
}

/** How {@link RunningRedis.restart} stops it before it starts again. */
export interface RedisRestartOptions {
  /** Its dir is wiped before it starts again: it comes back empty. @default false */
  readonly empty?: boolean;
  /** SIGKILL instead of SIGTERM (a crash: with `everysec`, up to a second of writes not in the AOF). @default false */
  readonly crash?: boolean;
  /** How long it stays down before it starts again (ms). @default 0 */
  readonly downMs?: number;
}

/** A running redis-server. */
export interface RunningRedis {
  /** `redis://127.0.0.1:PORT` (no password: loopback only). */
  readonly url: string;
  /** Its port on 127.0.0.1 (the same across restarts). */
  readonly port: number;
  /** Its pid now (changes on restart). */
  readonly pid: number;
  /** Stops it (see {@link RedisRestartOptions}) and starts it again on the same port. */
  restart(options?: RedisRestartOptions): Promise<void>;
  /** SIGSTOP / SIGCONT: Redis unreachable while its sockets stay open. */
  pause(): void;
  resume(): void;
  /** Stops it and removes its dir. Idempotent. */
  stop(): Promise<void>;
}

/** Throws with the install command when the machine has no redis-server. */
export function requireRedisServer(): void {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error !== undefined || found.status !== 0) {
    throw new Error('redis-server is not installed: run `bash scripts/install-test-deps.sh` (as root it runs `apt-get install -y redis-server`)');
  }
}

function launch(port: number, dir: string, options: RedisServerOptions): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--protected-mode', 'yes'];
  args.push(...(options.appendOnly === true ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']));
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} did not start in ${START_TIMEOUT_MS} ms: ${seen.slice(-500)}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      if (!READY.test(seen)) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      child.stderr?.resume();
      child.off('exit', onExit);
      resolve(child);
    };
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`redis-server on port ${port} exited (${String(code)}) before it was ready: ${seen.slice(-500)}`));
    };
    child.stdout?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', onExit);
  });
}

/** Starts a redis-server (see the module's doc). Its owner stops it. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RunningRedis> {
  requireRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-redis-'));
  const port = await freePort();
  let child = await launch(port, dir, options).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid ?? 0;
    },
    async restart({ empty = false, crash = false, downMs = 0 } = {}) {
      await halt(child, crash ? 'SIGKILL' : 'SIGTERM', STOP_GRACE_MS);
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      if (empty) {
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir, { recursive: true });
      }
      child = await launch(port, dir, options);
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt(child, 'SIGTERM', STOP_GRACE_MS);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
