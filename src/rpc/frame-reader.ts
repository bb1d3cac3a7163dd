import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import { NOT_JSON, tryParseJson } from '../wire/decode';
import type { Inbound, RequestId } from '../wire/jsonrpc';
import { classifyParsed, isRequestId, parseInbound } from '../wire/jsonrpc';
import type { OutputSink } from '../wire/output-scanner';
import { scanOutputFrame } from '../wire/output-scanner';

/** Where {@link readFrame} puts what it read. */
export interface FrameHandlers {
  /** A frame that is not JSON, or not a JSON-RPC message. */
  readonly unparsable: (error: DecodeError) => void;
  /** A `process/output` notification the scanner read (`scanOutputFrame`): no JSON.parse, no params object. */
  readonly output: OutputSink;
  /** A notification, read on the fast path (no Inbound built). `ascii`: see `decodeCanonical`. */
  readonly notification: (method: string, params: unknown, ascii: boolean) => void;
  /** A success response, read on the fast path (no Inbound built). */
  readonly response: (id: RequestId, result: unknown) => void;
  /** Any other message, or every message when `classifyAll`. */
  readonly message: (message: Inbound, ascii: boolean) => void;
}

/**
 * Reads one inbound frame. A `process/output` notification the scanner accepts goes to `output` without
 * being parsed; any other frame is parsed once, and hands a notification straight to `notification` and a
 * success response to `response` (the same tests as `inboundOf`, without building an Inbound);
 * everything else is classified with
 * `classifyParsed`. Invalid frames are parsed again only to build the DecodeError naming what failed.
 * `asciiFrame`: the port knows the text held ASCII only; for a binary frame it is worked out here.
 * `classifyAll`: every message goes to `message` (someone observes the connection's `messages$`).
 */
export function readFrame(frame: string | Uint8Array, asciiFrame: boolean, classifyAll: boolean, handlers: FrameHandlers): void {
  let text: string;
  let ascii = asciiFrame;
  if (typeof frame === 'string') text = frame;
  else {
    text = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
    ascii = text.length === frame.byteLength;
  }
  if (!classifyAll && scanOutputFrame(text, ascii, handlers.output)) return;
  const value = tryParseJson(text);
  if (value === NOT_JSON) {
    const failed = parseInbound(text);
    if (E.isLeft(failed)) handlers.unparsable(failed.left);
    return;
  }
  if (!classifyAll && typeof value === 'object' && value !== null) {
    const { id, method, result, error, params } = value as { readonly [key: string]: unknown };
    if (error === undefined) {
      if (typeof method === 'string' && id === undefined && result === undefined) return handlers.notification(method, params, ascii);
      if (result !== undefined && isRequestId(id)) return handlers.response(id, result);
    }
  }
  const parsed = classifyParsed(value);
  if (E.isLeft(parsed)) handlers.unparsable(parsed.left);
  else handlers.message(parsed.right, ascii);
}
