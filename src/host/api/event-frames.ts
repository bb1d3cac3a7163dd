/**
 * Process events as SSE frames. A sequenced event's frame carries `id: <seq>` (what `Last-Event-ID`
 * resumes from); `failed` and `truncated` carry none. The frames of the most recent events are kept (by
 * event object, up to {@link FRAME_CACHE_BYTES}), so the subscribers of a live stream share one encoding
 * of each event, while the frames of old history are not kept beside it (that would double what a
 * retained history costs): a late subscriber's replay encodes them again.
 *
 * Sharing needs little: a history hands a live event to all its subscribers in one synchronous loop, and
 * a replay makes its events anew for each subscriber (no other subscriber ever sends that object). So
 * the cache is small; what it keeps (the frames and, as keys, their events with their chunks) stays
 * after the streams ended, on an idle host too. The events an output log serves from its memory are
 * shared differently: each frame lives as long as its event object (see {@link logFrameOf}).
 */
import { Buffer } from 'node:buffer';
import type { LogEvent } from '../../store/log-events';
import type { ProcessEvent } from '../../exec/process-event';
import type { ExecClientErrorCode } from '../../errors';

/**
 * How many bytes of recent frames the host keeps for sharing (all processes together); the newest frame
 * is kept whatever its size, so the subscribers of one large event still share it.
 */
export const FRAME_CACHE_BYTES = 1024 * 1024;

/** Recent frames by live event, oldest first (a Map keeps insertion order). */
const recent = new Map<ProcessEvent, Buffer>();
let recentBytes = 0;

/** The frame of `event` from the recent ones, else `encode()`d and kept as recent. */
function shared(event: ProcessEvent, encode: () => Buffer): Buffer {
  const cached = recent.get(event);
  if (cached !== undefined) return cached;
  const encoded = encode();
  recent.set(event, encoded);
  recentBytes += encoded.byteLength;
  for (const [old, bytes] of recent) {
    if (recentBytes <= FRAME_CACHE_BYTES || old === event) break;
    recent.delete(old);
    recentBytes -= bytes.byteLength;
  }
  return encoded;
}

const frame = (id: number | undefined, event: string, data: string): Buffer =>
  Buffer.from(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`, 'utf8');

/** The frame of `event`: shared while it is among the recent ones, else encoded (and kept as recent). */
export function frameOf(event: ProcessEvent): Buffer {
  return shared(event, () => encode(event));
}

function encode(event: ProcessEvent): Buffer {
  if (event.type === 'output') return outputFrame(event.seq, event.stream, event.chunk);
  const [name, data] = eventJson(event);
  return frame(idOf(event), name, data);
}

/** The `id:` of a frame: the seq of a sequenced event; `failed` and `truncated` have none. */
const idOf = (event: ProcessEvent | LogEvent): number | undefined => (event.type === 'failed' || event.type === 'truncated' ? undefined : event.seq);

/** A non-output event's name and its data as JSON (the SSE `data:` line; the binary stream's event payload). */
export function eventJson(event: Exclude<ProcessEvent, { readonly type: 'output' }>): readonly [string, string] {
  switch (event.type) {
    case 'exited':
      return ['exited', JSON.stringify({ seq: event.seq, exitCode: event.exitCode })];
    case 'closed':
      return ['closed', JSON.stringify({ seq: event.seq })];
    case 'failed':
      return ['failed', JSON.stringify({ code: event.error.code, message: event.error.message })];
    case 'truncated':
      return ['truncated', JSON.stringify({ nextSeq: event.nextSeq, droppedEvents: event.droppedEvents, droppedBytes: event.droppedBytes })];
  }
}

/** {@link eventJson} of an event read from an output log: with `time` on sequenced events, and a marker's `reason`, `fromSeq`, `toSeq`. */
export function logEventJson(event: Exclude<LogEvent, { readonly type: 'output' }>): readonly [string, string] {
  switch (event.type) {
    case 'exited':
      return ['exited', JSON.stringify({ seq: event.seq, time: event.time, exitCode: event.exitCode })];
    case 'closed':
      return ['closed', JSON.stringify({ seq: event.seq, time: event.time })];
    case 'failed':
      return ['failed', JSON.stringify({ code: event.error.code, message: event.error.message })];
    case 'truncated': {
      const { nextSeq, droppedEvents, droppedBytes, reason, fromSeq, toSeq } = event;
      return ['truncated', JSON.stringify({ nextSeq, droppedEvents, droppedBytes, reason, fromSeq, toSeq })];
    }
  }
}

const OUTPUT_END = Buffer.from('"}\n\n');

/**
 * The frames of output events in the logs' memory, by event: a frame lives exactly as long as its event
 * object (in the log's memory until written, then in the batches of readers that read it from there), so
 * readers of one process share its encoding however far apart they are within that memory; the recent
 * frames' bound would have them encode again once they drift more than its size apart.
 */
const logFrames = new WeakMap<LogEvent, Buffer>();

function logShared(event: LogEvent & { readonly type: 'output' }): Buffer {
  let frame = logFrames.get(event);
  if (frame === undefined) {
    frame = outputFrame(event.seq, event.stream, event.chunk, event.time);
    logFrames.set(event, frame);
  }
  return frame;
}

/**
 * The frame of an event read from a process's output log: as {@link frameOf} gives it, plus `time` (when
 * the host received it, ms since the epoch) on sequenced events, and on a `truncated` marker why the
 * range is missing and which seqs it covers (`reason`, `fromSeq`, `toSeq`).
 *
 * With `share` (the event came from the log's memory, `LogRead.memoryFrom`: the log's own object, the
 * same for every reader), an output's frame is kept beside the event for as long as the event lives, so
 * the readers that keep up encode each event once between them. A read from a file makes its events anew
 * for one reader: their frames are not kept.
 */
export function logFrameOf(event: LogEvent, share = false): Buffer {
  if (event.type === 'output') return share ? logShared(event) : outputFrame(event.seq, event.stream, event.chunk, event.time);
  const [name, data] = logEventJson(event);
  return frame(idOf(event), name, data);
}

/** Bytes of a slab output frames are cut from; a frame over a quarter of it gets its own buffer. */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/**
 * `size` bytes for one frame, cut from a shared slab: an output frame is a few KiB, and one backing
 * store per frame (what `Buffer.allocUnsafe` makes above 4 KiB) cost the host an allocation and its
 * release per event, a tenth of its CPU with the garbage collector's part. A slab lives while any
 * frame cut from it is queued or cached; 64 KiB keeps what one stalled stream can pin small.
 */
function frameBuffer(size: number): Buffer {
  if (size > SLAB_BYTES >> 2) return Buffer.allocUnsafeSlow(size);
  if (slabUsed + size > slab.byteLength) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += (size + 7) & ~7;
  return out;
}

/**
 * An output's frame, written straight into its Buffer: the base64 string is the only one made. (Through
 * a template literal, the whole frame was a second string as large, flattened for `Buffer.from`: garbage
 * of twice the frame per event, which the young generation grew for.)
 */
function outputFrame(seq: number, stream: string, chunk: Uint8Array, time?: number): Buffer {
  const base64 = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64');
  const head = `id: ${seq}\nevent: output\ndata: {"seq":${seq},${time === undefined ? '' : `"time":${time},`}"stream":"${stream}","chunk":"`;
  const out = frameBuffer(head.length + base64.length + OUTPUT_END.byteLength);
  let at = out.write(head, 0, 'latin1');
  at += out.write(base64, at, 'latin1');
  OUTPUT_END.copy(out, at);
  return out;
}

/** A `failed` frame: why the process (or its stream) ended without `closed`. */
export const failedFrame = (code: ExecClientErrorCode, message: string): Buffer => frame(undefined, 'failed', failedJson(code, message));

/** A `failed` event's data. */
export const failedJson = (code: ExecClientErrorCode, message: string): string => JSON.stringify({ code, message });

/** A `truncated` frame the API makes itself (neither the host's history nor the executor's window reaches). */
export const truncatedFrame = (nextSeq: number, droppedEvents: number): Buffer => frame(undefined, 'truncated', truncatedJson(nextSeq, droppedEvents));

/** The data of a `truncated` event the API makes itself. */
export const truncatedJson = (nextSeq: number, droppedEvents: number): string => JSON.stringify({ nextSeq, droppedEvents });

/** The overview stream's frame. */
export const overviewFrame = (data: unknown): Buffer => frame(undefined, 'overview', JSON.stringify(data));
