/**
 * `exec-rx run --host`, the built cli, into a reader that stalls: the command writes 20 MB
 * (`yes | head -c 20000000`) while nothing reads the cli's stdout, then the reader drains it. The output
 * is sha256-exact, the cli read little of the event stream while its stdout was full (`rchar` of
 * /proc/PID/io: it stops pulling events, so its client stops reading the HTTP body and TCP holds the
 * host back), and its peak RSS (VmHWM of /proc/PID/status) stays within its idle RSS + 32 MiB.
 *
 * Idle is measured once the cli is warm: the command first writes 4 MB to stderr (read as it comes),
 * which makes V8 compile undici's HTTP parser (WebAssembly) with its optimizing tier, a one-time ~20 MiB
 * of compiler memory on a worker thread, freed at once, that has nothing to do with holding output.
 * Then the peak is reset (`5` written to /proc/PID/clear_refs), so VmHWM is the peak from idle on.
 *
 * How the host fits in: today's host ends a live event stream whose send buffer passes its bound (the
 * stalled cli's), and the cli resumes by seq once it drains; the resume replays from the host's
 * history, which this spec makes large enough for the whole output (64 MiB), so nothing is truncated.
 * A replay waits for its reader at most `stallMs`: this host sets it to 120 s, above the spec's bound
 * on the stall (60 s), so the host never cuts the reader for being slow here.
 *
 * The stall ends on an event, never a sleep: the spec reads the cli's stdout only once the host's
 * library saw the command closed (all 20 MB produced while the reader stalled), or fails after 60 s.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { SseHost } from '../host/sse/sse-setup';
import { GroundTruth, sha256, startSseHost, within } from '../host/sse/sse-setup';
import { CLI, killIfRunning } from './cli-process';

jest.setTimeout(180_000);

const ENV = 'cli-run-host-backpressure';
const TOTAL = 20_000_000;
const WARM_UP = 4_000_000;
/** How long the reader may stall at most (the command must have closed by then). */
const STALL_BOUND_MS = 60_000;
/** The host's `stallMs`: longer than any stall of this spec. */
const HOST_STALL_MS = 120_000;
const MiB = 1024 * 1024;

/** `VmRSS` and `VmHWM` of `pid`, in bytes. */
function memoryOf(pid: number): { readonly rss: number; readonly hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (match === null) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/** Bytes `pid` has read (from its sockets, pipes and files): `rchar` of /proc/PID/io. */
function bytesRead(pid: number): number {
  const match = /^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  if (match === null) throw new Error(`no rchar in /proc/${pid}/io`);
  return Number(match[1]);
}

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

describe('exec-rx run --host into a reader that stalls', () => {
  let setup: SseHost;
  let child: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    setup = await startSseHost({
      environmentId: ENV,
      manager: { processHistory: { historyEvents: 1_000_000, historyBytes: 64 * MiB } },
      operator: { stallMs: HOST_STALL_MS },
    });
  });
  afterAll(() => killIfRunning(child));

  it('writes 20 MB sha256-exact after the stall, reading little while stalled, its peak RSS within idle + 32 MiB', async () => {
    // The warm-up on stderr, then the command waits for a line on its stdin (ours, streamed) before it
    // writes: the cli's idle RSS is read in between, with the event stream open (`ready` came through it).
    const script = `head -c ${WARM_UP} /dev/zero | tr '\\0' w >&2; echo ready >&2; read go; yes | head -c ${TOTAL}`;
    const cli = spawn(process.execPath, [CLI, 'run', '--host', setup.origin, '--environment', ENV, '--', 'sh', '-c', script], {
      env: { ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = cli;
    const pid = cli.pid;
    if (pid === undefined) throw new Error('the cli did not start');
    const exited = new Promise<number | null>((resolve) => cli.once('close', (code) => resolve(code)));
    let stderr = '';
    const readyLine = new Promise<void>((resolve, reject) => {
      cli.stderr.setEncoding('latin1').on('data', (text: string) => {
        stderr += text;
        if (stderr.endsWith('ready\n')) resolve();
      });
      void exited.then(() => reject(new Error(`the cli ended before the command was ready: ${stderr.slice(-200)}`)));
    });
    // Nothing reads the cli's stdout until the spec says so (a paused stream reads at most its own buffer).
    cli.stdout.pause();

    await within(readyLine, 30_000, 'ready line');
    const [summary] = await firstValueFrom(setup.environment.processes$.pipe(filter((list) => list.some((p) => p.argv.includes(script)))));
    const hosted = summary === undefined ? undefined : setup.environment.getProcess(summary.processId);
    if (hosted === undefined) throw new Error('the host does not list the command');
    const truth = new GroundTruth(hosted);
    const idle = memoryOf(pid);
    // From here on, VmHWM is the peak since idle.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    expect(memoryOf(pid).hwm).toBeLessThan(idle.rss + MiB);
    const readBefore = bytesRead(pid);

    // Go: the command writes 20 MB while the reader stalls, until the host's library saw it closed.
    cli.stdin.end('go\n');
    await within(
      firstValueFrom(hosted.state$.pipe(filter((state) => state === 'closed'))),
      STALL_BOUND_MS,
      'close of the command while the reader stalls',
    );
    await truth.done;
    const stalled = memoryOf(pid);
    const readWhileStalled = bytesRead(pid) - readBefore;
    const unread = cli.stdout.readableLength;

    // The reader drains: every chunk hashed, the cli's peak read as it goes (VmHWM only grows).
    const hash = createHash('sha256');
    let received = 0;
    let peak = stalled.hwm;
    cli.stdout.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      received += chunk.byteLength;
      if (cli.exitCode === null) peak = Math.max(peak, memoryOf(pid).hwm);
    });
    cli.stdout.resume();
    const code = await within(exited, 60_000, 'exit of the cli after the reader drained');

    process.stdout.write(
      `exec-rx run --host into a stalled reader: idle RSS ${mib(idle.rss)} (lifetime peak until then ${mib(idle.hwm)}); while stalled it read ${mib(readWhileStalled)}, RSS ${mib(stalled.rss)}, peak since idle ${mib(stalled.hwm)}; peak since idle at the end ${mib(peak)} (+${mib(peak - idle.rss)}); ${mib(unread)} waited unread in the reader's buffer\n`,
    );
    expect(truth.problems).toEqual([]);
    expect({ code, warmUp: stderr.length - 'ready\n'.length, stderr: stderr.replace(/^w+/, '') }).toEqual({ code: 0, warmUp: WARM_UP, stderr: 'ready\n' });
    // The stall held: the reader's side had at most its own stream buffer, and the cli read a small part
    // of the event stream (20 MB is about 27 MB of SSE); the rest waited in TCP and at the host.
    expect(unread).toBeLessThan(MiB);
    expect(readWhileStalled).toBeLessThan(8 * MiB);
    const expected = Buffer.alloc(TOTAL, 'y\n');
    expect(received).toBe(TOTAL);
    expect(hash.digest('hex')).toBe(sha256(expected));
    expect(sha256(truth.stdout())).toBe(sha256(expected));
    expect(peak).toBeLessThanOrEqual(idle.rss + 32 * MiB);
  });
});
