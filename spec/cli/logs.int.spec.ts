/**
 * `exec-rx logs`, the built cli, against a real host (operator API, a small history: 64 events / 256
 * KiB) with a real codex executor: a late join with `--follow` is byte-exact against what the host's
 * library received, `--after SEQ` gives exactly what follows SEQ, without `--follow` it exits after what
 * the host holds, and where neither the host nor the executor's window still holds the start, a note on
 * stderr, exactly the bytes after it, and exit 254 after a last line saying what was lost. The token
 * appears in nothing it prints.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseHost } from '../host/sse/sse-setup';
import { GroundTruth, startSseHost } from '../host/sse/sse-setup';
import { runCli, runCliBytes } from './cli-process';

jest.setTimeout(90_000);

const ENV = 'cli-logs';

describe('exec-rx logs', () => {
  let setup: SseHost;
  let work: string;
  const printed: string[] = [];
  const cliEnv = (): NodeJS.ProcessEnv => ({ ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: setup.origin });
  const logs = async (processId: string, extra: readonly string[] = [], onStdout?: (bytes: number) => void): Promise<{ code: number | null; stdout: Buffer; stderr: string }> => {
    const result = await runCliBytes(['logs', '--environment', ENV, processId, ...extra], '', cliEnv(), onStdout);
    printed.push(result.stdout.toString('latin1'), result.stderr);
    return result;
  };
  /** The stderr bytes of seqs after `after`, as text. */
  const stderrAfter = (truth: GroundTruth, after: number): string => {
    const parts: Uint8Array[] = [];
    for (const [seq, event] of truth.bySeq) if (seq > after && event.type === 'output' && event.stream === 'stderr') parts.push(event.chunk);
    return Buffer.concat(parts).toString('utf8');
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-logs-'));
    setup = await startSseHost({ environmentId: ENV, manager: { processHistory: { historyEvents: 64, historyBytes: 256 * 1024 } } });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('joins late with --follow: what came before, then live, byte-exact, exit 0 after the process closed; --after SEQ gives exactly what follows', async () => {
    const go = join(work, 'go-follow');
    const script = `head -c 65536 /dev/urandom; echo mid >&2; while [ ! -e '${go}' ]; do sleep 0.05; done; head -c 65536 /dev/urandom; echo end >&2; exit 5`;
    const { resource, process } = await setup.start(['/bin/sh', '-c', script], work);
    const truth = new GroundTruth(process);
    await truth.when(() => truth.stdoutBytes >= 65536 && truth.text('stderr') === 'mid\n');
    // Joining late: the first half is history; once it came, the second half is made live.
    const followed = await logs(resource.id, ['--follow'], (bytes) => {
      if (bytes >= 65536) writeFileSync(go, '');
    });
    await truth.done;
    expect(truth.problems).toEqual([]);
    expect({ code: followed.code, stderr: followed.stderr, bytes: followed.stdout.byteLength }).toEqual({ code: 0, stderr: 'mid\nend\n', bytes: 131072 });
    expect(followed.stdout.equals(truth.stdout())).toBe(true);

    // --after: exactly what follows that seq, with and without --follow (the process has closed).
    const after = truth.seqAtStdoutOffset(40_000);
    expect(after).toBeGreaterThan(1);
    for (const extra of [[], ['--follow']]) {
      const resumed = await logs(resource.id, ['--after', String(after), ...extra]);
      expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: stderrAfter(truth, after) });
      expect(resumed.stdout.equals(truth.stdout(after))).toBe(true);
    }
  });

  it('without --follow, writes what the host holds and exits 0 while the process still runs', async () => {
    const go = join(work, 'go-snapshot');
    const { resource, process } = await setup.start(['/bin/sh', '-c', `echo held; echo held-err >&2; while [ ! -e '${go}' ]; do sleep 0.05; done; echo later`], work);
    const truth = new GroundTruth(process);
    await truth.when(() => truth.text('stdout') === 'held\n' && truth.text('stderr') === 'held-err\n');
    const snapshot = await logs(resource.id);
    expect({ code: snapshot.code, stdout: snapshot.stdout.toString('utf8'), stderr: snapshot.stderr }).toEqual({ code: 0, stdout: 'held\n', stderr: 'held-err\n' });
    expect(process.state).toBe('running');
    writeFileSync(go, '');
    await truth.done;
  });

  it('notes on stderr where the history no longer reaches, then writes exactly the bytes after it, and exits 254 after a line saying what was lost', async () => {
    // 1.5 MiB: more than the host's 256 KiB history and the executor's ~1 MiB window.
    const script = `i=0; while [ $i -lt 48 ]; do head -c 32768 /dev/urandom; sleep 0.02; i=$((i+1)); done`;
    const { resource, process } = await setup.start(['/bin/sh', '-c', script], work);
    const truth = new GroundTruth(process);
    await truth.done;
    expect(truth.problems).toEqual([]);
    for (const extra of [[], ['--follow']]) {
      const result = await logs(resource.id, extra);
      // The note where the hole is; after the bytes, a last line: what was written has a hole (254).
      const note = /^exec-rx: output before seq (\d+) is no longer held \((\d+) events\)\nexec-rx: output was lost: (\d+) events no longer held when they were to be written\n$/.exec(result.stderr);
      if (note === null) throw new Error(`no truncation note and last line on stderr: ${JSON.stringify(result.stderr)}`);
      const nextSeq = Number(note[1]);
      expect({ code: result.code, dropped: Number(note[2]), lost: Number(note[3]) }).toEqual({ code: 254, dropped: nextSeq - 1, lost: nextSeq - 1 });
      expect(nextSeq).toBeGreaterThan(1);
      expect(nextSeq).toBeLessThan(truth.lastSeq);
      const expected = truth.stdout(nextSeq - 1);
      expect(expected.byteLength).toBeGreaterThan(0);
      expect(result.stdout.equals(expected)).toBe(true);
    }
  });

  it('says an unknown process or a refused token in one line and exits 1', async () => {
    const unknown = await logs('no-such-process');
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 1, stderr: `exec-rx: no process no-such-process in environment ${ENV} (PROCESS_NOT_FOUND)\n` });
    const refused = await runCli(['logs', '--environment', ENV, 'no-such-process'], '', { ...cliEnv(), EXEC_RX_TOKEN: 'wrong-operator-token-do-not-print' });
    expect(refused).toEqual({ code: 1, stdout: '', stderr: `exec-rx: the host at ${setup.origin} refused the operator token (401): check EXEC_RX_TOKEN or --token-file\n` });
  });

  it('never prints the operator token', () => {
    expect(printed.length).toBeGreaterThan(8);
    expect(printed.filter((text) => text.includes(setup.token))).toEqual([]);
  });
});
