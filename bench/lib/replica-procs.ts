/**
 * The processes of the replicas bench (issue 33): a real `redis-server`, a real HAProxy running the
 * README's configuration (`docs/haproxy.cfg`, only its ports replaced), and the built `exec-rx host`
 * (a child process) with its stderr lines time-stamped as they arrive.
 *
 * The redis-server and HAProxy come from the one launcher of each (`./redis-server`, `./haproxy`), which
 * the specs use too (`spec/support/` re-exports them).
 *
 * Every child is tracked (`trackChild`, `trackCloser`), so `stopEverything()` stops what a suite's
 * `finally` missed.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { cleanEnv } from './cli-host';
import { startHaproxy } from './haproxy';
import { halt } from './loopback';
import { startRedisServer } from './redis-server';
import { trackChild, trackCloser } from './executors';

/** The built command line's entry point. */
const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

/** A running redis-server (no persistence: `--save ''`, `--appendonly no`) and a client on it. */
export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  /** A field of `INFO memory` (bytes). */
  memory(field: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a redis-server on a free loopback port with its own temp dir (`./redis-server`). */
export async function startBenchRedis(): Promise<BenchRedis> {
  const server = await startRedisServer();
  const closer = trackCloser({ close: () => server.stop() });
  const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let stopped = false;
  return {
    url: server.url,
    pid: server.pid,
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
      await closer.close();
    },
  };
}

/** A running HAProxy in front of the given loopback ports. */
export interface BenchHaproxy {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `haproxy -f CFG -db` (`./haproxy`) on a free port in front of `backends`; resolves once it accepts connections. */
export async function startBenchHaproxy(backends: readonly { readonly name: string; readonly port: number }[]): Promise<BenchHaproxy> {
  const haproxy = await startHaproxy({ backends });
  const closer = trackCloser({ close: () => haproxy.stop() });
  return { url: haproxy.url, stop: () => closer.close() };
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
