/**
 * One incarnation of a lab replica: the built `exec-rx host --redis-url-file` as a child process on its
 * data dir, with every stderr line (JSON, one per line) kept with the time it arrived, its url and
 * metrics url once printed, its replica id (the `exec-rx-host-replica` header, which is also its owner id
 * in Redis), a metric scrape with a timeout, and signals.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { cleanEnv } from '../lib/cli-host';
import { halt } from '../lib/loopback';
import { call } from './http';

/** The built command line's entry point (from `dist/bench/nemesis`, or `bench/nemesis` under ts-jest: the build's). */
const CLI = join(__dirname, '..', '..', ...(__dirname.includes(join('dist', 'bench')) ? [] : ['dist']), 'src', 'cli', 'main.js');

/** How many stderr lines one incarnation keeps (the oldest go first past it). */
const MAX_LINES = 50_000;
const START_TIMEOUT_MS = 30_000;

/** One stderr line of a replica. */
export interface ReplicaLine {
  /** When it arrived (ms, `Date.now()`). */
  readonly at: number;
  /** The replica's name and incarnation (`b#2`). */
  readonly who: string;
  /** The line's `msg` (the whole line when it is not JSON). */
  readonly msg: string;
  /** Its level (`info`, `warn` …), or `?`. */
  readonly level: string;
}

/** What a replica is started with. */
export interface ReplicaLaunch {
  readonly name: string;
  readonly incarnation: number;
  /** The lab's work dir (XDG_STATE_HOME); the data dir is `<work>/<name>`. */
  readonly work: string;
  readonly redisUrlFile: string;
  /** The balancer's url (`--public-url`). */
  readonly publicUrl: string;
  readonly keyId: string;
  readonly secret: string;
  readonly token: string;
}

/** How a replica process ended. */
export interface ReplicaExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running (or ended) incarnation of a replica (see the module's doc). */
export class ReplicaProc {
  readonly lines: ReplicaLine[] = [];
  readonly exited: Promise<ReplicaExit>;
  base = '';
  metricsUrl = '';
  /** Its replica id (owner id in Redis), once asked. */
  replicaId = '';
  private stdout = '';
  private partial = '';
  private wake: (() => void) | undefined;

  private constructor(
    readonly launch: ReplicaLaunch,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      this.stdout += text;
      this.wake?.();
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => this.take(text));
    child.on('error', () => undefined);
  }

  /** `name#incarnation`. */
  get who(): string {
    return `${this.launch.name}#${this.launch.incarnation}`;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get port(): number {
    return Number(new URL(this.base).port);
  }

  /** Whether it has exited. */
  get ended(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /**
   * Starts it and resolves once it printed its urls and said who it is; rejects (after killing it) when it
   * does not. `spawned` is told its pid at once (before it connects to anything).
   */
  static async start(launch: ReplicaLaunch, spawned: (pid: number) => void = () => undefined): Promise<ReplicaProc> {
    const env = {
      ...cleanEnv(),
      XDG_STATE_HOME: launch.work,
      EXEC_RX_ACCESS_KEY_ID: launch.keyId,
      EXEC_RX_SECRET_ACCESS_KEY: launch.secret,
      EXEC_RX_OPERATOR_TOKEN: launch.token,
    };
    const args = ['host', '--port', '0', '--metrics-port', '0', '--data-dir', join(launch.work, launch.name), '--redis-url-file', launch.redisUrlFile];
    args.push('--public-url', launch.publicUrl, '--log-format', 'json');
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = new ReplicaProc(launch, child);
    spawned(proc.pid);
    try {
      await proc.listening();
      proc.replicaId = await proc.askId();
      return proc;
    } catch (error: unknown) {
      await halt(child, 'SIGKILL');
      throw new Error(`replica ${proc.who} did not start: ${String(error)}; stderr: ${proc.lines.slice(-5).map((l) => l.msg).join(' | ')}`);
    }
  }

  /**
   * A metric's value summed over its label sets, and whether the replica has it at all (an absent one
   * reads 0); undefined when the scrape failed or took over `timeoutMs`.
   */
  async metric(name: string, timeoutMs = 2_000): Promise<{ readonly value: number; readonly present: boolean } | undefined> {
    const text = await call(this.metricsUrl, { timeoutMs }).then((answer) => answer.text).catch(() => undefined);
    if (text === undefined) return undefined;
    let value = 0;
    let present = false;
    for (const line of text.split('\n')) {
      const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (match?.[1] !== name) continue;
      present = true;
      value += Number(match[3]);
    }
    return { value, present };
  }

  /** Sends `signal` (nothing when it has exited). */
  signal(signal: NodeJS.Signals): void {
    if (!this.ended) this.child.kill(signal);
  }

  /** SIGTERM (after SIGCONT), SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs = 12_000): Promise<void> {
    return halt(this.child, 'SIGTERM', graceMs);
  }

  private take(text: string): void {
    this.partial += text;
    for (let newline = this.partial.indexOf('\n'); newline >= 0; newline = this.partial.indexOf('\n')) {
      const raw = this.partial.slice(0, newline);
      this.partial = this.partial.slice(newline + 1);
      let msg = raw;
      let level = '?';
      try {
        const parsed = JSON.parse(raw) as { msg?: unknown; level?: unknown };
        if (typeof parsed.msg === 'string') msg = parsed.msg;
        if (typeof parsed.level === 'string') level = parsed.level;
      } catch {
        // not JSON: kept as it is
      }
      this.lines.push({ at: Date.now(), who: this.who, msg, level });
      if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    }
  }

  private async listening(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const base = /^exec-rx host listening on (\S+)$/m.exec(this.stdout)?.[1];
      const metrics = /^Prometheus metrics: (\S+)$/m.exec(this.stdout)?.[1];
      if (base !== undefined && metrics !== undefined && this.stdout.includes('--environment-id <environment-id>\n')) {
        this.base = base;
        this.metricsUrl = metrics;
        return;
      }
      if (this.ended || Date.now() > deadline) throw new Error(`no urls printed: ${this.stdout.slice(-300)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async askId(): Promise<string> {
    const answer = await call(`${this.base}/api/v1/host`, { headers: { authorization: `Bearer ${this.launch.token}` }, timeoutMs: 5_000 });
    const id = answer.headers['exec-rx-host-replica'];
    if (typeof id !== 'string' || id === '') throw new Error(`GET /api/v1/host answered ${answer.status} without a replica id`);
    return id;
  }
}
