/**
 * A real `redis-server` (Debian's 7.0) for the specs that need one: started on a free loopback port with
 * its own temp dir, `--save ''` and, unless asked for, `--appendonly no`; restarted on the same port (with
 * its data or empty); stopped by the spec in `afterAll`. A machine without `redis-server` fails the spec
 * loudly with the command that installs it (the README's test command does, as root).
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnLoopback } from './listen-on-loopback';

const READY = /Ready to accept connections/;
const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/** How a spec's redis-server runs. */
export interface RedisServerOptions {
  /** `--appendonly yes --appendfsync everysec` (what "restarted with its data" keeps); default no. */
  readonly appendOnly?: boolean;
}

/** A running redis-server. */
export interface SpecRedis {
  /** `redis://127.0.0.1:PORT` (no password: loopback only). */
  readonly url: string;
  /** Its port on 127.0.0.1 (the same across restarts). */
  readonly port: number;
  /** Its pid now (changes on restart). */
  readonly pid: number;
  /** Stops it (SIGTERM: it writes its AOF when it keeps one) and starts it again on the same port; `empty`: its dir wiped first. */
  restart(options?: { readonly empty?: boolean }): Promise<void>;
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

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server, 'port probe');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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
      resolve(child);
    };
    child.stdout?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on port ${port} exited (${String(code)}) before it was ready: ${seen.slice(-500)}`));
    });
  });
}

async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Starts a redis-server for a spec (see the module's doc). The spec stops it. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<SpecRedis> {
  requireRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-redis-'));
  const port = await freePort();
  let child = await launch(port, dir, options);
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid ?? 0;
    },
    async restart({ empty = false } = {}) {
      await halt(child);
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
      await halt(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
