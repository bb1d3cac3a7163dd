/**
 * A synthetic exec-server peer for client-ceiling measurements, run as its own process (so it has its own
 * core): a WebSocket server on 127.0.0.1:0 that prints its url, answers `initialize` and
 * `environment/status`, and on `process/start` with argv `[synthetic, CHUNK_BYTES, FRAMES]` replies, then
 * writes FRAMES `process/output` frames of CHUNK_BYTES bytes each as fast as the socket takes them,
 * followed by `process/exited` and `process/closed`.
 *
 * It speaks the WebSocket framing itself (RFC 6455: unmasked server frames, masked client frames) so the
 * burst is pre-built: a batch of complete frames is built once per start; each batch written is a copy of
 * it with the seq numbers patched in (the `"seq":` value is padded with JSON whitespace to a fixed width).
 * That costs well under 1 µs per frame, far below what any client spends parsing one.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const SEQ_WIDTH = 12;
const BATCH_BYTES = 192 * 1024;

/** An unmasked server frame (FIN set). */
function frame(payload: Buffer, opcode = 0x1): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (length < 126) header[1] = length;
  else if (length < 65536) {
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

const textFrame = (value: unknown): Buffer => frame(Buffer.from(JSON.stringify(value), 'utf8'));

interface Template {
  readonly batch: Buffer;
  readonly frameBytes: number;
  readonly framesPerBatch: number;
  /** Offset of each frame's seq field inside `batch` (the field is SEQ_WIDTH spaces). */
  readonly seqOffsets: readonly number[];
}

function buildTemplate(processId: string, chunkBytes: number): Template {
  const chunk = randomBytes(chunkBytes).toString('base64');
  const before = `{"method":"process/output","params":{"processId":${JSON.stringify(processId)},"seq":`;
  const after = `,"stream":"stdout","chunk":"${chunk}"}}`;
  const one = frame(Buffer.from(`${before}${' '.repeat(SEQ_WIDTH)}${after}`, 'utf8'));
  const seqAt = one.length - Buffer.byteLength(after) - SEQ_WIDTH;
  const framesPerBatch = Math.max(1, Math.floor(BATCH_BYTES / one.length));
  const batch = Buffer.concat(Array.from({ length: framesPerBatch }, () => one));
  const seqOffsets = Array.from({ length: framesPerBatch }, (_v, i) => i * one.length + seqAt);
  return { batch, frameBytes: one.length, framesPerBatch, seqOffsets };
}

class PeerConnection {
  private pending: Buffer = Buffer.alloc(0);
  private readonly templates = new Map<string, Template>();

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', () => socket.destroy());
  }

  private onData(data: Buffer): void {
    this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
    for (;;) {
      const buf = this.pending;
      if (buf.length < 2) return;
      const opcode = (buf[0] ?? 0) & 0x0f;
      const masked = ((buf[1] ?? 0) & 0x80) !== 0;
      let length = (buf[1] ?? 0) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buf.length < 4) return;
        length = buf.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buf.length < 10) return;
        length = Number(buf.readBigUInt64BE(2));
        offset = 10;
      }
      const maskAt = offset;
      if (masked) offset += 4;
      if (buf.length < offset + length) return;
      const payload = Buffer.from(buf.subarray(offset, offset + length));
      if (masked) for (let i = 0; i < payload.length; i += 1) payload[i] = (payload[i] ?? 0) ^ (buf[maskAt + (i & 3)] ?? 0);
      this.pending = buf.subarray(offset + length);
      this.onFrame(opcode, payload);
    }
  }

  private onFrame(opcode: number, payload: Buffer): void {
    if (opcode === 0x8) {
      this.socket.destroy();
      return;
    }
    if (opcode === 0x9) {
      this.socket.write(frame(payload, 0xa));
      return;
    }
    if (opcode !== 0x1 && opcode !== 0x2) return; // pongs (ack-pong) and continuations are ignored
    const message = JSON.parse(payload.toString('utf8')) as { id?: number; method?: string; params?: { processId?: string; argv?: string[] } };
    if (message.id === undefined) return; // initialized
    switch (message.method) {
      case 'initialize':
        this.socket.write(textFrame({ id: message.id, result: { sessionId: randomUUID() } }));
        return;
      case 'environment/status':
        this.socket.write(textFrame({ id: message.id, result: { status: 'ready' } }));
        return;
      case 'process/start': {
        const processId = message.params?.processId ?? '';
        this.socket.write(textFrame({ id: message.id, result: { processId, sandboxType: 'none' } }));
        const [, chunkBytes, frames] = message.params?.argv ?? [];
        void this.burst(processId, Number(chunkBytes ?? 8192), Number(frames ?? 0));
        return;
      }
      case undefined:
      default:
        this.socket.write(textFrame({ id: message.id, error: { code: -32601, message: `synthetic peer does not implement \`${String(message.method)}\`` } }));
    }
  }

  private async burst(processId: string, chunkBytes: number, frames: number): Promise<void> {
    const key = `${processId}\u0000${chunkBytes}`;
    let template = this.templates.get(key);
    if (template === undefined) {
      template = buildTemplate(processId, chunkBytes);
      this.templates.clear();
      this.templates.set(key, template);
    }
    const { batch, frameBytes, framesPerBatch, seqOffsets } = template;
    let seq = 1;
    while (seq <= frames && !this.socket.destroyed) {
      const count = Math.min(framesPerBatch, frames - seq + 1);
      const out = Buffer.allocUnsafe(count * frameBytes);
      batch.copy(out, 0, 0, count * frameBytes);
      for (let i = 0; i < count; i += 1) {
        const digits = String(seq + i);
        out.write(digits, (seqOffsets[i] ?? 0) + SEQ_WIDTH - digits.length, 'latin1');
      }
      seq += count;
      if (!this.socket.write(out)) await this.drained();
    }
    if (this.socket.destroyed) return;
    this.socket.write(textFrame({ method: 'process/exited', params: { processId, seq: frames + 1, exitCode: 0, sandboxDenied: false } }));
    this.socket.write(textFrame({ method: 'process/closed', params: { processId, seq: frames + 2 } }));
  }

  private drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done).off('close', done);
        resolve();
      };
      this.socket.on('drain', done).on('close', done);
    });
  }
}

const server = createServer((_request, response) => response.writeHead(426).end());
server.on('upgrade', (request, socket: Socket) => {
  const key = request.headers['sec-websocket-key'];
  if (typeof key !== 'string') {
    socket.destroy();
    return;
  }
  const accept = createHash('sha1').update(key + WS_GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  new PeerConnection(socket);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/\n`);
});
// The parent's pipe closing means the bench is gone: go with it.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
