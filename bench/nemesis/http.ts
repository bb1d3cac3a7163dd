/**
 * The nemesis's HTTP: one request per connection (`agent: false`, so nothing stays open between calls),
 * every request bounded in time, and a retry loop for what a client of a cluster retries: no connection,
 * a reset, a timeout, 502, 503 (ENVIRONMENT_ELSEWHERE: another replica holds the environment), 504; a
 * retry goes to the next of its targets (the balancer, then each replica), as `HostClient` given several
 * urls does.
 */
import { request } from 'node:http';
import { sleep } from './time';

/** A whole answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/** One request's options. */
export interface Call {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly json?: unknown;
  /** The whole call (connect, send, answer) bounded. @default 8000 */
  readonly timeoutMs?: number;
}

/** Sends one request and reads the whole answer; rejects on a connection error or past its timeout. */
export function call(url: string, options: Call = {}): Promise<Answer> {
  const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.byteLength);
  }
  const timeoutMs = options.timeoutMs ?? 8_000;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`${options.method ?? 'GET'} ${new URL(url).pathname} took over ${timeoutMs} ms`)), timeoutMs);
    req.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}

/** The answer's JSON body, or undefined. */
export function jsonOf(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    return undefined;
  }
}

/** The `code` field of an answer's problem body, if any. */
export const codeOf = (answer: Answer): string | undefined => {
  const body = jsonOf(answer);
  return typeof body === 'object' && body !== null && 'code' in body && typeof body.code === 'string' ? body.code : undefined;
};

/** An answer in a few words: its status and code, and the problem's detail for a server error other than ENVIRONMENT_ELSEWHERE. */
function said(answer: Answer): string {
  const code = codeOf(answer);
  if (code === undefined) return String(answer.status);
  const body = jsonOf(answer);
  const detail = typeof body === 'object' && body !== null && 'detail' in body && typeof body.detail === 'string' ? body.detail : '';
  return answer.status >= 500 && code !== 'ENVIRONMENT_ELSEWHERE' && detail !== '' ? `${answer.status} ${code} (${detail.slice(0, 120)})` : `${answer.status} ${code}`;
}

/** Whether a client of the cluster tries again after this answer. */
export const retryable = (status: number): boolean => status === 502 || status === 503 || status === 504;

/** What a retried call did, beside its answer. */
export interface Retried {
  /** The last answer (undefined when every attempt failed to get one). */
  readonly answer: Answer | undefined;
  /** Attempts made. */
  readonly attempts: number;
  /** The last attempt's error, when it got no answer. */
  readonly error: string | undefined;
  /** Every attempt's place and status or error, in order (`balancer 503 ENVIRONMENT_ELSEWHERE`, `b#2 ECONNRESET` …). */
  readonly trail: readonly string[];
}

/** Where a call may go: the balancer first, then each replica's own url (as `HostClient` with several urls). */
export interface Target {
  readonly where: string;
  readonly base: string;
}

/** Options of {@link retrying}. */
export interface RetryOptions {
  /** The name of the replica an answer came from, by its `exec-rx-host-replica` header (for the trail). */
  readonly who?: (replicaId: string) => string | undefined;
  /** Gives up after this long (the last answer or error is what it returns). @default 60000 */
  readonly deadlineMs?: number;
  /** Stops early when it turns true (the run is ending). */
  readonly stop?: () => boolean;
}

/**
 * Calls `path` until an answer that is not retried, the deadline, or `stop()` (see the module's doc). The
 * first attempt goes to the first target; a retried answer or a failure moves to the next one (at once
 * within a round, with backoff, or `Retry-After` up to a second, after a whole round): the balancer
 * alone cannot send a retry elsewhere (it picks the replica with the fewest connections again), a client
 * of the cluster can.
 */
export async function retrying(targets: () => readonly Target[], path: string, options: Call & RetryOptions = {}): Promise<Retried> {
  const deadline = Date.now() + (options.deadlineMs ?? 60_000);
  const trail: string[] = [];
  let delay = 200;
  let last: Answer | undefined;
  let error: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const all = targets();
    const target = all[(attempt - 1) % all.length];
    if (target === undefined) throw new Error('no target to call');
    try {
      last = await call(`${target.base}${path}`, options);
      error = undefined;
      const replica = last.headers['exec-rx-host-replica'];
      const from = typeof replica === 'string' ? options.who?.(replica) : undefined;
      trail.push(`${target.where}${from === undefined || from === target.where ? '' : `→${from}`} ${said(last)}`);
      if (!retryable(last.status)) return { answer: last, attempts: attempt, error, trail };
    } catch (failure: unknown) {
      last = undefined;
      error = failure instanceof Error ? (('code' in failure && typeof failure.code === 'string' ? failure.code : undefined) ?? failure.message) : String(failure);
      trail.push(`${target.where} ${error}`);
    }
    const roundDone = attempt % all.length === 0;
    const after = Number(last?.headers['retry-after']);
    const wait = !roundDone ? 50 : Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 1_000) : delay;
    if (Date.now() + wait > deadline || options.stop?.() === true) return { answer: last, attempts: attempt, error, trail };
    await sleep(wait);
    if (roundDone) delay = Math.min(delay * 2, 2_000);
  }
}
