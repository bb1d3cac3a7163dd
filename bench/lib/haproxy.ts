/**
 * A real HAProxy (Debian's 2.6) in front of loopback backends, run from the README's configuration
 * (`docs/haproxy.cfg`) with only its ports (and, when asked, the health path) replaced: what users copy
 * is what runs. Started in the foreground (`haproxy -f CFG -db`) on a free loopback port with its own temp
 * dir, ready once it accepts connections, stopped by its owner. The one launcher of the bench (the
 * replicas suite, the nemesis) and of the specs (`spec/support/haproxy.ts` re-exports it). A machine
 * without `haproxy` fails loudly with the command that installs it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillHaproxyTemplate } from './haproxy-template';
import { accepts, freePort, halt } from './loopback';

/**
 * The README's HAProxy configuration: `docs/haproxy.cfg` of the repository, found from this file whether
 * it runs from `bench/lib` (ts-jest) or from `dist/bench/lib` (the build).
 */
export const HAPROXY_TEMPLATE = [join(__dirname, '..', '..', 'docs', 'haproxy.cfg'), join(__dirname, '..', '..', '..', 'docs', 'haproxy.cfg')].find((path) =>
  existsSync(path),
) ?? join(__dirname, '..', '..', 'docs', 'haproxy.cfg');

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
export interface RunningHaproxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The configuration it runs. */
  readonly config: string;
  /** Its pid. */
  readonly pid: number;
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

/**
 * The template with the frontend on `port`, its `server` lines replaced by one per backend (at the first
 * one's place, with its options: `fillHaproxyTemplate`), and the health path. Throws when the template
 * lacks what is replaced.
 */
export function haproxyConfig(template: string, port: number, options: HaproxyOptions): string {
  const config = fillHaproxyTemplate(template, HAPROXY_TEMPLATE, port, options.backends);
  const health = options.healthPath ?? '/readyz';
  if (!config.includes('option httpchk GET /readyz')) throw new Error(`${HAPROXY_TEMPLATE} has no "option httpchk GET /readyz"`);
  return config.replace('option httpchk GET /readyz', `option httpchk GET ${health}`);
}

/** Starts HAProxy from the README's configuration in front of `options.backends` (see the module's doc). Its owner stops it. */
export async function startHaproxy(options: HaproxyOptions): Promise<RunningHaproxy> {
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
  let exitedEarly: Error | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null): void => void (exitedEarly = new Error(`haproxy exited (${String(code ?? signal)}): ${output.slice(-800)}`));
  child.once('exit', onExit);
  child.once('error', (error) => void (exitedEarly = error));
  const stop = async (): Promise<void> => {
    await halt(child, 'SIGTERM', STOP_GRACE_MS);
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exitedEarly !== undefined) {
      await stop();
      throw exitedEarly;
    }
    if (await accepts(port)) break;
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not accept connections on ${port} in ${START_TIMEOUT_MS} ms: ${output.slice(-800)}`);
    }
    await new Promise<void>((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
  }
  child.off('exit', onExit);
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config,
    pid: child.pid ?? 0,
    async stop() {
      if (stopped) return;
      stopped = true;
      await stop();
    },
  };
}
