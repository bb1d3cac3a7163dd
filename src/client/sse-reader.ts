/**
 * Reads a `text/event-stream` answer with `fetch` (not EventSource, so the token goes in a header): the
 * body's bytes decoded as UTF-8 across chunk boundaries and fed to a kept SSE parser
 * (`eventsource-parser`). Only whole events are delivered: one cut short by a dropped connection is
 * dropped with it, and resuming by its id brings it again.
 *
 * The body is read one chunk at a time, and only when the consumer has room ({@link SseReadHooks.room}):
 * while it is behind, nothing more is read, so TCP holds the host back instead of this side's memory.
 */
import { createParser } from 'eventsource-parser';

/** One event as the stream carried it. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/** What {@link readSse} asks of its caller besides each event. */
export interface SseReadHooks {
  /** Whether reading is over; checked after each event (nothing after it is delivered). @default never */
  readonly stop?: () => boolean;
  /** Bytes came (the connection is alive). */
  readonly onBytes?: () => void;
  /**
   * Asked before each read of the body: `undefined` when the consumer has room for more events, else a
   * promise that resolves once it has (the body is not read meanwhile). @default always room
   */
  readonly room?: () => Promise<void> | undefined;
}

/**
 * Delivers each whole event of `response` to `onEvent` (which may throw to stop reading: the promise
 * then rejects with that error). Resolves when the stream ends, or as soon as `hooks.stop()` holds after
 * an event; rejects when the connection fails or the request's signal aborts. Before each read of the
 * body it waits for `hooks.room()`. The body is cancelled in every case.
 */
export async function readSse(response: Response, onEvent: (message: SseMessage) => void, hooks: SseReadHooks = {}): Promise<void> {
  const { stop = () => false } = hooks;
  const decoder = new TextDecoder();
  let failure: unknown;
  let stopped = false;
  const parser = createParser({
    onEvent: (event) => {
      if (failure !== undefined || stopped) return;
      try {
        onEvent({ id: event.id, event: event.event ?? 'message', data: event.data });
      } catch (error: unknown) {
        failure = error;
      }
      stopped = stop();
    },
  });
  await readBody(
    response,
    (bytes) => {
      parser.feed(decoder.decode(bytes, { stream: true }));
      if (failure !== undefined) throw failure;
      return stopped;
    },
    hooks,
  );
}

/**
 * Reads the body of `response` one chunk at a time, each only once `hooks.room()` allows, and hands each
 * to `feed` (which answers whether reading is over, or throws to stop it with its error). Resolves at the
 * body's end or once `feed` answers true; rejects when the connection fails or the request aborts. The
 * body is cancelled in every case. What both stream framings (SSE here, `./binary-reader`) read with.
 */
export async function readBody(response: Response, feed: (bytes: Uint8Array) => boolean, hooks: SseReadHooks = {}): Promise<void> {
  const body = response.body;
  if (body === null) return;
  const { onBytes = () => undefined, room = () => undefined } = hooks;
  const reader = body.getReader();
  try {
    for (;;) {
      const wait = room();
      if (wait !== undefined) await wait;
      const { done, value } = await reader.read();
      if (done) return;
      onBytes();
      if (feed(value)) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
