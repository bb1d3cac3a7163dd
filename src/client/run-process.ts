/**
 * `HostClient.run`'s output: each stream's bytes collected up to a bound (the first bytes kept, the rest
 * counted as cut), decoded as UTF-8 once at the end so no character is split where a chunk ended.
 */
import type { HostProcessEvent, RunResult } from './host-types';

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
