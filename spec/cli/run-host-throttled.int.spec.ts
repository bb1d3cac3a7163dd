/**
 * `exec-rx run --host`, the built cli, against a host that keeps output on disk, into a reader slower
 * than the command (throttled to 10 MB/s): `yes | head -c 100000000` arrives whole and sha256-exact, the
 * host never cuts the slow reader (it reads the process's log at its own pace), and the cli's peak RSS
 * stays within its idle RSS + 32 MiB (VmHWM of /proc/PID/status, reset once the cli is warm, as in
 * `run-host-backpressure.int.spec.ts`). The host's own RSS is printed with it.
 *
 * The throttle is the reader's (`readThrottled`): it takes 500 kB, then pauses the cli's stdout for one
 * 50 ms tick; that wait is what is measured (a slow consumer), not a wait for an event.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseHost } from '../host/sse/sse-setup';
import { startSseHost, within } from '../host/sse/sse-setup';
import { yesDigest } from '../support/yes-digest';
import { CLI, killIfRunning, readThrottled } from './cli-process';

jest.setTimeout(120_000);

const ENV = 'cli-run-host-throttled';
const TOTAL = 100_000_000;
const WARM_UP = 4_000_000;
const TICK_MS = 50;
const PER_TICK = 500_000; // 10 MB/s
const MiB = 1024 * 1024;

/** `VmRSS` and `VmHWM` of `pid`, in bytes. */
function memoryOf(pid: number): { readonly rss: number; readonly hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

describe('exec-rx run --host into a reader throttled to 10 MB/s, the host keeping output on disk', () => {
  let setup: SseHost;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-throttled-'));
    setup = await startSseHost({ environmentId: ENV, outputLog: { dataDir } });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('delivers 100 MB sha256-exact, the cli within idle + 32 MiB', async () => {
    const script = `head -c ${WARM_UP} /dev/zero | tr '\\0' w >&2; echo ready >&2; read go; yes | head -c ${TOTAL}`;
    const cli = spawn(process.execPath, [CLI, 'run', '--host', setup.origin, '--environment', ENV, '--', 'sh', '-c', script], {
      env: { ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = cli.pid;
    if (pid === undefined) throw new Error('the cli did not start');
    const exited = new Promise<number | null>((resolve) => cli.once('close', (code) => resolve(code)));
    let stderr = '';
    const ready = new Promise<void>((resolve, reject) => {
      cli.stderr.setEncoding('latin1').on('data', (text: string) => {
        stderr += text;
        if (stderr.endsWith('ready\n')) resolve();
      });
      void exited.then(() => reject(new Error(`the cli ended before the command was ready: ${stderr.slice(-200)}`)));
    });
    try {
      await within(ready, 30_000, 'ready line');
      const idle = memoryOf(pid);
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const hostIdle = process.memoryUsage().rss;

      let peak = 0;
      let hostPeak = hostIdle;
      const read = readThrottled(cli.stdout, PER_TICK, TICK_MS, () => {
        if (cli.exitCode === null) peak = Math.max(peak, memoryOf(pid).hwm);
        hostPeak = Math.max(hostPeak, process.memoryUsage().rss);
      });
      const started = performance.now();
      cli.stdin.end('go\n');
      const code = await within(exited, 100_000, 'the cli to exit');
      const seconds = (performance.now() - started) / 1000;

      process.stdout.write(
        `run --host, 100 MB into a 10 MB/s reader: ${seconds.toFixed(1)} s; cli idle ${(idle.rss / MiB).toFixed(1)} MiB, peak +${((peak - idle.rss) / MiB).toFixed(1)} MiB; host (this jest worker) idle ${(hostIdle / MiB).toFixed(1)} MiB, peak +${((hostPeak - hostIdle) / MiB).toFixed(1)} MiB\n`,
      );
      expect({ code, received: read.received }).toEqual({ code: 0, received: TOTAL });
      expect(read.digest()).toBe(yesDigest(TOTAL));
      expect(stderr.replace(/^w+/, '')).toBe('ready\n');
      expect(peak).toBeLessThanOrEqual(idle.rss + 32 * MiB);
    } finally {
      await killIfRunning(cli);
    }
  });
});
