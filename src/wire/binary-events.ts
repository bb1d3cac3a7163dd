/**
 * The binary event stream of a process (`application/vnd.exec-rx.events`): the same events as its SSE
 * stream, for programs, with output as bytes (no base64, no JSON per chunk). The host answers it on the
 * events route only when a request's `Accept` names this media type (docs/binary-events.md).
 *
 * Every frame is an 8-byte header, then its payload (the layout of Docker's attach stream: a kind byte,
 * three more, a 32-bit big-endian length):
 *
 * | bytes | field |
 * |---|---|
 * | 0 | kind: 1 stdout, 2 stderr, 3 pty (output); 16 event; 17 ping; 18 notice |
 * | 1 | flags: bit 0 set when an output frame carries `time` (the other bits are 0) |
 * | 2–3 | 0 |
 * | 4–7 | payload length, unsigned big-endian, at most {@link MAX_FRAME_PAYLOAD_BYTES} |
 *
 * - output: the seq as an unsigned 64-bit big-endian integer (at most 2^53 − 1), then `time` (ms since
 *   the epoch, a 64-bit IEEE float) when flag bit 0 is set, then the chunk's bytes as they are;
 * - event: one byte n, the event's name (n ASCII bytes: `exited`, `closed`, `truncated`, `failed`,
 *   `restart`), then its data as UTF-8 JSON, exactly the SSE event's `data`;
 * - ping: no payload (the host's 15 s keep-alive, the SSE comment ping);
 * - notice: UTF-8 text for whoever reads the raw stream (a revoked token's last words); clients skip it.
 *
 * Pure layout and the checks both sides share; the host writes frames (`host/api/binary-frames.ts`), the
 * client reads them (`client/binary-reader.ts`). Browser-safe: no Buffer.
 */

/** The media type of the binary event stream (a request names it in `Accept`; the answer's `Content-Type`). */
export const BINARY_EVENTS_MEDIA_TYPE = 'application/vnd.exec-rx.events';

/** The media type of the SSE event stream. */
export const SSE_MEDIA_TYPE = 'text/event-stream';

/** Bytes of a frame's header. */
export const FRAME_HEADER_BYTES = 8;

/**
 * The largest payload a frame may carry: 1 MiB. An output chunk is at most 8 KiB (the executor's), an
 * event's JSON a few hundred bytes; a length past this can only be corruption, and ends the stream.
 */
export const MAX_FRAME_PAYLOAD_BYTES = 1024 * 1024;

/** The kind byte of each frame. */
export const FrameKind = {
  stdout: 1,
  stderr: 2,
  pty: 3,
  event: 16,
  ping: 17,
  notice: 18,
} as const;

/** A kind byte. */
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** Flag bit 0 of an output frame: it carries `time`. */
export const FLAG_TIME = 1;

/** Bytes of an output frame's payload before its chunk: the seq, and `time` when flagged. */
export const outputPrefixBytes = (timed: boolean): number => (timed ? 16 : 8);

/** The output kind of a stream name. */
export const outputKindOf = (stream: 'stdout' | 'stderr' | 'pty'): FrameKind => FrameKind[stream];

/** The stream an output kind byte names, if it is one. */
export function streamOfKind(kind: number): 'stdout' | 'stderr' | 'pty' | undefined {
  switch (kind) {
    case FrameKind.stdout:
      return 'stdout';
    case FrameKind.stderr:
      return 'stderr';
    case FrameKind.pty:
      return 'pty';
    default:
      return undefined;
  }
}

/** One media range of an `Accept` header: its type and its quality. */
function ranges(accept: string): { readonly type: string; readonly q: number }[] {
  return accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    return { type, q: Number.isFinite(quality) ? quality : 0 };
  });
}

/**
 * Whether a request with this `Accept` gets the binary stream: only when it names
 * {@link BINARY_EVENTS_MEDIA_TYPE} with a quality above 0, and at least the one it gives
 * `text/event-stream`. `*∕*`, `application/*`, no header: SSE, as before this stream existed.
 */
export function prefersBinaryEvents(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes(BINARY_EVENTS_MEDIA_TYPE)) return false;
  const all = ranges(accept);
  const binary = Math.max(0, ...all.filter((r) => r.type === BINARY_EVENTS_MEDIA_TYPE).map((r) => r.q));
  const sse = Math.max(0, ...all.filter((r) => r.type === SSE_MEDIA_TYPE).map((r) => r.q));
  return binary > 0 && binary >= sse;
}

/** Whether an answer's `Content-Type` is the binary event stream (else it is read as SSE). */
export function isBinaryEvents(contentType: string | null): boolean {
  return contentType !== null && contentType.split(';')[0]?.trim().toLowerCase() === BINARY_EVENTS_MEDIA_TYPE;
}
