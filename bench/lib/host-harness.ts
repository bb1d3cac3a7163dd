/**
 * What the host bench runs against: an exec-rx host (operator API on) with one codex executor in
 * direct mode joined to it, a raw Node SSE server for the baseline, and the readers child
 * (`../sse-readers.ts`). Everything is stopped by `close()` and again by `stopEverything()`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer, HostServerOptions } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import type { Environment } from '../../src';
import { trackChild } from './executors';

export const HOST_ENV = 'bench-host';

/** A host with an executor joined, reachable over its operator API. */
export interface BenchHost {
  readonly host: HostServer;
  readonly token: string;
  readonly environment: Environment;
  /** The executor's pid (its CPU: `cpuMsOfTree`). */
  readonly executorPid: number;
  /** `fetch` against the operator API with the token. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts the host (send buffer `bufferBytes`; output logs on disk when `outputLog` is given; its log,
 * audit trail and metrics port from `extra`) and a direct executor, and waits until it joined.
 */
export async function startBenchHost(bufferBytes: number, outputLog?: HostServerOptions['outputLog'], extra: Pick<HostServerOptions, 'log' | 'audit' | 'metricsPort'> = {}): Promise<BenchHost> {
  const token = randomBytes(24).toString('base64url');
  const credentials = { accessKeyId: 'BENCHHOST', secretAccessKey: randomBytes(24).toString('base64url') };
  const host = await startHostServer({
    credentials: new Map([[credentials.accessKeyId, credentials.secretAccessKey]]),
    operator: { tokens: new OperatorTokens([token]), sse: { bufferBytes, total: 4096, perToken: 4096 }, requestsPerSecond: 100_000, requestBurst: 100_000 },
    ...(outputLog === undefined ? {} : { outputLog }),
    ...extra,
  });
  let executor: SpawnedExecutor | undefined;
  try {
    executor = await spawnExecutor({ mode: 'direct', remoteUrl: host.url, environmentId: HOST_ENV, credentials });
    const environment = await new Promise<Environment>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the bench executor did not join the host')), 20_000);
      const watching = host.environments$.subscribe((list) => {
        const joined = list.find((e) => e.id === HOST_ENV && e.state === 'connected')?.environment;
        if (joined === undefined) return;
        clearTimeout(timer);
        resolve(joined);
        queueMicrotask(() => watching.unsubscribe());
      });
    });
    const stop = executor;
    return {
      host,
      token,
      environment,
      executorPid: stop.pid,
      api: (method, path, body) =>
        fetch(`${host.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      close: async () => {
        await stop.stop();
        await host.close();
      },
    };
  } catch (error: unknown) {
    await executor?.stop();
    await host.close();
    throw error;
  }
}

/** The readers child: N connections to `url`; resolves its reports line by line. */
export class Readers {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;

  /** With `binary`, each reader asks for the binary event stream. */
  constructor(url: string, token: string, count: number, binary = false) {
    const args = [join(__dirname, '..', 'sse-readers.js'), url, token, String(count), binary ? 'binary' : 'sse'];
    this.child = trackChild(spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] }));
    let text = '';
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => {
      text += chunk;
      for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n')) {
        this.lines.push(text.slice(0, newline));
        text = text.slice(newline + 1);
      }
      this.wake?.();
    });
  }

  /** The next report line, parsed. */
  async next(): Promise<Record<string, number>> {
    while (this.lines.length === 0) {
      if (this.child.exitCode !== null) throw new Error('the readers child exited');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return JSON.parse(this.lines.shift() ?? '{}') as Record<string, number>;
  }

  /** Starts the clock. */
  go(): void {
    this.child.stdin?.write('go\n');
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => (this.child.exitCode === null ? this.child.once('exit', () => resolve()) : resolve()));
    this.child.stdin?.end();
    await exited;
  }
}

/** A raw Node SSE (or, given its content type, binary) server: writes `frames` to every connected response on `send()`, honouring backpressure. */
export class RawSseServer {
  private readonly server: Server;
  private readonly responses: ServerResponse[] = [];

  private constructor(server: Server, contentType: string) {
    this.server = server;
    server.on('request', (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.flushHeaders();
      this.responses.push(res);
    });
  }

  static async start(contentType = 'text/event-stream'): Promise<RawSseServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return new RawSseServer(server, contentType);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /** Writes every frame to every response (waiting for drain where a write says so), then ends them. */
  async send(frames: readonly Buffer[]): Promise<void> {
    const targets = this.responses.splice(0);
    for (const frame of frames) {
      const full = targets.filter((res) => !res.write(frame));
      // A response whose client went away never drains: its close ends the wait too.
      if (full.length > 0) await Promise.all(full.map((res) => drainedOrClosed(res)));
    }
    for (const res of targets) res.end();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Resolves on the response's next `drain` or its `close`, leaving no listener behind (one per wait used to pile up). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    if (res.destroyed) return resolve();
    const done = (): void => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/**
 * CPU (user + system, ms) `pid` and its descendants have used so far, the ended children they waited for
 * included (`/proc/<pid>/stat` utime, stime, cutime, cstime): an executor with the processes it runs.
 * Linux only; 0 where `/proc` has no such process.
 */
export function cpuMsOfTree(pid: number): number {
  const ticksPerSecond = 100; // USER_HZ on Linux
  const ticks = (of: number): number => {
    try {
      const fields = readFileSync(`/proc/${of}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      // After the command: state is field 3; utime, stime, cutime, cstime are fields 14-17.
      return [11, 12, 13, 14].reduce((sum, at) => sum + Number(fields[at] ?? 0), 0);
    } catch {
      return 0;
    }
  };
  const descendants = (of: number): number[] => {
    try {
      // A process's children are listed under the thread that made them: read every thread's list.
      const children = readdirSync(`/proc/${of}/task`).flatMap((task) => readFileSync(`/proc/${of}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
      return children.flatMap((child) => [child, ...descendants(child)]);
    } catch {
      return [];
    }
  };
  return ([pid, ...descendants(pid)].reduce((sum, of) => sum + ticks(of), 0) * 1000) / ticksPerSecond;
}
