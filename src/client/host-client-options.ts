/**
 * What a `HostClient` is built with: its options, and the connection (base urls, token, fetch, retry
 * policy, randomness, clock) made from them with the defaults filled in.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { HostConnection } from './host-connection';
import { HostUrls } from './host-urls';
import type { RetryPolicy } from './retry';
import { DEFAULT_RETRY_POLICY } from './retry';

/** Options of a {@link HostClient}. */
export interface HostClientOptions {
  /**
   * The host's base url (`http://127.0.0.1:8080`), or several: the replicas of one exec-rx cluster
   * (issue 33), in the order to try them. With several, a request or an event stream's (re)connection
   * that gets no answer (refused, reset, timed out) or a 502, 503 or 504 moves the client to the next url
   * (round robin; the next url of a round is tried at once, and a full round that failed backs off as one
   * url does); the client stays on the one that answered last. An event stream that drops resumes from
   * its last seq on the next url. Every url must be a replica of the same cluster: they answer with the
   * same `exec-rx-host-instance` (the cluster's id; each names itself in `exec-rx-host-replica`), so that
   * moving between them is not taken for a host restart (only an instance id that changed makes a
   * process the client saw and the host no longer knows `PROCESS_GONE`). Urls of independent hosts do
   * not belong in one client. Throws RangeError for an empty list.
   */
  readonly url: string | readonly string[];
  /**
   * An operator token, or a function giving the current one (at once or as a promise). A function is
   * called before each request and before each (re)connection of an event stream, so a refreshed token
   * is used from the next attempt on. A function that throws (or rejects) fails the call, or ends the
   * stream, with that error as it is, and nothing is retried. The token is never logged.
   */
  readonly token: string | (() => string | Promise<string>);
  /** The fetch to use. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Backoff, jitter and how long the host may stay unreachable. @default DEFAULT_RETRY_POLICY (200 ms doubling to 5 s, jitter 0.5, 90 s) */
  readonly retry?: Partial<RetryPolicy>;
  /** Randomness of the jitter (specs pass a fixed one). @default Math.random */
  readonly random?: () => number;
  /**
   * The clock and timers: the waits between attempts (backoff, `Retry-After`), how long the host has been
   * unreachable, and the event streams' idle cut. Specs pass a virtual-time scheduler. @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Ask for a process's events (`events$`, `eventStream`, `events`) as the binary event stream
   * (`application/vnd.exec-rx.events`, docs/binary-events.md): output as bytes, no base64
   * and no JSON per chunk, the same events, resumption and errors. A host that does not offer it answers
   * SSE, which is read as before. For programs that move a lot of output (the CLI turns it on); a browser
   * may too, but the dashboard keeps SSE. The overview stream (`watch$`) is SSE either way. @default false
   */
  readonly binaryEvents?: boolean;
}

/** The connection a client built with `options` uses: the base urls without trailing slashes, the token as a function, the defaults. */
export function hostConnection(options: HostClientOptions): HostConnection {
  const token = options.token;
  return {
    urls: new HostUrls(options.url),
    token: typeof token === 'string' ? () => token : token,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    random: options.random ?? Math.random,
    scheduler: options.scheduler ?? asyncScheduler,
    binaryEvents: options.binaryEvents ?? false,
  };
}
