/** What a Redis log needs of its store, where it starts, how it ends; and the errors it tells apart. */
import type Redis from 'ioredis';
import type { SchedulerLike } from 'rxjs';
import type { OutputLogError } from '../../errors';
import type { ClosedEvent, ExitedEvent } from '../../wire/process-event';
import type { LogPressure } from '../log-store';
import type { ProcessKey } from '../process-meta';
import type { LogScripts } from './redis-log-scripts';

/** Why a log takes no more appends: `closed` appended, its write `failed`, `sealed` (released, failed, fenced, the store closed), `removed`. */
export type RedisLogEnd = 'closed' | 'failed' | 'sealed' | 'removed';

/** A log as its store is told of it (the log itself: the store finds its entry by it). */
export interface ContextLog {
  /** The log's process. */
  readonly key: ProcessKey;
}

/** What a log needs of its store. */
export interface RedisLogContext {
  /** The store's connection (commands, in order). */
  readonly redis: Redis;
  /** The scripts defined on it. */
  readonly scripts: LogScripts;
  /** The clock of receipt times. */
  readonly scheduler: SchedulerLike;
  /** The process's output bytes the stream keeps (0: unbounded). */
  readonly quotaBytes: number;
  /** The backlog a log may hold while Redis is unreachable. */
  readonly bufferBytes: number;
  /** The backlog at which the log is behind (its executor paused); it is no longer at half of it. */
  readonly pressureBytes: number;
  /** Whether Redis answers now. */
  reachable(): boolean;
  /** Resolves once Redis answers again, or the store stops. */
  whenReachable(): Promise<void>;
  /** Sends a script call, watching whether Redis answers it in time. */
  send<T>(call: () => Promise<T>): Promise<T>;
  /** A script call failed for want of Redis: waits before the resend. */
  afterError(error: unknown): Promise<void>;
  /** A script call was answered: Redis is reachable. */
  answered(): void;
  /** `log` failed (reported on `failures$`; its meta hash records what it could not write). */
  failed(log: ContextLog, error: OutputLogError): void;
  /** `log`, failed, counted more lost (the meta hash follows, at most once per `FAILURE_META_MS`). */
  lost(log: ContextLog): void;
  /** The script refused `log`'s writer: the owner's epoch is `currentEpoch`. */
  refused(log: ContextLog, currentEpoch: number): void;
  /** The backlog's pressure changed. */
  pressure(pressure: LogPressure): void;
  /** `log` took an exit or its close (the metadata follows). */
  lifecycle(log: ContextLog, event: ExitedEvent | ClosedEvent): void;
}

/** Where a log starts: empty, or (taken back) what its stream already holds. */
export interface RedisLogStart {
  /** The last seq the stream holds or covers. */
  readonly lastSeq: number;
  /** Output bytes it holds. */
  readonly storedBytes: number;
  /** Entries it holds. */
  readonly storedEvents: number;
  /** The last seq its quota dropped. */
  readonly trimmedTo: number;
}

/** Redis answered with an error (`-OOM ...`, `-READONLY ...`): the write was refused, not lost in transit. */
export const isReplyError = (error: unknown): error is Error => error instanceof Error && error.name === 'ReplyError';

/** The reply error's code: its first word (`OOM`, `READONLY`, `NOSCRIPT`). */
export const replyCode = (error: Error): string => /^[A-Z]+/.exec(error.message)?.[0] ?? 'UNKNOWN';

/** A promise and its resolver. */
export function deferred(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
