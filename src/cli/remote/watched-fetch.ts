/**
 * The connection to a host as `exec-rx` sees it through `fetch`: HostClient retries and resumes by
 * itself, but says nothing about it, so the CLI hands it a fetch that watches every request and every
 * event stream and turns what it sees into connection states for the stderr reporter.
 */
import type { Observable } from 'rxjs';
import { BehaviorSubject } from 'rxjs';
import { distinctUntilChanged } from 'rxjs/operators';
import type { ConnectionState } from '../../environment/connection-state';
import { HostApiError } from '../../client/host-api-error';
import { messageOf } from '../../errors';

/** A fetch for HostClient and what it saw of the connection. */
export interface WatchedFetch {
  /** Delegates to the given fetch; never changes a request or what a response carries. */
  readonly fetch: typeof fetch;
  /**
   * `connecting` at first; `connected` once the host answered (an event stream opened, a call got an
   * answer); `disconnected` with the reason when a request could not reach it, a proxy answered 502/504,
   * or an open event stream was cut. Replays the current state; completes at {@link finish}. Never errors.
   */
  readonly states$: Observable<ConnectionState>;
  /** The stream ended on purpose (the process closed): an end of the body after this is no loss. Idempotent. */
  finish(): void;
}

/** The deepest message of an error's `cause` chain (undici's `fetch failed` hides `connect ECONNREFUSED …`). */
export function rootReason(error: unknown): string {
  let current: unknown = error;
  let reason = messageOf(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current.message !== '') reason = current.message;
    current = current.cause;
  }
  return reason;
}

const isEventStream = (init: RequestInit | undefined): boolean => {
  const headers = new Headers(init?.headers);
  return (headers.get('accept') ?? '').includes('text/event-stream');
};

/** Wraps `inner` (default: the global fetch). */
export function watchedFetch(inner: typeof fetch = (input, init) => globalThis.fetch(input, init)): WatchedFetch {
  const states = new BehaviorSubject<ConnectionState>({ state: 'connecting' });
  let finished = false;
  const set = (state: ConnectionState): void => {
    if (!finished) states.next(state);
  };
  const lost = (reason: string): void => set({ state: 'disconnected', error: new HostApiError('HOST_UNREACHABLE', reason, undefined, undefined) });

  const watchedFetchFn = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const aborted = (): boolean => init?.signal?.aborted === true;
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error: unknown) {
      if (!aborted()) lost(rootReason(error));
      throw error;
    }
    if (response.status === 502 || response.status === 504) {
      lost(`HTTP ${response.status} from a proxy in between`);
      return response;
    }
    set({ state: 'connected' });
    if (response.status !== 200 || response.body === null || !isEventStream(init)) return response;
    return watchBody(response, (error) => {
      if (!aborted()) lost(error === undefined ? 'the event stream ended early' : `the event stream broke: ${rootReason(error)}`);
    });
  };

  return {
    fetch: watchedFetchFn,
    states$: states.pipe(distinctUntilChanged((a, b) => a.state === b.state && (a.state !== 'disconnected' || b.state !== 'disconnected' || a.error.message === b.error.message))),
    finish: () => {
      if (finished) return;
      finished = true;
      states.complete();
    },
  };
}

/**
 * The same response with a body that reports its end (`onEnd()`) or failure (`onEnd(error)`). It reads
 * only when asked (high-water mark 0), so a reader that handles an event before asking for more learns
 * of the stream's last event before its end is reported. A cancel by the reader is not reported.
 */
function watchBody(response: Response, onEnd: (error?: unknown) => void): Response {
  const body = response.body;
  if (body === null) return response;
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        try {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          onEnd();
          controller.close();
        } catch (error: unknown) {
          onEnd(error);
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}
