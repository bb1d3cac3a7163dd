/**
 * The stdio port on in-memory streams: what it hands over from the executor's stdout (lines cut at any
 * byte, inside a multi-byte character too; `\r\n`, blank lines, a long line), how it closes, what it
 * writes, and its pause.
 */
import { Buffer } from 'node:buffer';
import { PassThrough } from 'node:stream';
import { stdioSocketPort } from '../../src/transport/stdio-socket-port';

interface Heard {
  readonly messages: { readonly frame: string | Uint8Array; readonly ascii: boolean | undefined }[];
  readonly closes: { readonly initiator: string; readonly code: number; readonly reason: string }[];
}

function open(): { input: PassThrough; output: PassThrough; port: ReturnType<typeof stdioSocketPort>; heard: Heard; stop: () => void } {
  const input = new PassThrough();
  const output = new PassThrough();
  const port = stdioSocketPort(input, output);
  const heard: Heard = { messages: [], closes: [] };
  const stop = port.listen({
    message: (frame, ascii) => heard.messages.push({ frame, ascii }),
    close: (initiator, code, reason) => heard.closes.push({ initiator, code, reason }),
  });
  return { input, output, port, heard, stop };
}

/** Resolves once `input` has emitted everything written so far (PassThrough emits on a later tick). */
const drained = (input: PassThrough): Promise<void> => new Promise((resolve) => setImmediate(resolve)).then(() => (input.readableLength === 0 ? undefined : drained(input)));

describe('stdioSocketPort', () => {
  it('hands over each line once; \\r\\n and blank lines as the executor reads them', async () => {
    const { input, heard, stop } = open();
    const bytes = Buffer.from('{"id":1,"result":{}}\r\n\n  \n{"method":"m","params":{"t":"é"}}\n', 'utf8');
    const inside = bytes.indexOf(0xc3) + 1; // between the two bytes of é
    input.write(bytes.subarray(0, inside));
    input.write(bytes.subarray(inside));
    await drained(input);
    expect(heard.messages).toEqual([
      { frame: '{"id":1,"result":{}}', ascii: undefined },
      { frame: '{"method":"m","params":{"t":"é"}}', ascii: undefined },
    ]);
    stop();
  });

  it('gives the same lines whatever byte the stream is cut at, and skips blank lines as trim() sees them', async () => {
    const lines = ['{"a":"café, 日本語, 😀"}', ' \t{"b":1}', '"\u00a0"', 'x\r'];
    const bytes = Buffer.from(`${lines[0] ?? ''}\r\n\n  \t\r\n\u00a0\n${lines[1] ?? ''}\n\u2028\n${lines[2] ?? ''}\n${lines[3] ?? ''}\r\n`, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const { input, heard, stop } = open();
      input.write(bytes.subarray(0, cut));
      input.write(bytes.subarray(cut));
      await drained(input);
      expect({ cut, frames: heard.messages.map((m) => m.frame) }).toEqual({ cut, frames: lines });
      stop();
    }
  });

  it('takes a very long line in many chunks', async () => {
    const { input, heard, stop } = open();
    const line = `{"chunk":"${'QUJD'.repeat(300_000)}","tail":"ü"}`;
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    for (let at = 0; at < bytes.length; at += 64 * 1024) input.write(bytes.subarray(at, at + 64 * 1024));
    await drained(input);
    expect(heard.messages.map((m) => m.frame)).toEqual([line]);
    stop();
  });

  it('reads a stdout that has an encoding set: its string chunks are taken as UTF-8', async () => {
    const { input, heard, stop } = open();
    input.setEncoding('utf8');
    input.write(Buffer.from('{"a":"日本"}\n{"b":1}\n', 'utf8'));
    await drained(input);
    expect(heard.messages).toEqual([
      { frame: '{"a":"日本"}', ascii: undefined },
      { frame: '{"b":1}', ascii: undefined },
    ]);
    stop();
  });

  it('closes (remote) when stdout ends, dropping a last line that has no newline', async () => {
    const { input, port, heard } = open();
    input.end(Buffer.from('{"a":1}\n{"b":'));
    await new Promise((resolve) => input.once('end', resolve));
    expect(heard.messages.map((m) => m.frame)).toEqual(['{"a":1}']);
    expect(heard.closes).toEqual([{ initiator: 'remote', code: 1006, reason: 'executor stdout ended' }]);
    expect(port.isOpen).toBe(false);
  });

  it('writes each message as one line, and close() ends stdin and closes (local)', async () => {
    const { output, port, heard } = open();
    const written: Buffer[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk));
    port.send('{"id":1,"method":"initialize"}');
    port.close('done');
    expect(() => port.send('{}')).toThrow('stdio is closed');
    await new Promise((resolve) => output.once('end', resolve));
    expect(Buffer.concat(written).toString('utf8')).toBe('{"id":1,"method":"initialize"}\n');
    expect(heard.closes).toEqual([{ initiator: 'local', code: 1006, reason: 'closed by client' }]);
  });

  it('pause() stops taking lines from stdout and resume() takes them again, nothing lost', async () => {
    const { input, port, heard, stop } = open();
    port.pause?.();
    input.write('{"a":1}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard.messages).toEqual([]);
    expect(input.readableLength).toBeGreaterThan(0);
    port.resume?.();
    await drained(input);
    expect(heard.messages.map((m) => m.frame)).toEqual(['{"a":1}']);
    stop();
  });
});
