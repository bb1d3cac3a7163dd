/**
 * `HostClient.run`: start a command, read its events with backpressure, wait for its exit, and collect
 * its output: each stream's bytes up to a bound (the first bytes kept, the rest counted as cut), decoded
 * as UTF-8 once at the end so no character is split where a chunk ended.
 */
import type { AbortOptions } from '../wire/shared-types';
import { whileNotAborted } from '../wire/while-not-aborted';
import type { HostProcessEvent, HostStartOptions, ProcessResource, RunOptions, RunResult, StartRequest, WaitResult } from './host-types';
import type { PulledEventsOptions } from './pulled-events';
import { abortReason } from './retry';

/** Default `RunOptions.maxOutputBytes`: 16 MiB per stream. */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

type StreamName = 'stdout' | 'stderr' | 'pty';

/** One stream's first bytes, at most `max`. */
class BoundedBytes {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  /** Bytes were dropped past the bound. */
  cut = false;

  constructor(private readonly max: number) {}

  add(chunk: Uint8Array): void {
    const room = this.max - this.size;
    if (chunk.length > room) this.cut = true;
    const kept = chunk.length > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
    if (kept.length === 0) return;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  bytes(): Uint8Array {
    const all = new Uint8Array(this.size);
    let at = 0;
    for (const chunk of this.chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return all;
  }

  /** `bytes` (this stream's) as UTF-8; a character the bound cut in two is left out (not a replacement character). */
  text(bytes: Uint8Array): string {
    return new TextDecoder().decode(bytes, { stream: this.cut });
  }
}

/** What `HostClient.run` collects of a process's events. */
export class RunCollector {
  private readonly streams: Record<StreamName, BoundedBytes>;
  private exitCode: number | undefined;
  /** The host no longer held some events (a `truncated` event). */
  private gap = false;

  /** Throws RangeError for a bound that is not a whole number ≥ 0. */
  constructor(maxOutputBytes: number = DEFAULT_MAX_OUTPUT_BYTES) {
    if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 0) throw new RangeError(`maxOutputBytes must be a whole number >= 0 (got ${maxOutputBytes})`);
    this.streams = { stdout: new BoundedBytes(maxOutputBytes), stderr: new BoundedBytes(maxOutputBytes), pty: new BoundedBytes(maxOutputBytes) };
  }

  /** Takes one event. */
  add(event: HostProcessEvent): void {
    if (event.type === 'output') this.streams[event.stream].add(event.chunk);
    else if (event.type === 'exited') this.exitCode = event.exitCode;
    else if (event.type === 'truncated') this.gap = true;
  }

  /** The exit code seen, if any. */
  get exited(): number | undefined {
    return this.exitCode;
  }

  /** The result, once `closed` came. */
  result(processId: string, exitCode: number, startedAt: string | null, exitedAt: string | null): RunResult {
    const { stdout, stderr, pty } = this.streams;
    const bytes = { stdout: stdout.bytes(), stderr: stderr.bytes(), pty: pty.bytes() };
    return {
      processId,
      exitCode,
      stdout: stdout.text(bytes.stdout),
      stderr: stderr.text(bytes.stderr),
      pty: pty.text(bytes.pty),
      bytes,
      truncated: this.gap || stdout.cut || stderr.cut || pty.cut,
      startedAt,
      exitedAt,
    };
  }
}

/** The calls a run makes: a `HostClient`'s. */
export interface RunCalls {
  /** `HostClient.start`. */
  start(environmentId: string, request: StartRequest, options?: HostStartOptions): Promise<ProcessResource>;
  /** `HostClient.events`. */
  events(environmentId: string, processId: string, options?: PulledEventsOptions): AsyncIterableIterator<HostProcessEvent>;
  /** `HostClient.wait`. */
  wait(environmentId: string, processId: string, options?: AbortOptions): Promise<WaitResult>;
  /** `HostClient.terminate`. */
  terminate(environmentId: string, processId: string, options?: AbortOptions): Promise<boolean>;
}

/** `HostClient.run` on `client`: starts the command, collects its events, and resolves once it closed (see `HostClient.run`). */
export async function runToEnd(client: RunCalls, environmentId: string, request: StartRequest, options: RunOptions): Promise<RunResult> {
  const collector = new RunCollector(options.maxOutputBytes);
  const { signal } = options;
  if (signal?.aborted === true) throw abortReason(signal);
  // The start itself is not cut short by the signal: its answer names the process that an abort with
  // `terminateOnAbort` terminates, even when the abort comes before the answer (the start may have
  // happened on the host already). The run stops waiting for it at once.
  const starting = client.start(environmentId, { ...request }, options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey });
  if (signal !== undefined && options.terminateOnAbort === true) {
    starting.then(
      (started) => {
        if (signal.aborted) void client.terminate(environmentId, started.id).catch(() => undefined);
      },
      () => undefined,
    );
  }
  const process = await whileNotAborted(signal, () => starting);
  try {
    for await (const event of client.events(environmentId, process.id, signal === undefined ? {} : { signal })) collector.add(event);
    // It closed: the host's wait answers at once, with when it exited.
    const exit = await client.wait(environmentId, process.id, signal === undefined ? {} : { signal });
    return collector.result(process.id, collector.exited ?? exit.exitCode, startedAtOf(process), exit.exitedAt);
  } catch (error: unknown) {
    // Read again: the signal may have aborted since the check above (the compiler narrows it to false).
    const aborted = (signal as AbortSignal | undefined)?.aborted === true;
    if (aborted && options.terminateOnAbort === true) await client.terminate(environmentId, process.id).catch(() => undefined);
    throw aborted && signal !== undefined ? abortReason(signal) : error;
  }
}

/** The process's `startedAt`, when the host gives one. */
const startedAtOf = (process: ProcessResource): string | null => process.startedAt ?? null;
