/**
 * ProcessStdin's persistence (issue 21): each write's executor writeIds are reserved and persisted
 * BEFORE the `process/write` goes out (nothing is sent when the record cannot be written); a stdin made
 * again from a record after a restart sends a retried write with its recorded ids, goes on after the
 * record's counter, and sends a recorded end again.
 */
import { ExecBackend } from '../../../src/exec/exec-backend';
import type { ExecProcess } from '../../../src/exec/exec-process';
import { FifoFeeder } from '../../../src/exec/fifo-feeder';
import { ApiProblem } from '../../../src/host/api/problem';
import { ProcessStdin } from '../../../src/host/api/process-stdin';
import type { StdinRecord } from '../../../src/store/stdin-record';
import type { ExecClient } from '../../../src/session/exec-client';
import type { PeerScript } from '../../support/fake-socket-port';
import { FakeSocketPort } from '../../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../../support/scripted-client';

/** An executor that starts anything and accepts every write. */
const executor = (): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = frame['method'];
    if (typeof method !== 'string' || !('id' in frame)) return;
    if (method === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') return peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
    if (method === 'process/write') return peer.deliver({ id: frame['id'], result: { status: 'accepted' } });
  };
  return new FakeSocketPort(script);
};

interface Rig {
  readonly port: FakeSocketPort;
  readonly client: ExecClient;
  readonly command: ExecProcess;
  readonly helper: ExecProcess;
}

async function rig(): Promise<Rig> {
  const port = executor();
  const { client } = await connectedClient(port);
  const backend = new ExecBackend(client, () => ({}), listEndingWith(client));
  const { process: command } = await backend.start({ processId: 'cmd', argv: ['cat'], cwd: '/tmp' });
  const { process: helper } = await backend.start({ processId: 'feeder', argv: ['sh'], cwd: '/tmp', pipeStdin: true }, { unlisted: true });
  return { port, client, command, helper };
}

/** The `process/write` params sent so far: [processId, writeId, decoded chunk]. */
const writesOf = (port: FakeSocketPort): [unknown, unknown, string][] =>
  port.sent
    .filter((m) => m['method'] === 'process/write')
    .map((m) => m['params'] as { processId: string; writeId: string; chunk: string })
    .map((p) => [p.processId, p.writeId, Buffer.from(p.chunk, 'base64').toString('utf8')]);

/** A persistence that records each record, with the writes sent when it was called, and can hold or fail. */
class Recorder {
  readonly records: { readonly record: StdinRecord; readonly sentBefore: number }[] = [];
  fail: Error | undefined;
  private held: (() => void)[] = [];
  hold = false;
  constructor(private readonly port: FakeSocketPort) {}
  readonly persist = async (record: StdinRecord): Promise<void> => {
    this.records.push({ record: structuredClone(record), sentBefore: writesOf(this.port).length });
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.fail !== undefined) throw this.fail;
  };
  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
  get last(): StdinRecord | undefined {
    return this.records[this.records.length - 1]?.record;
  }
}

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');
/** Lets queued promise work run. */
const turns = async (n = 20): Promise<void> => {
  for (let i = 0; i < n; i += 1) await Promise.resolve();
};

/** The command's stdin through its FIFO feeder, each record kept by a {@link Recorder} on `port`. */
function fifoStdin(port: FakeSocketPort, command: ExecProcess, helper: ExecProcess): { readonly recorder: Recorder; readonly stdin: ProcessStdin } {
  const recorder = new Recorder(port);
  return { recorder, stdin: new ProcessStdin(command, { kind: 'fifo', feeder: new FifoFeeder(helper) }, { persist: recorder.persist }) };
}

describe('ProcessStdin with persistence', () => {
  let current: Rig | undefined;
  afterEach(() => current?.client.close());

  it('persists the write with its executor writeIds before sending it, and the end before the end', async () => {
    current = await rig();
    const { port, command, helper } = current;
    const { recorder, stdin } = fifoStdin(port, command, helper);
    await turns();
    recorder.hold = true;
    const writing = stdin.write('w1', bytes('a\n'));
    await turns();
    // The record is written (held here) and nothing went out yet.
    expect(writesOf(port)).toEqual([]);
    expect(recorder.last).toEqual({ target: 'fifo', writerProcessId: 'feeder', nextWriteId: 2, endWriteId: null, ttyPath: null, writes: [{ writeId: 'w1', firstWriteId: 1, count: 1 }] });
    recorder.release();
    recorder.hold = false;
    await writing;
    expect(writesOf(port)).toEqual([['feeder', '1', '2\na\n']]);

    await stdin.write('w2', bytes('b\n'));
    await stdin.end();
    expect(writesOf(port)).toEqual([
      ['feeder', '1', '2\na\n'],
      ['feeder', '2', '2\nb\n'],
      ['feeder', '3', '0\n'],
    ]);
    expect(recorder.records.map(({ record, sentBefore }) => [record.nextWriteId, record.endWriteId, record.writes.length, sentBefore])).toEqual([
      [1, null, 0, 0], // at construction: the feeder and its counter, before any write
      [2, null, 1, 0],
      [3, null, 2, 1],
      [4, 3, 2, 2],
    ]);
    // Ids and counters only: the bytes are never persisted.
    expect(JSON.stringify(recorder.records)).not.toContain('a\\n');
  });

  it('sends nothing when the record cannot be written (503), never hands the reserved ids on, and keeps the tty path', async () => {
    current = await rig();
    const { port, command } = current;
    const recorder = new Recorder(port);
    const stdin = new ProcessStdin(command, { kind: 'pty' }, { persist: recorder.persist, ttyPath: '/tmp/exec-rx-tty-1' });
    await turns();
    recorder.fail = new Error('ENOSPC: no space left');
    await expect(stdin.write('w1', bytes('x'))).rejects.toEqual(new ApiProblem(503, 'HOST_ERROR', 'the host could not record the write before sending it: ENOSPC: no space left'));
    expect(writesOf(port)).toEqual([]);
    recorder.fail = undefined;
    await stdin.write('w2', bytes('y'));
    expect(writesOf(port)).toEqual([['cmd', '2', 'y']]);
    expect(recorder.last).toMatchObject({ target: 'pty', writerProcessId: 'cmd', nextWriteId: 3, ttyPath: '/tmp/exec-rx-tty-1' });
  });

  it('sends a write whose record failed once its retry is recorded, with the ids it reserved; the same for an end', async () => {
    current = await rig();
    const { port, command, helper } = current;
    const { recorder, stdin } = fifoStdin(port, command, helper);
    await turns();
    recorder.fail = new Error('Reached the max retries per request limit');
    await expect(stdin.write('w1', bytes('a\n'))).rejects.toMatchObject({ status: 503, code: 'HOST_ERROR' });
    await expect(stdin.write('w1', bytes('a\n'))).rejects.toMatchObject({ status: 503, code: 'HOST_ERROR' });
    await expect(stdin.end()).rejects.toMatchObject({ status: 503, code: 'HOST_ERROR' });
    expect(writesOf(port)).toEqual([]);
    // Redis answers again: the same write id goes out once, with the writeId it reserved first.
    recorder.fail = undefined;
    await expect(stdin.write('w1', bytes('b\n'))).rejects.toMatchObject({ status: 422, code: 'WRITE_ID_REUSED' });
    await stdin.write('w1', bytes('a\n'));
    await stdin.write('w1', bytes('a\n'));
    await stdin.end();
    expect(writesOf(port)).toEqual([
      ['feeder', '1', '2\na\n'],
      ['feeder', '2', '0\n'],
    ]);
    expect(recorder.last).toMatchObject({ nextWriteId: 3, endWriteId: 2, writes: [{ writeId: 'w1', firstWriteId: 1, count: 1 }] });
  });

  it('answers a write 503 ENVIRONMENT_ELSEWHERE once its host let go of the process (its manager closed), 409 once the process ended', async () => {
    current = await rig();
    const { port, client, command, helper } = current;
    const { stdin } = fifoStdin(port, command, helper);
    await stdin.write('w1', bytes('a\n'));
    client.close('exec-server environment manager closed');
    await expect(stdin.write('w2', bytes('b\n'))).rejects.toMatchObject({ status: 503, code: 'ENVIRONMENT_ELSEWHERE' });
    expect(writesOf(port)).toEqual([['feeder', '1', '2\na\n']]);

    const next = await rig();
    current = next;
    const ended = new ProcessStdin(next.command, { kind: 'pty' });
    next.port.deliver({ method: 'process/closed', params: { processId: 'cmd', seq: 1 } });
    await expect(ended.write('w1', bytes('x'))).rejects.toMatchObject({ status: 409, code: 'STDIN_CLOSED' });
  });

  it('made again from a record: a retried write goes out with its recorded ids, new ones after the recorded counter', async () => {
    current = await rig();
    const { port, command, helper } = current;
    const recorder = new Recorder(port);
    const restored: StdinRecord = { target: 'fifo', writerProcessId: 'feeder', nextWriteId: 5, endWriteId: null, ttyPath: null, writes: [{ writeId: 'w1', firstWriteId: 3, count: 1 }] };
    const stdin = new ProcessStdin(command, { kind: 'fifo', feeder: new FifoFeeder(helper) }, { persist: recorder.persist, restored });
    await stdin.write('w1', bytes('a\n'));
    await stdin.write('w1', bytes('a\n')); // a second retry: answered from memory
    await stdin.write('w2', bytes('b\n'));
    await stdin.end();
    expect(writesOf(port)).toEqual([
      ['feeder', '3', '2\na\n'],
      ['feeder', '5', '2\nb\n'],
      ['feeder', '6', '0\n'],
    ]);
    expect(recorder.last).toEqual({ ...restored, nextWriteId: 7, endWriteId: 6, writes: [{ writeId: 'w1', firstWriteId: 3, count: 1 }, { writeId: 'w2', firstWriteId: 5, count: 1 }] });
  });

  it('made again from an ended record: sends the end again with its id, answers recorded writes, refuses new ones', async () => {
    current = await rig();
    const { port, command, helper } = current;
    const recorder = new Recorder(port);
    const restored: StdinRecord = { target: 'fifo', writerProcessId: 'feeder', nextWriteId: 3, endWriteId: 2, ttyPath: null, writes: [{ writeId: 'w1', firstWriteId: 1, count: 1 }] };
    const stdin = new ProcessStdin(command, { kind: 'fifo', feeder: new FifoFeeder(helper) }, { persist: recorder.persist, restored });
    await stdin.end();
    await expect(stdin.write('w1', bytes('a\n'))).resolves.toBeUndefined();
    await expect(stdin.write('w9', bytes('z'))).rejects.toMatchObject({ status: 409, code: 'STDIN_CLOSED' });
    expect(writesOf(port)).toEqual([['feeder', '2', '0\n']]);
    expect(recorder.records).toEqual([]);
  });
});
