/**
 * What the HostClient's integration specs share: a real host with a real direct executor
 * (`startApiHost`), HostClients on the global fetch (one straight to the host, others through the
 * cutting proxy), a paced process that prints the sha256 of what it wrote, and a transcript of what
 * `events$` emitted, checked against that hash and the library's own view (GroundTruth).
 *
 * Import it before anything else in a spec: it imports the executor tracker, which stops executors,
 * hosts and proxies in an `afterAll`.
 */
import { join } from 'node:path';
import type { Observable } from 'rxjs';
import type { HostProcessEvent, RetryPolicy } from '../../src/client';
import { HostClient } from '../../src/client';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import { EXECUTOR_CREDENTIALS, OPERATOR_TOKEN } from '../host/api/api-host';
import type { GroundTruth } from '../host/sse/sse-setup';
import { sha256 } from '../host/sse/sse-setup';
import { trackForCleanup } from '../support/executor';

export { environmentReady, EXECUTOR_CREDENTIALS, OPERATOR_TOKEN, startApiHost } from '../host/api/api-host';
export type { ApiHost } from '../host/api/api-host';
export { connected, GroundTruth, PATH_ENV, reached, sha256, within } from '../host/sse/sse-setup';

/** A HostClient of `url` with the specs' operator token, on the global fetch (optionally wrapped). */
export function hostClient(url: string, options: { readonly retry?: Partial<RetryPolicy>; readonly fetch?: typeof fetch } = {}): HostClient {
  return new HostClient({ url, token: OPERATOR_TOKEN, ...(options.retry === undefined ? {} : { retry: options.retry }), ...(options.fetch === undefined ? {} : { fetch: options.fetch }) });
}

/** A host on `port` with the specs' executor credentials and operator token (a restarted host: a new instance). */
export async function startHostOnPort(port: number): Promise<HostServer> {
  return trackForCleanup(
    await startHostServer({
      port,
      credentials: new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]),
      operator: { tokens: new OperatorTokens([OPERATOR_TOKEN]) },
    }),
  );
}

/** The port of `http://127.0.0.1:PORT`. */
export const portOf = (url: string): number => Number(new URL(url).port);

/**
 * A shell script writing `totalBytes` of random data in `blockBytes` blocks every `intervalS`, tee'd to
 * a file whose sha256 it prints on stderr at the end.
 */
export function pacedScript(work: string, totalBytes: number, blockBytes = 64 * 1024, intervalS = 0.0625): string {
  const sent = join(work, 'sent.bin');
  return `i=0; while [ $i -lt ${totalBytes / blockBytes} ]; do head -c ${blockBytes} /dev/urandom; sleep ${intervalS}; i=$((i+1)); done | tee '${sent}'; sha256sum '${sent}' >&2`;
}

/** What one `events$` subscription emitted, and how it ended. */
export class Transcript {
  readonly events: HostProcessEvent[] = [];
  /** Settles when the stream ends: `undefined` when it completed, else its error. */
  readonly done: Promise<unknown>;
  /** Performance time the stream ended at. */
  endedAt: number | undefined;
  stdoutBytes = 0;
  private waiters: { readonly test: () => boolean; readonly resolve: () => void }[] = [];

  constructor(events$: Observable<HostProcessEvent>, onEvent: (event: HostProcessEvent, transcript: Transcript) => void = () => undefined) {
    this.done = new Promise<unknown>((resolve) => {
      const end = (error: unknown): void => {
        this.endedAt = performance.now();
        resolve(error);
      };
      events$.subscribe({
        next: (event) => {
          this.events.push(event);
          if (event.type === 'output' && event.stream === 'stdout') this.stdoutBytes += event.chunk.byteLength;
          onEvent(event, this);
          this.waiters = this.waiters.filter((waiter) => (waiter.test() ? void waiter.resolve() : true));
        },
        error: end,
        complete: () => end(undefined),
      });
    });
  }

  /** The last seq emitted (0 before any). */
  get lastSeq(): number {
    for (let i = this.events.length - 1; i >= 0; i -= 1) {
      const event = this.events[i];
      if (event !== undefined && event.type !== 'truncated') return event.seq;
    }
    return 0;
  }

  /** Resolves once `test()` holds (checked at each event); rejects if the stream ends first. */
  when(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ test, resolve });
      void this.done.then((error) => reject(new Error(`the stream ended first (${error instanceof Error ? error.message : 'completed'})`)));
    });
  }

  /** One stream's bytes. */
  bytes(stream: 'stdout' | 'stderr'): Buffer {
    return Buffer.concat(this.events.flatMap((e) => (e.type === 'output' && e.stream === stream ? [e.chunk] : [])));
  }
}

/**
 * The promise, from what the client emitted: seqs 1..N contiguous with no duplicate and no marker,
 * exited 0 then closed last, N the library's last seq, and stdout exactly `totalBytes` whose sha256 is
 * the one the process printed (and the library's).
 */
export function expectWhole(transcript: Transcript, truth: GroundTruth, totalBytes: number, context: string): void {
  const seqs = transcript.events.map((e) => (e.type === 'truncated' ? -1 : e.seq));
  const firstBad = seqs.findIndex((seq, i) => seq !== i + 1);
  const there = firstBad < 0 ? [] : transcript.events.slice(Math.max(0, firstBad - 1), firstBad + 2).map((e) => (e.type === 'output' ? `output:${e.seq}` : JSON.stringify(e)));
  expect({ firstBad, context, there }).toEqual({ firstBad: -1, context, there: [] });
  expect({ last: seqs.length, context }).toEqual({ last: truth.lastSeq, context });
  expect(transcript.events.filter((e) => e.type !== 'output').map((e) => (e.type === 'exited' ? `exited:${e.exitCode}` : e.type))).toEqual(['exited:0', 'closed']);
  expect(transcript.events.at(-1)?.type).toBe('closed');
  expect(truth.problems).toEqual([]);
  const stdout = transcript.bytes('stdout');
  expect(stdout.byteLength).toBe(totalBytes);
  const [printed] = transcript.bytes('stderr').toString('utf8').trim().split(/\s+/);
  expect(printed).toMatch(/^[0-9a-f]{64}$/);
  expect({ sha256: sha256(stdout), context }).toEqual({ sha256: printed, context });
  expect(sha256(truth.stdout())).toBe(printed);
}

/** A fetch that counts attempts and network failures (the real one underneath). */
export function countingFetch(): { readonly fetch: typeof fetch; readonly attempts: () => number; readonly failures: () => number; failed(count: number): Promise<void> } {
  let attempts = 0;
  let failures = 0;
  let waiters: { readonly count: number; readonly resolve: () => void }[] = [];
  return {
    fetch: async (input, init) => {
      attempts += 1;
      try {
        return await globalThis.fetch(input, init);
      } catch (error: unknown) {
        failures += 1;
        waiters = waiters.filter((w) => (failures >= w.count ? void w.resolve() : true));
        throw error;
      }
    },
    attempts: () => attempts,
    failures: () => failures,
    failed: (count) => (failures >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))),
  };
}
