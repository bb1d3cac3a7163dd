/** ExecProcess.toReadable: a pull consumer that holds the connection paused while it is behind. */
import type { Readable } from 'node:stream';
import { ProtocolError } from '../../src/errors';
import { ExecProcess } from '../../src/exec/exec-process';
import { ReplayTruncatedError } from '../../src/exec/replay-truncated-error';
import { ConnectionFlow } from '../../src/rpc/connection-flow';
import type { ExecSession } from '../../src/session/exec-session';
import type { ReadResponse } from '../../src/wire/process';
import { quietSession } from '../support/quiet-session';

/** A process on a quiet session whose flow pauses a recorded socket. */
function started(historyEvents = 256): { process: ExecProcess; flow: ConnectionFlow; socket: string[] } {
  const flow = new ConnectionFlow();
  const socket: string[] = [];
  flow.attach({ pauseReading: () => socket.push('pause'), resumeReading: () => socket.push('resume') });
  const session: ExecSession = { ...quietSession, flow };
  return { process: new ExecProcess('p', session, { historyEvents }), flow, socket };
}

const read = (chunks: ReadResponse['chunks'], nextSeq: number, closed = false): ReadResponse => ({ chunks, nextSeq, exited: closed, exitCode: closed ? 0 : null, closed, failure: null, sandboxDenied: false });

/** Output `text` as the event `seq` (through the inbox, as a notification would come). */
const feed = (process: ExecProcess, seq: number, text: string): void => process.inbox.recover(read([{ seq, stream: 'stdout', chunk: new Uint8Array(Buffer.from(text)) }], seq + 1));
const close = (process: ExecProcess, seq: number): void => process.inbox.recover(read([], seq + 3, true));

/** Everything a Readable still gives, until its end. */
async function drain(readable: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of readable) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString();
}

describe('ExecProcess.toReadable', () => {
  it('holds the connection paused while its buffer is at the high-water mark and releases it once read below', async () => {
    const { process, flow, socket } = started();
    const readable = process.toReadable('stdout', { highWaterMark: 10 });
    feed(process, 1, 'aaaaaa');
    expect(flow.paused).toBe(false);
    feed(process, 2, 'bbbbbb');
    expect(flow.facts).toMatchObject({ paused: true, holds: 1, pauses: 1 });
    // What was on its way still arrives, and is buffered: nothing is lost.
    feed(process, 3, 'cccccc');
    expect(flow.facts).toMatchObject({ paused: true, holds: 1 });
    expect(readable.readableLength).toBe(18);
    expect(String(readable.read(12))).toBe('aaaaaabbbbbb');
    // Node asks for more once the buffer is below the mark: the connection reads again.
    await new Promise((resolve) => setImmediate(resolve));
    expect(flow.facts).toMatchObject({ paused: false, holds: 0, pauses: 1 });
    feed(process, 4, 'dd');
    close(process, 4);
    expect(await drain(readable)).toBe('ccccccdd');
    expect(socket).toEqual(['pause', 'resume']);
    expect(process.retained.subscribers).toBe(0);
  });

  it('yields every byte to a slow `for await` consumer, pausing as often as it falls behind', async () => {
    const { process, flow } = started(4096);
    const readable = process.toReadable(undefined, { highWaterMark: 64 });
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}\n`);
    let seq = 0;
    const producer = (async () => {
      for (const line of lines) {
        feed(process, (seq += 1), line);
        if (seq % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      close(process, seq);
    })();
    const parts: string[] = [];
    for await (const chunk of readable) {
      parts.push(String(chunk));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await producer;
    expect(parts.join('')).toBe(lines.join(''));
    expect(flow.facts.pauses).toBeGreaterThan(1);
    expect(flow.facts).toMatchObject({ paused: false, holds: 0 });
  });

  it('is destroyed with the failure, or with ReplayTruncatedError past the history, releasing its hold', async () => {
    const { process, flow } = started(2);
    const readable = process.toReadable('stdout', { highWaterMark: 1 });
    feed(process, 1, 'xx');
    expect(flow.holds).toBe(1);
    const failure = new ProtocolError('boom');
    process.inbox.fail(failure);
    await expect(drain(readable)).rejects.toMatchObject({ code: 'PROCESS_FAILED', cause: failure });
    expect(flow.holds).toBe(0);

    const truncated = started(2);
    for (let seq = 1; seq <= 4; seq += 1) feed(truncated.process, seq, `${seq}`);
    await expect(drain(truncated.process.toReadable('stdout'))).rejects.toBeInstanceOf(ReplayTruncatedError);
    const rest = truncated.process.toReadable('stdout', { allowTruncated: true });
    close(truncated.process, 4);
    expect(await drain(rest)).toBe('34');
  });

  it('releases its hold and unsubscribes when its consumer destroys it early', () => {
    const { process, flow } = started();
    const readable = process.toReadable('stdout', { highWaterMark: 4 });
    feed(process, 1, 'abcdef');
    expect(flow.holds).toBe(1);
    expect(process.retained.subscribers).toBe(1);
    readable.destroy();
    expect(flow.holds).toBe(0);
    expect(process.retained.subscribers).toBe(0);
    feed(process, 2, 'more');
    expect(flow.holds).toBe(0);
  });
});
