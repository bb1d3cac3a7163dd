/**
 * One HTTP request's calls to an environment's filesystem: each `fs/*` request waits for its turn in the
 * environment's fair queue (`./fair-queue`, its own lane) and what it rejects with becomes the file
 * routes' problem (`./file-errors`). The per-request face of {@link EnvironmentFiles}.
 */
import type { Environment } from '../../../environment/environment';
import type { Subscription } from 'rxjs';
import { Observable } from 'rxjs';
import { finalize } from 'rxjs/operators';
import type { RemoteFileHandle } from '../../../fs/remote-file-handle';
import type { RemoteFileSystem } from '../../../fs/remote-file-system';
import type { FsDirectoryEntry, FsGetMetadataResponse, FsWalkResponse } from '../../../wire/fs';
import type { WalkOptions } from '../../../fs/fs-options';
import type { FairQueue, HandleCap, QueueLane } from './fair-queue';
import { onPath } from './file-errors';
import type { FilePath } from './file-path';
import { uriOf } from './file-path';

/** `fs/readBlock`s a download keeps ahead of its client (each in its lane of the fair queue). */
export const READS_IN_FLIGHT = 4;

/** What the file routes hold per environment: its queue of file requests and its cap on open handles. */
export interface EnvironmentFiles {
  readonly queue: FairQueue;
  readonly handles: HandleCap;
}

/** One request's calls to one environment's filesystem (see the module's doc). */
export class FileCalls {
  private readonly lane: QueueLane;
  private readonly fs: RemoteFileSystem;

  constructor(
    readonly environmentId: string,
    readonly environment: Environment,
    readonly shared: EnvironmentFiles,
    /** Aborted when the client went away: what still waits for its turn is dropped. @default none */
    readonly signal?: AbortSignal,
  ) {
    this.lane = shared.queue.lane(signal);
    this.fs = environment.getFilesystem();
  }

  /** The same environment's calls without the client's signal: what cleans up after a client that went away. */
  unbound(): FileCalls {
    return new FileCalls(this.environmentId, this.environment, this.shared);
  }

  /** Runs `call` in this request's lane, its failure as the problem of `path`. */
  queued<T>(path: FilePath, call: () => Promise<T>): Promise<T> {
    return onPath(path.native, () => this.lane.run(call));
  }

  /** `fs/getMetadata` (follows a symlink, reports `isSymlink`). */
  metadata(path: FilePath): Promise<FsGetMetadataResponse> {
    return this.queued(path, () => this.fs.getMetadata(uriOf(path)));
  }

  /** `fs/getMetadata`, `undefined` for a missing path (404); other failures reject. */
  async metadataIfAny(path: FilePath): Promise<FsGetMetadataResponse | undefined> {
    try {
      return await this.metadata(path);
    } catch (error: unknown) {
      if (error instanceof Error && 'code' in error && error.code === 'FILE_NOT_FOUND') return undefined;
      throw error;
    }
  }

  /** `fs/readDirectory` (unsorted). */
  readDirectory(path: FilePath): Promise<FsDirectoryEntry[]> {
    return this.queued(path, () => this.fs.readDirectory(uriOf(path)));
  }

  /** `fs/walk` with `options`' limits. */
  walk(path: FilePath, options: WalkOptions): Promise<FsWalkResponse> {
    return this.queued(path, () => this.fs.walk(uriOf(path), options));
  }

  /** `fs/canonicalize`: the canonical `file://` URI. */
  canonicalize(path: FilePath): Promise<string> {
    return this.queued(path, () => this.fs.canonicalize(uriOf(path)));
  }

  /** `fs/createDirectory` with `recursive` always sent (omitted, the executor takes it as `true`). */
  createDirectory(path: FilePath, recursive: boolean): Promise<void> {
    return this.queued(path, () => this.fs.createDirectory(uriOf(path), { recursive }));
  }

  /** `fs/remove` with `recursive` and `force` always sent (omitted, the executor takes both as `true`). */
  remove(path: FilePath, recursive: boolean, force = false): Promise<void> {
    return this.queued(path, () => this.fs.remove(uriOf(path), { recursive, force }));
  }

  /** `fs/copy` (a Windows executor's copy; POSIX executors copy with a helper process). */
  copy(source: FilePath, destination: FilePath, recursive: boolean): Promise<void> {
    return this.queued(source, () => this.fs.copy(uriOf(source), uriOf(destination), { recursive }));
  }

  /** `fs/open`: the caller closes the handle ({@link close}). */
  open(path: FilePath, mode: 'read' | 'replace'): Promise<RemoteFileHandle> {
    return this.queued(path, () => this.fs.open(uriOf(path), mode));
  }

  /**
   * The bytes `start` to `end` (exclusive) of the file at `path`, pulled: the library's pipelined
   * `RemoteFileSystem.readIterable` (its own read handle, opened at the first pull, re-opened across a
   * reconnect; {@link READS_IN_FLIGHT} reads ahead of the consumer), with every `fs/readBlock` (the first
   * carrying the `fs/open`) waiting for its turn in this request's lane ({@link scheduled}). Yields the
   * blocks in order and ends at `end` or at the end of the file (it may end short: the caller checks);
   * rejects with the library's errors (map them with `fileProblemOf`). `return()` closes the handle.
   */
  readRange(path: FilePath, start: number, end: number): AsyncIterableIterator<Buffer> {
    return this.fs.readIterable(uriOf(path), { start, end, inFlight: READS_IN_FLIGHT, schedule: (request) => this.scheduled(request) });
  }

  /**
   * `request` run in this request's lane: subscribed once the lane's turn came, its outcome passed on; an
   * unsubscribe while it waits drops it from the lane, one while it runs unsubscribes it. The lane's signal
   * (the client went away) errors a waiting one with its reason.
   */
  scheduled<T>(request: Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      let running: Subscription | undefined;
      let finished: (() => void) | undefined;
      const unsubscribed = new AbortController();
      const turn = this.lane.run(
        () =>
          new Promise<void>((resolve) => {
            finished = resolve;
            running = request.pipe(finalize(resolve)).subscribe({
              next: (value) => subscriber.next(value),
              error: (error: unknown) => subscriber.error(error),
              complete: () => subscriber.complete(),
            });
          }),
        { signal: unsubscribed.signal },
      );
      turn.catch((error: unknown) => subscriber.error(error));
      return () => {
        unsubscribed.abort();
        running?.unsubscribe();
        finished?.();
      };
    });
  }

  /** One `fs/writeBlock` (at most 1 MiB). */
  writeBlock(path: FilePath, handle: RemoteFileHandle, offset: number, data: Uint8Array): Promise<void> {
    return this.queued(path, () => handle.writeBlock(offset, data));
  }

  /** `fs/close`, never rejecting (best effort: the executor drops a connection's handles with it). Not aborted by the signal. */
  async close(handle: RemoteFileHandle): Promise<void> {
    await this.lane.run(() => handle.close(), { abortable: false }).catch(() => undefined);
  }
}
