/**
 * Reading Server-Sent Events in specs: frames parsed as they arrive, waits bounded in time.
 */
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** Bounds `promise` by `ms`; rejects naming `what` when it takes longer (the timer is always cleared). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** One SSE event as it arrived. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
  /** The frame's `retry:` field, when it has one (the come-back event's). */
  readonly retry?: string | undefined;
}

/** An open event stream (status 200 and `text/event-stream`). */
export interface EventStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every event so far, in order. */
  readonly events: readonly SseEvent[];
  /** Every byte received so far, as text. */
  readonly raw: () => string;
  /** Resolves with the first event (received or to come) that `predicate` accepts; rejects when the stream ends first or `ms` pass. */
  next(predicate: (event: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  /** Resolves with every event once the server ended the stream; rejects after `ms`. */
  ended(ms?: number): Promise<readonly SseEvent[]>;
  /** Closes the stream from the client side and waits for the socket to close. */
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 20_000;

/** Parses the text of complete frames; returns the events and the unparsed rest. */
export function parseFrames(text: string): { readonly events: SseEvent[]; readonly rest: string; readonly comments: number } {
  const events: SseEvent[] = [];
  let comments = 0;
  let rest = text;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const frame = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let id: string | undefined;
    let retry: string | undefined;
    let event = 'message';
    const data: string[] = [];
    let fields = 0;
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields += 1;
      if (name === 'id') id = value;
      else if (name === 'event') event = value;
      else if (name === 'data') data.push(value);
      else if (name === 'retry') retry = value;
    }
    if (fields === 0) comments += 1;
    else events.push({ id, event, data: data.join('\n'), ...(retry === undefined ? {} : { retry }) });
  }
  return { events, rest, comments };
}

/** The event stream of an accepted response (status 200). */
export function eventStream(req: ClientRequest, res: IncomingMessage): EventStream {
  const events: SseEvent[] = [];
  let raw = '';
  let pending = '';
  let done = false;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  res.setEncoding('utf8');
  res.on('data', (text: string) => {
    raw += text;
    const parsed = parseFrames(pending + text);
    pending = parsed.rest;
    events.push(...parsed.events);
    notify();
  });
  const finish = (): void => {
    done = true;
    notify();
  };
  res.once('end', finish);
  res.once('close', finish);
  res.on('error', () => undefined);
  req.on('error', () => undefined);
  const wait = <T>(check: () => T | undefined, what: string, ms: number): Promise<T> => {
    let listener = (): void => undefined;
    const found = new Promise<T>((resolve, reject) => {
      listener = (): void => {
        const value = check();
        if (value !== undefined) resolve(value);
        else if (done) reject(new Error(`the event stream ended before ${what}; events: ${JSON.stringify(events.map((e) => e.event))}`));
      };
      listeners.add(listener);
      listener();
    });
    return within(found, ms, what).finally(() => listeners.delete(listener));
  };
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    raw: () => raw,
    next: (predicate, ms = DEFAULT_WAIT_MS) => {
      let from = 0;
      return wait(
        () => {
          const found = events.slice(from).find(predicate);
          from = events.length;
          return found;
        },
        'the awaited event',
        ms,
      );
    },
    ended: (ms = DEFAULT_WAIT_MS) =>
      within(
        new Promise<readonly SseEvent[]>((resolve) => {
          if (done) return resolve(events);
          res.once('close', () => resolve(events));
        }),
        ms,
        'the end of the event stream',
      ),
    close: () =>
      new Promise<void>((resolve) => {
        const socket = req.socket;
        if (socket === null || socket.destroyed) return resolve();
        socket.once('close', () => resolve());
        req.destroy();
      }),
  };
}

