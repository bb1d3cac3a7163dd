/**
 * A real HAProxy (Debian's 2.6) in front of a spec's backends, run from the README's configuration
 * (`docs/haproxy.cfg`) with only its ports (and, when asked, the health path) replaced: the spec tests
 * the configuration users copy. Started in the foreground (`haproxy -f CFG -db`) on a free loopback port
 * with its own temp dir, ready once it accepts connections, stopped by the spec in `afterAll`. A machine
 * without `haproxy` fails the spec loudly with the command that installs it.
 */
import { fillHaproxyTemplate } from '../../bench/lib/haproxy-template';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOnLoopback } from './listen-on-loopback';

/** The README's HAProxy configuration, the template of every spec's. */
export const HAPROXY_TEMPLATE = join(__dirname, '..', '..', 'docs', 'haproxy.cfg');

const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
/** Between two tries to connect while HAProxy starts (it prints nothing when it is ready). */
const CONNECT_RETRY_MS = 20;

/** One backend server: its name in the config and its port on 127.0.0.1. */
export interface HaproxyBackend {
  readonly name: string;
  readonly port: number;
}

/** What {@link startHaproxy} runs. */
export interface HaproxyOptions {
  readonly backends: readonly HaproxyBackend[];
  /** The health check's path. @default '/readyz' (the template's) */
  readonly healthPath?: string;
}

/** A running HAProxy. */
export interface SpecHaproxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The configuration it runs. */
  readonly config: string;
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its dir. Idempotent. */
  stop(): Promise<void>;
}

/** Throws with the install command when the machine has no haproxy. */
export function requireHaproxy(): void {
  const found = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (found.error !== undefined || found.status !== 0) {
    throw new Error('haproxy is not installed: run `bash scripts/install-test-deps.sh` (as root it runs `apt-get install -y haproxy`)');
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server, 'port probe');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The template with the frontend on `port`, its `server` lines replaced by one per backend (at the first
 * one's place, with its options: `fillHaproxyTemplate`, which the bench fills it with too), and the health
 * path. Throws when the template lacks what is replaced.
 */
export function haproxyConfig(template: string, port: number, options: HaproxyOptions): string {
  const config = fillHaproxyTemplate(template, HAPROXY_TEMPLATE, port, options.backends);
  const health = options.healthPath ?? '/readyz';
  if (!config.includes('option httpchk GET /readyz')) throw new Error(`${HAPROXY_TEMPLATE} has no "option httpchk GET /readyz"`);
  return config.replace('option httpchk GET /readyz', `option httpchk GET ${health}`);
}

/** Resolves once something accepts a connection on 127.0.0.1:`port`; rejects when `exited` rejects first or after the timeout. */
async function accepting(port: number, exited: Promise<never>, output: () => string): Promise<void> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  const tryOnce = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => {
        socket.destroy();
        resolve(false);
      });
    });
  for (;;) {
    if (await Promise.race([tryOnce(), exited])) return;
    if (performance.now() > deadline) throw new Error(`haproxy did not accept connections on ${port} in ${START_TIMEOUT_MS} ms: ${output().slice(-800)}`);
    await Promise.race([new Promise<void>((resolve) => setTimeout(resolve, CONNECT_RETRY_MS)), exited]);
  }
}

async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Starts HAProxy from the README's configuration in front of `options.backends` (see the module's doc). The spec stops it. */
export async function startHaproxy(options: HaproxyOptions): Promise<SpecHaproxy> {
  requireHaproxy();
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-haproxy-'));
  const port = await freePort();
  const config = haproxyConfig(await readFile(HAPROXY_TEMPLATE, 'utf8'), port, options);
  const file = join(dir, 'haproxy.cfg');
  await writeFile(file, config);
  const child = spawn('haproxy', ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = `${output}${chunk.toString('utf8')}`.slice(-8_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`haproxy exited (${String(code ?? signal)}): ${output.slice(-800)}`)));
  });
  // Only the start waits on this; once it is ready, an exit is seen by stop().
  exited.catch(() => undefined);
  try {
    await accepting(port, exited, () => output);
  } catch (error: unknown) {
    await halt(child);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config,
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
