/**
 * One process run, the same work on both sides: start it, consume every notification until `closed`,
 * counting the decoded output bytes. Times are taken with `performance.now()` from just before the
 * `process/start` request to the `exited` and `closed` events as the consumer sees them.
 */
import { performance } from 'node:perf_hooks';
import { EnvironmentManager } from '../../src';
import type { Environment, ExecProcess } from '../../src';
import type { RawClient } from './raw-client';

/** What one process run measured. */
export interface ProcessRun {
  /** start → closed, ms. */
  readonly ms: number;
  /** start → exited, ms. */
  readonly exitMs: number;
  /** Output payload bytes (decoded). */
  readonly bytes: number;
  /** `process/output` notifications. */
  readonly frames: number;
}

export const BENCH_ENV = 'bench';
let counter = 0;
/** A processId unique within this bench process (the executor keeps finished ids for 80 s). */
export const nextProcessId = (prefix: string): string => `${prefix}-${process.pid}-${(counter += 1)}`;

/** exec-rx with the options every suite uses: no keepalive timers, ack-pong as given (default on). */
export function rxConnect(url: string, ackPong = true, environmentId = BENCH_ENV): Promise<EnvironmentManager> {
  return EnvironmentManager.connect(environmentId, url, { clientName: 'bench-rx', keepalive: false, ackPong });
}

export function rxEnvironment(manager: EnvironmentManager): Environment {
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('manager has no default environment');
  return environment;
}

/** The raw side (ws or stdio): registers handlers, sends process/start, resolves at `process/closed`. */
export function rawRun(client: Pick<RawClient, 'start'>, argv: readonly string[], keep?: (event: unknown) => void): Promise<ProcessRun> {
  return new Promise<ProcessRun>((resolve, reject) => {
    let bytes = 0;
    let frames = 0;
    let exitAt = Number.NaN;
    const t0 = performance.now();
    client
      .start(nextProcessId('raw'), argv, {
        output: (chunk, seq, stream) => {
          bytes += chunk.length;
          frames += 1;
          keep?.({ type: 'output', seq, stream, chunk });
        },
        exited: (exitCode, seq) => {
          exitAt = performance.now();
          keep?.({ type: 'exited', seq, exitCode });
        },
        closed: (seq) => {
          const end = performance.now();
          keep?.({ type: 'closed', seq });
          resolve({ ms: end - t0, exitMs: exitAt - t0, bytes, frames });
        },
      })
      .catch(reject);
  });
}

/**
 * The exec-rx side: `start()`, then `events$` until it completes. A `truncated` marker (more events
 * arrived before the subscription than the history keeps) is counted through its dropped totals, so
 * the byte and frame counts stay exact. `release()` afterwards unless the caller keeps the process.
 */
export async function rxRun(
  environment: Environment,
  argv: readonly string[],
  options: { readonly keep?: (process: ExecProcess) => void; readonly onOutput?: () => void } = {},
): Promise<ProcessRun> {
  const t0 = performance.now();
  const { process: proc } = await environment.getExecBackend().start({ processId: nextProcessId('rx'), argv: [...argv], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, tty: false });
  let bytes = 0;
  let frames = 0;
  let exitAt = Number.NaN;
  const onOutput = options.onOutput;
  await new Promise<void>((resolve, reject) => {
    proc.events$.subscribe({
      next: (event) => {
        switch (event.type) {
          case 'output':
            bytes += event.chunk.byteLength;
            frames += 1;
            onOutput?.();
            return;
          case 'truncated':
            bytes += event.droppedBytes;
            frames += event.droppedEvents;
            return;
          case 'exited':
            exitAt = performance.now();
            return;
          case 'failed':
            reject(event.error);
            return;
          case 'closed':
            return;
        }
      },
      complete: () => resolve(),
    });
  });
  const ms = performance.now() - t0;
  if (options.keep === undefined) proc.release();
  else options.keep(proc);
  return { ms, exitMs: exitAt - t0, bytes, frames };
}

/** Runs `tasks` with at most `limit` in flight; resolves with their results in order. */
export async function pool<T>(count: number, limit: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next;
      next += 1;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, () => worker()));
  return results;
}

/** Throws unless `actual` equals `expected`: a run that lost output measures nothing. */
export function expectEqual(what: string, actual: number, expected: number): void {
  if (actual !== expected) throw new Error(`${what}: got ${actual}, expected ${expected}`);
}

/** `items[index]`, which must exist. */
export function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`no item at ${index} of ${items.length}`);
  return item;
}
