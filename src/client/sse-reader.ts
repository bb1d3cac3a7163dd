/**
 * Reads a `text/event-stream` answer with `fetch` (not EventSource, so the token goes in a header): the
 * body's bytes decoded as UTF-8 across chunk boundaries and fed to a kept SSE parser
 * (`eventsource-parser`). Only whole events are delivered: one cut short by a dropped connection is
 * dropped with it, and resuming by its id brings it again.
 */
import { createParser } from 'eventsource-parser';

/** One event as the stream carried it. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/**
 * Delivers each whole event of `response` to `onEvent` (which may throw to stop reading: the promise
 * then rejects with that error). Resolves when the stream ends, or as soon as `stop()` holds after an
 * event (nothing after it is delivered); rejects when the connection fails or `signal` aborts. The body
 * is cancelled in every case.
 */
export async function readSse(response: Response, onEvent: (message: SseMessage) => void, stop: () => boolean = () => false, onBytes: () => void = () => undefined): Promise<void> {
  const body = response.body;
  if (body === null) return;
  const reader = body.getReader();
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
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onBytes();
      parser.feed(decoder.decode(value, { stream: true }));
      if (failure !== undefined) throw failure;
      if (stopped) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
