/**
 * Process events as SSE frames. A sequenced event's frame carries `id: <seq>` (what `Last-Event-ID`
 * resumes from); `failed` and `truncated` carry none. Frames of the events every subscriber shares are
 * encoded once and kept beside the event (a WeakMap: they go when the history drops the event), so a
 * hundred subscribers cost one encoding, not a hundred.
 */
import type { ProcessEvent } from '../../exec/process-event';
import type { ExecClientErrorCode } from '../../errors';

const frames = new WeakMap<ProcessEvent, Buffer>();

const frame = (id: number | undefined, event: string, data: string): Buffer =>
  Buffer.from(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`, 'utf8');

/** The frame of `event`, encoded on first use and then shared. */
export function frameOf(event: ProcessEvent): Buffer {
  const cached = frames.get(event);
  if (cached !== undefined) return cached;
  const encoded = encode(event);
  frames.set(event, encoded);
  return encoded;
}

function encode(event: ProcessEvent): Buffer {
  switch (event.type) {
    case 'output': {
      const chunk = Buffer.from(event.chunk.buffer, event.chunk.byteOffset, event.chunk.byteLength).toString('base64');
      return frame(event.seq, 'output', `{"seq":${event.seq},"stream":"${event.stream}","chunk":"${chunk}"}`);
    }
    case 'exited':
      return frame(event.seq, 'exited', JSON.stringify({ seq: event.seq, exitCode: event.exitCode }));
    case 'closed':
      return frame(event.seq, 'closed', JSON.stringify({ seq: event.seq }));
    case 'failed':
      return failedFrame(event.error.code, event.error.message);
    case 'truncated':
      return frame(undefined, 'truncated', JSON.stringify({ nextSeq: event.nextSeq, droppedEvents: event.droppedEvents, droppedBytes: event.droppedBytes }));
  }
}

/** A `failed` frame: why the process (or its stream) ended without `closed`. */
export const failedFrame = (code: ExecClientErrorCode, message: string): Buffer => frame(undefined, 'failed', JSON.stringify({ code, message }));

/** A `truncated` frame the API makes itself (neither the host's history nor the executor's window reaches). */
export const truncatedFrame = (nextSeq: number, droppedEvents: number): Buffer => frame(undefined, 'truncated', JSON.stringify({ nextSeq, droppedEvents }));

/** The overview stream's frame. */
export const overviewFrame = (data: unknown): Buffer => frame(undefined, 'overview', JSON.stringify(data));
