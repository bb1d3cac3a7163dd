/**
 * What the SSE fault proxy reads from the bytes it forwards: a request head (its resume point), and a
 * response (head, chunked body, SSE frames) for what it delivered whole. One entry per request.
 */
import { SseParser } from './sse-parser';

/** One request through the proxy. Never holds the token. */
export interface ProxiedRequest {
  /** 1-based. */
  readonly no: number;
  /** The request line's path without its query. */
  path: string;
  /** The `Last-Event-ID` header it forwarded (a number; NaN when not numeric). */
  lastEventId: number | undefined;
  /** The `?after=` it forwarded. */
  after: number | undefined;
  /** The response status (0 before the head was forwarded whole). */
  status: number;
  /** The response's `Content-Type`, lower case ('' before the head was forwarded whole). */
  contentType: string;
  /** Sequenced ids forwarded whole, first and last; how many. */
  firstId: number | undefined;
  lastId: number | undefined;
  ids: number;
  /** Ids in the response at or below the resume point (a duplicate the host should never send). */
  readonly atOrBelowResume: number[];
  /** Ids that did not follow the previous one (or the resume point) by exactly 1. */
  readonly notContiguous: number[];
  /** Response bytes forwarded on this connection. */
  responseBytes: number;
  /** The cut fell inside a frame (the client got part of one). */
  cutInsideFrame: boolean;
  /** The host ended the body (its terminating chunk was forwarded). */
  complete: boolean;
  /** How the connection ended: cut here, the host closed it, or the client went away. Undefined while open. */
  end: 'cut' | 'host' | 'client' | undefined;
  /** Bytes the client sent after its request head (a second request on the connection; there should be none). */
  bytesAfterRequest: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD = 64 * 1024;

/** Collects a head (up to the blank line) from a byte stream, then ignores the rest. */
export class HeadReader {
  private parts: Buffer[] = [];
  private done = false;

  constructor(private readonly onHead: (head: string, rest: Buffer) => void) {}

  /** The head was read (or given up on). */
  get finished(): boolean {
    return this.done;
  }

  push(chunk: Buffer): void {
    if (this.done) return;
    this.parts.push(chunk);
    const all = Buffer.concat(this.parts);
    const end = all.indexOf(HEAD_END);
    if (end < 0) {
      if (all.length > MAX_HEAD) this.done = true;
      this.parts = [all];
      return;
    }
    this.done = true;
    this.parts = [];
    this.onHead(all.subarray(0, end).toString('latin1'), all.subarray(end + HEAD_END.length));
  }
}

export function readRequestHead(head: string, entry: ProxiedRequest): void {
  const [requestLine = '', ...lines] = head.split('\r\n');
  const target = requestLine.split(' ')[1] ?? '';
  const url = new URL(target, 'http://proxy.invalid');
  entry.path = url.pathname;
  const after = url.searchParams.get('after');
  if (after !== null) entry.after = Number(after);
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'last-event-id') entry.lastEventId = Number(line.slice(colon + 1).trim());
  }
}

/** Follows a response: its head, then (for `text/event-stream`) the chunked body's frames. */
export class ResponseWatcher {
  private readonly head: HeadReader;
  private readonly chunks = new ChunkedDecoder(
    (data) => this.sse.push(data),
    () => (this.entry.complete = true),
  );
  private readonly sse: SseParser;
  private streaming = false;
  private previous: number | undefined;

  constructor(private readonly entry: ProxiedRequest) {
    this.head = new HeadReader((head, rest) => {
      const [statusLine = '', ...lines] = head.split('\r\n');
      entry.status = Number(statusLine.split(' ')[1] ?? 0);
      const header = (name: string): string => lines.find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim().toLowerCase() ?? '';
      entry.contentType = header('content-type');
      this.streaming = entry.contentType.startsWith('text/event-stream') && header('transfer-encoding') === 'chunked';
      this.previous = this.resumePoint() ?? 0;
      if (this.streaming) this.chunks.push(rest);
    });
    this.sse = new SseParser({ frame: (frame) => this.onId(frame.id === undefined ? undefined : Number(frame.id)) });
  }

  /** Part of a frame was forwarded after the last whole one. */
  get insideFrame(): boolean {
    return this.sse.partialBytes > 0;
  }

  push(piece: Buffer): void {
    if (this.entry.status === 0) this.head.push(piece);
    else if (this.streaming) this.chunks.push(piece);
  }

  private resumePoint(): number | undefined {
    return this.entry.after ?? this.entry.lastEventId;
  }

  private onId(id: number | undefined): void {
    if (id === undefined) {
      this.previous = undefined; // a truncated marker (or failed): what follows starts anew
      return;
    }
    const entry = this.entry;
    const resume = this.resumePoint();
    if (resume !== undefined && id <= resume) entry.atOrBelowResume.push(id);
    if (this.previous !== undefined && id !== this.previous + 1) entry.notContiguous.push(id);
    this.previous = id;
    entry.firstId ??= id;
    entry.lastId = id;
    entry.ids += 1;
  }
}

/** Decodes `Transfer-Encoding: chunked` incrementally, handing on the data. */
class ChunkedDecoder {
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private line = '';
  private left = 0;

  constructor(
    private readonly onData: (data: Buffer) => void,
    private readonly onEnd: () => void,
  ) {}

  push(bytes: Buffer): void {
    let i = 0;
    while (i < bytes.length && this.state !== 'done') {
      if (this.state === 'data') {
        const take = Math.min(this.left, bytes.length - i);
        this.onData(bytes.subarray(i, i + take));
        this.left -= take;
        i += take;
        if (this.left === 0) this.state = 'data-end';
        continue;
      }
      const byte = bytes[i] ?? 0;
      i += 1;
      if (byte !== 0x0a) {
        if (byte !== 0x0d) this.line += String.fromCharCode(byte);
        continue;
      }
      const line = this.line;
      this.line = '';
      if (this.state === 'size') {
        this.left = parseInt(line.split(';')[0] ?? '', 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else if (this.state === 'data-end') this.state = 'size';
      else if (line === '') {
        this.state = 'done';
        this.onEnd();
      }
    }
  }
}
