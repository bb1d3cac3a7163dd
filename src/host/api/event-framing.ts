/**
 * How an event stream frames what it writes ({@link EventFraming}): Server-Sent Events for browsers, curl
 * and every client that did not ask for more (`./event-frames`), or the binary stream a program asks for
 * by naming its media type (`./binary-frames`). The pumps (`./process-event-stream`, `./log-event-stream`)
 * and the stream's own frames (ping, come-back, revoked) go through the framing of the stream they write to.
 */
import type { ExecClientErrorCode } from '../../errors';
import type { ProcessEvent } from '../../exec/process-event';
import type { LogEvent } from '../../store/log-events';
import { SSE_MEDIA_TYPE } from '../../wire/binary-events';
import { RESTART_EVENT } from '../../wire/operator-api';
import { failedFrame, frameOf, logFrameOf, overviewFrame, truncatedFrame } from './event-frames';

/**
 * One frame on the wire: whole, or (an output of the binary stream) its head and the chunk's bytes as
 * the log holds them, written one after the other without a copy.
 */
export type WireFrame = Buffer | SplitFrame;

/** A frame in two parts: `head`, then `body` (the chunk, not copied). */
export class SplitFrame {
  constructor(
    readonly head: Buffer,
    readonly body: Uint8Array,
  ) {}

  get byteLength(): number {
    return this.head.byteLength + this.body.byteLength;
  }
}

/** How one stream frames its events. Every method returns a whole frame; none keeps state per stream. */
export interface EventFraming {
  /** The answer's `Content-Type`. */
  readonly contentType: string;
  /** A live event (from a history or the executor's window). */
  event(event: ProcessEvent): WireFrame;
  /** An event read from an output log; `share`: it came from the log's memory (see `logFrameOf`). */
  logEvent(event: LogEvent, share: boolean): WireFrame;
  /** A `failed` event the API makes (the stream ends after it). */
  failed(code: ExecClientErrorCode, message: string): WireFrame;
  /** A `truncated` marker the API makes itself. */
  truncated(nextSeq: number, droppedEvents: number): WireFrame;
  /** The keep-alive every 15 s. */
  ping(): WireFrame;
  /** The come-back event of a host that stops: reconnect after `retryMs`. */
  comeBack(retryMs: number): WireFrame;
  /** The last words on a stream whose token was revoked. */
  revoked(): WireFrame;
  /** The overview stream's frame (SSE only: the overview stream is not offered binary). */
  overview(data: unknown): WireFrame;
}

const PING = Buffer.from(': ping\n\n');

/** The come-back frame of SSE (exported for the spec that checks it against the OpenAPI document). */
export const comeBackFrame = (retryMs: number): Buffer => Buffer.from(`retry: ${retryMs}\nevent: ${RESTART_EVENT}\ndata: ${JSON.stringify({ retryMs })}\n\n`, 'utf8');

/**
 * The last bytes of an SSE stream whose token a reload revoked: a comment (every client skips it) that says
 * why to whoever reads the raw stream; the client's reconnect then gets 401 `UNAUTHORIZED`.
 */
const REVOKED_FRAME = Buffer.from(': the operator token of this stream was revoked\n\n');

/** Server-Sent Events: what every stream spoke before the binary one, and what it speaks unless asked. */
export const SSE_FRAMING: EventFraming = {
  contentType: `${SSE_MEDIA_TYPE}; charset=utf-8`,
  event: frameOf,
  logEvent: logFrameOf,
  failed: failedFrame,
  truncated: truncatedFrame,
  ping: () => PING,
  comeBack: comeBackFrame,
  revoked: () => REVOKED_FRAME,
  overview: overviewFrame,
};
