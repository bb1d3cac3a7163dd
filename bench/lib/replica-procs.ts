/**
 * The processes of the replicas bench (issue 33): a real `redis-server`, a real HAProxy running the
 * README's configuration (`docs/haproxy.cfg`, only its ports replaced), and the built `exec-rx host`
 * (a child process) with its stderr lines time-stamped as they arrive.
 *
 * The redis-server and HAProxy launch logic is a trimmed copy of `spec/support/redis-server.ts` and
 * `spec/support/haproxy.ts`: the bench is built with `tsconfig.build.json`, which includes `src` and `bench`
 * only, so `dist/bench` cannot import from `spec/` (the specs import the template's filling from here,
 * `./haproxy-template`). Keep the flags in step.
 *
 * Every child is tracked (`trackChild`), so `stopEverything()` kills what a suite's `finally` missed.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { cleanEnv } from './cli-host';
import type { TemplateBackend } from './haproxy-template';
import { fillHaproxyTemplate } from './haproxy-template';
import { trackChild } from './executors';

/** The built command line's entry point. */
const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');
/** The README's HAProxy configuration (from `dist/bench/lib`, the repository's `docs/`). */
const HAPROXY_TEMPLATE = join(__dirname, '..', '..', '..', 'docs', 'haproxy.cfg');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** SIGTERM (SIGCONT first, in case it was stopped), SIGKILL after 5 s; resolves once it exited. */
async function halt(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGCONT');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A running redis-server (no persistence: `--save ''`, `--appendonly no`) and a client on it. */
export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  /** A field of `INFO memory` (bytes). */
  memory(field: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a redis-server on a free loopback port with its own temp dir (as `spec/support/redis-server.ts` does). */
export async function startBenchRedis(): Promise<BenchRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--protected-mode', 'yes', '--appendonly', 'no'];
  const child = trackChild(spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  try {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s: ${seen.slice(-500)}`)), 10_000);
      const onData = (chunk: Buffer): void => {
        seen += chunk.toString('utf8');
        if (!/Ready to accept connections/.test(seen)) return;
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve();
      };
      child.stdout?.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${String(code)}) before it was ready: ${seen.slice(-500)}`)));
    });
  } catch (error: unknown) {
    await halt(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let stopped = false;
  return {
    url,
    pid: child.pid ?? 0,
    memory: async (field) => {
      if (client.status === 'wait') await client.connect();
      const info = await client.info('memory');
      const value = new RegExp(`^${field}:(\\d+)`, 'm').exec(info)?.[1];
      if (value === undefined) throw new Error(`INFO memory has no ${field}`);
      return Number(value);
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      client.disconnect();
      await halt(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A running HAProxy in front of the given loopback ports. */
export interface BenchHaproxy {
  readonly url: string;
  stop(): Promise<void>;
}

/** The README's configuration with its frontend on `port` and one `server` line per backend. */
const haproxyConfig = (port: number, backends: readonly TemplateBackend[]): string =>
  fillHaproxyTemplate(readFileSync(HAPROXY_TEMPLATE, 'utf8'), HAPROXY_TEMPLATE, port, backends);

/** Starts `haproxy -f CFG -db` on a free port in front of `backends`; resolves once it accepts connections. */
export async function startBenchHaproxy(backends: readonly { readonly name: string; readonly port: number }[]): Promise<BenchHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-haproxy-'));
  const port = await freePort();
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(port, backends));
  const child = trackChild(spawn('haproxy', ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir }));
  let output = '';
  const keep = (chunk: Buffer): void => void (output = `${output}${chunk.toString('utf8')}`.slice(-4_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = async (): Promise<void> => {
    await halt(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => (socket.destroy(), resolve(false)));
    });
    if (ok) break;
    if (child.exitCode !== null || performance.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not start: ${output.slice(-800)}`);
    }
    await sleep(20);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** The credentials every bench host accepts. */
export interface HostCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly token: string;
}

/** The built `exec-rx host` as a child: its stderr lines with the time each arrived, and waits on them. */
export class HostProc {
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly text: string }[] = [];
  private stdout = '';
  private wake: (() => void) | undefined;

  /** `exec-rx host --port 0 ARGS` with the credentials in its environment and `work` as its XDG_STATE_HOME. */
  constructor(args: readonly string[], credentials: HostCredentials, work: string) {
    const env = { ...cleanEnv(), XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: credentials.accessKeyId, EXEC_RX_SECRET_ACCESS_KEY: credentials.secretAccessKey, EXEC_RX_OPERATOR_TOKEN: credentials.token };
    this.child = trackChild(spawn(process.execPath, [CLI, 'host', '--port', '0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let partial = '';
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      for (let newline = partial.indexOf('\n'); newline >= 0; newline = partial.indexOf('\n')) {
        // Only the lines the bench waits on are kept (a busy host logs every process's start and end).
        const text = partial.slice(0, newline);
        if (text.includes('environment ')) this.lines.push({ at: performance.now(), text });
        partial = partial.slice(newline + 1);
      }
      this.wake?.();
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.wake?.();
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** The time the first kept stderr line containing `text` arrived at or after `after`, if one did. */
  said(text: string, after = 0): number | undefined {
    return this.lines.find((line) => line.at >= after && line.text.includes(text))?.at;
  }

  /** Resolves with {@link said}'s time; rejects after `timeoutMs` or when the host exits. */
  async line(text: string, after = 0, timeoutMs = 60_000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const at = this.said(text, after);
      if (at !== undefined) return at;
      if (this.child.exitCode !== null || this.child.signalCode !== null || performance.now() > deadline) throw new Error(`the bench host never said "${text}"`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  /** The url the host listens on, once it printed it. */
  async listening(): Promise<string> {
    const deadline = performance.now() + 60_000;
    for (;;) {
      const url = /^exec-rx host listening on (\S+)$/m.exec(this.stdout)?.[1];
      if (url !== undefined) return url;
      if (this.child.exitCode !== null || performance.now() > deadline) throw new Error(`the bench host did not listen: ${this.stdout}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Sends `signal` (SIGKILL after 5 s for a SIGTERM) and resolves once it exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await halt(this.child, signal);
  }
}

/** The replica's redis url file in `work` (the url never goes in a flag). */
export function redisUrlFile(work: string, url: string): string {
  const file = join(work, 'redis-url');
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  return file;
}
