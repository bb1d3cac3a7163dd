/**
 * `exec-rx run --host`, the built cli, against a host that keeps output in memory with a small history
 * (64 events / 256 KiB, as `exec-rx host --data-dir none` with `processHistory` from code), into a reader
 * slower than the command: nothing reads the cli's stdout until the command closed (20 MB written
 * meanwhile). The host ends the stalled live stream past its send buffer, and the cli's resume finds
 * the start gone: it says where the hole is, writes every byte after it once and in order, and exits
 * 254 (not the command's 0) after a last line naming the command's exit code and the events lost.
 *
 * The reader is slow by not reading, never by a sleep: the spec reads the cli's stdout only once the
 * host's library saw the command closed, or fails after 60 s.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { SseHost } from '../host/sse/sse-setup';
import { GroundTruth, startSseHost, within } from '../host/sse/sse-setup';
import { CLI, killIfRunning } from './cli-process';

jest.setTimeout(180_000);

const ENV = 'cli-run-host-lost-output';
const TOTAL = 20_000_000;

describe('exec-rx run --host into a reader slower than the command, on a small in-memory history', () => {
  let setup: SseHost;
  let child: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    setup = await startSseHost({ environmentId: ENV, manager: { processHistory: { historyEvents: 64, historyBytes: 256 * 1024 } } });
  });
  afterAll(() => killIfRunning(child));

  it('says where output was lost, writes the rest exactly, and exits 254 after a line naming the command\'s exit code and what was lost', async () => {
    // The command waits for a line on its stdin (ours, streamed) so the ground truth sees it from seq 1.
    const script = `read go; yes | head -c ${TOTAL}`;
    const cli = spawn(process.execPath, [CLI, 'run', '--host', setup.origin, '--environment', ENV, '--', 'sh', '-c', script], {
      env: { ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = cli;
    const exited = new Promise<number | null>((resolve) => cli.once('close', (code) => resolve(code)));
    let stderr = '';
    cli.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    // Nothing reads the cli's stdout until the command closed (a paused stream reads at most its own buffer).
    cli.stdout.pause();

    const [summary] = await within(
      firstValueFrom(setup.environment.processes$.pipe(filter((list) => list.some((p) => p.argv.includes(script))))),
      30_000,
      'the command listed',
    );
    const hosted = summary === undefined ? undefined : setup.environment.getProcess(summary.processId);
    if (hosted === undefined) throw new Error('the host does not list the command');
    const truth = new GroundTruth(hosted);
    cli.stdin.end('go\n');
    await within(firstValueFrom(hosted.state$.pipe(filter((state) => state === 'closed'))), 60_000, 'close of the command while the reader stalls');
    await truth.done;

    const received: Buffer[] = [];
    cli.stdout.on('data', (chunk: Buffer) => received.push(chunk));
    cli.stdout.resume();
    const code = await within(exited, 60_000, 'exit of the cli after the reader read');

    process.stdout.write(`run --host into a reader slower than the command: exit ${String(code)}, ${Buffer.concat(received).byteLength} of ${TOTAL} bytes written; stderr:\n${stderr}`);
    expect(truth.problems).toEqual([]);
    const lines = stderr.split('\n').filter((line) => line !== '');
    const notes = lines.slice(0, -1).map((line) => /^exec-rx: output before seq (\d+) is no longer held \((\d+) events?\)$/.exec(line));
    const last = /^exec-rx: output was lost: (\d+) events? no longer held when they were to be written; the command exited with 0$/.exec(lines.at(-1) ?? '');
    expect({ code, notes: notes.length > 0 && notes.every((note) => note !== null), last: last !== null }).toEqual({ code: 254, notes: true, last: true });
    // Every hole noted, summed in the last line; the bytes are every stdout chunk outside the holes, once and in order.
    const dropped = new Set<number>();
    let lostEvents = 0;
    for (const note of notes) {
      const nextSeq = Number(note?.[1]);
      const count = Number(note?.[2]);
      lostEvents += count;
      for (let seq = nextSeq - count; seq < nextSeq; seq += 1) dropped.add(seq);
    }
    expect(Number(last?.[1])).toBe(lostEvents);
    const kept: Uint8Array[] = [];
    for (const [seq, event] of truth.bySeq) if (!dropped.has(seq) && event.type === 'output' && event.stream === 'stdout') kept.push(event.chunk);
    const bytes = Buffer.concat(received);
    expect(bytes.byteLength).toBeLessThan(TOTAL);
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect(bytes.equals(Buffer.concat(kept))).toBe(true);
  });
});
