/**
 * What the client hands its users, as documented interfaces: the API's resources (checked against the
 * wire codecs of `wire/operator-api` when they arrive) and process events with their bytes decoded.
 */

import type { TtySize } from '../wire/shared-types';

/** An error inside a resource: the library's code and its message. */
export interface ApiErrorInfo {
  /** The library's error code (`RESUME_FAILED`, `PROCESS_GAP` …). */
  readonly code: string;
  /** What happened, in words (never a secret). */
  readonly message: string;
}


/** One process as the host shows it. */
export interface ProcessResource {
  /** Its id (a UUID the host made; also its id on the executor). */
  readonly id: string;
  /** The environment it runs in. */
  readonly environmentId: string;
  /** The command as started (a wrapped command's own argv). */
  readonly argv: readonly string[];
  /** Whether it runs on a pty. */
  readonly tty: boolean;
  /** Whether its stdin can be written and ended. */
  readonly pipeStdin: boolean;
  /**
   * `running`, `exited` (output may still follow), `closed`, or `failed`; for a process the host only
   * holds the log of (one of before a host restart), `unknown` (it was running when the host went down)
   * or `lost` (its executor did not take it back).
   */
  readonly state: 'running' | 'exited' | 'closed' | 'failed' | 'unknown' | 'lost';
  /** The exit code once it exited (128 + signal when signalled). */
  readonly exitCode: number | null;
  /** Why it failed, once `failed`. */
  readonly error: ApiErrorInfo | null;
  /** When it started (ISO-8601); null when the host does not know; absent from a host older than this field. */
  readonly startedAt?: string | null;
  /** When the host saw it exit (ISO-8601); null while it runs or when the host does not know; absent from a host older than this field. */
  readonly exitedAt?: string | null;
}

/** One environment (executor) as the host shows it: its current generation. */
export interface EnvironmentResource {
  /** The environment id the executor registered with. */
  readonly id: string;
  /** 1 for the first session under this id, +1 each time a failed one started afresh. */
  readonly generation: number;
  /**
   * `starting` until its first handshake finished, then its connection state; `offline` (generation 0)
   * when only the host's output logs know it: no executor joined under its id since the host started.
   */
  readonly state: 'starting' | 'connecting' | 'connected' | 'disconnected' | 'failed' | 'closed' | 'offline';
  /** Why it is disconnected or failed. */
  readonly error: ApiErrorInfo | null;
  /** What the executor says about itself (`environment/info`), once connected. */
  readonly info: { readonly [key: string]: unknown } | null;
  /** How many processes it lists. */
  readonly processCount: number;
}

/** An environment with its processes, as the overview stream shows it. */
export interface EnvironmentOverview extends EnvironmentResource {
  /** Its processes, in start order. */
  readonly processes: readonly ProcessResource[];
}

/** What a start takes. */
export interface StartRequest {
  /** The program and its arguments. */
  readonly argv: readonly string[];
  /** The working directory on the executor. @default the executor's home */
  readonly cwd?: string;
  /** Variables laid over the executor's core environment (PATH, HOME …). @default none */
  readonly env?: Readonly<Record<string, string>>;
  /** A pty (TERM=xterm-256color unless `env` sets it), optionally sized. @default false */
  readonly tty?: boolean | TtySize;
  /** A stdin that can be written and ended. @default false */
  readonly pipeStdin?: boolean;
}

/** A chunk of output. */
export interface HostOutputEvent {
  /** The kind of event. */
  readonly type: 'output';
  /** Its seq (one counter per process, shared by output, exited and closed). */
  readonly seq: number;
  /** Where it came from (`pty` for a tty process). */
  readonly stream: 'stdout' | 'stderr' | 'pty';
  /** The raw bytes. */
  readonly chunk: Uint8Array;
  /** When the host received it, ms since the epoch: given by a host that keeps output on disk, else absent. */
  readonly time?: number;
}

/** The process exited (output may still follow; only `closed` ends). */
export interface HostExitedEvent {
  /** The kind of event. */
  readonly type: 'exited';
  /** Its seq. */
  readonly seq: number;
  /** The exit status, or 128 + signal. */
  readonly exitCode: number;
  /** When the host received it, ms since the epoch: given by a host that keeps output on disk, else absent. */
  readonly time?: number;
}

/** The last event: every output byte came before it. */
export interface HostClosedEvent {
  /** The kind of event. */
  readonly type: 'closed';
  /** Its seq, the process's last. */
  readonly seq: number;
  /** When the host received it, ms since the epoch: given by a host that keeps output on disk, else absent. */
  readonly time?: number;
}

/** Neither the host's history nor the executor's window holds what was asked: what follows starts at `nextSeq`. */
export interface HostTruncatedEvent {
  /** The kind of event. */
  readonly type: 'truncated';
  /** The seq of the next event delivered. */
  readonly nextSeq: number;
  /** How many events before it are no longer held. */
  readonly droppedEvents: number;
  /**
   * The output bytes those events held, where the host counted them: exact for what its history's bounds
   * or its log's quota dropped and for a failed write; for `corrupt`, the damaged bytes less one record
   * header per event. Absent from a host older than this field and from a marker for what the executor's
   * own window evicted; 0 with `droppedEvents` above 0 when the host does not know (the executor does not
   * say how many bytes it evicted).
   */
  readonly droppedBytes?: number;
  /** Why, from a host that keeps output on disk: past the quota, a damaged record, a failed write, a released or evicted log. */
  readonly reason?: 'quota' | 'corrupt' | 'writeFailed' | 'released' | 'evicted';
}

/** A process event as `HostClient.events$` emits it. */
export type HostProcessEvent = HostOutputEvent | HostExitedEvent | HostClosedEvent | HostTruncatedEvent;

/** Options of `HostClient.start` (the library's `StartOptions` are another shape: docs/api-conventions.md). */
export interface HostStartOptions {
  /** Aborting stops waiting (and retrying): the call rejects with `signal.reason`; the start may still have happened. */
  readonly signal?: AbortSignal;
  /** The Idempotency-Key; retries of this call reuse it. @default a fresh random UUID per call */
  readonly idempotencyKey?: string;
}

/** What `HostClient.wait` resolves with: the process has exited. */
export interface WaitResult {
  /** The exit status, or 128 + signal. */
  readonly exitCode: number;
  /** When the host saw it exit (ISO-8601); null when the host does not know (it exited before anyone waited, and the host keeps no output log). */
  readonly exitedAt: string | null;
}

/** Options of `HostClient.run`. */
export interface RunOptions {
  /**
   * Aborting stops waiting: `run` rejects with `signal.reason` at once. The start is not cut short (it
   * may have happened on the host already): the process keeps running unless `terminateOnAbort` is set,
   * and then it is terminated, also when the abort came before the start's answer (once it comes).
   */
  readonly signal?: AbortSignal;
  /** On abort, also terminate the process (kill its group; best effort, not awaited past the host's answer). @default false */
  readonly terminateOnAbort?: boolean;
  /**
   * The most bytes kept of each stream (stdout, stderr, pty). Past it the first bytes are kept, the rest
   * are read and dropped, and `truncated` is true: memory stays bounded whatever the process writes. A
   * whole number ≥ 0, else a RangeError. @default 16 MiB (16 777 216)
   */
  readonly maxOutputBytes?: number;
  /** The start's Idempotency-Key (retries of the start reuse it, so a retried start never makes two processes). @default a fresh random UUID per call */
  readonly idempotencyKey?: string;
}

/** What `HostClient.run` resolves with, once the process has closed (exited, and every output byte arrived). */
export interface RunResult {
  /** The process's id (it stays listed on the host until released). */
  readonly processId: string;
  /** The exit status, or 128 + signal. */
  readonly exitCode: number;
  /** Its stdout as UTF-8, decoded once at the end (no character split where a chunk ended; one cut by the bound is left out). */
  readonly stdout: string;
  /** Its stderr as UTF-8, as `stdout`. */
  readonly stderr: string;
  /** A tty process's output (stdout and stderr together) as UTF-8, as `stdout`; '' without a tty. */
  readonly pty: string;
  /** The same output as raw bytes (within the bound), for output that is not text. */
  readonly bytes: {
    /** The command's stdout as it came. */
    readonly stdout: Uint8Array;
    /** The command's stderr as it came. */
    readonly stderr: Uint8Array;
    /** A tty command's terminal output as it came. */
    readonly pty: Uint8Array;
  };
  /** Some output is missing: a stream passed `maxOutputBytes`, or the host no longer held part of it (a `truncated` event). */
  readonly truncated: boolean;
  /** When the host started it (ISO-8601), when the host says; else null. */
  readonly startedAt: string | null;
  /** When the host saw it exit (ISO-8601), as {@link WaitResult.exitedAt}. */
  readonly exitedAt: string | null;
}

/** Who the operator token is, as the host says (`GET /api/v1/host`). Never the token. */
export interface HostCaller {
  /** The token's name (what the host's logs and limits know it by). */
  readonly name: string;
  /** `view` reads, follows and downloads; `operate` does everything. */
  readonly role: 'view' | 'operate';
  /** The environments it may touch; `null`: every one. */
  readonly environments: readonly string[] | null;
}

/** What `HostClient.host` answers. */
export interface HostInfo {
  /** The host instance (a UUID made at its start: a restarted host has another one). */
  readonly hostInstance: string;
  /** Who the token is. */
  readonly caller: HostCaller;
}

/** The process whose events `HostClient.watch$` carries besides the overview. */
export interface WatchSelection {
  /** The environment the process runs in. */
  readonly environmentId: string;
  /** The process whose events the stream carries besides the overview. */
  readonly processId: string;
  /** Start after this seq (what the subscriber already has). @default 0 */
  readonly afterSeq?: number;
}

/** The selected process failed, or is not there (`PROCESS_NOT_FOUND` …): nothing more of it follows; the overview goes on. */
export interface WatchProcessFailedEvent {
  /** The event's kind. */
  readonly type: 'processFailed';
  /** The library's (or the API's) error code. */
  readonly code: string;
  /** What happened, in words (never a secret). */
  readonly message: string;
}

/** A new overview snapshot: every environment with its processes. */
export interface WatchOverviewEvent {
  /** The event's kind. */
  readonly type: 'overview';
  /** Every environment the token may see, with its processes. */
  readonly environments: readonly EnvironmentOverview[];
}

/**
 * The watcher's own connection to the host: `open` when a connection opened, `reconnecting` (with why)
 * when one dropped or could not be made and the client tries again.
 */
export interface WatchConnectionEvent {
  /** The event's kind. */
  readonly type: 'connection';
  /** `open`: a connection opened (the events after it come on it); `reconnecting`: it dropped, another is being made. */
  readonly state: 'open' | 'reconnecting';
  /** Why it reconnects. */
  readonly reason?: string;
}

/** What `HostClient.watch$` emits: overview snapshots, the selected process's events, and the connection's changes. */
export type WatchEvent = WatchOverviewEvent | HostProcessEvent | WatchProcessFailedEvent | WatchConnectionEvent;

/** Options of `HostClient.logUrl`. */
export interface LogUrlOptions {
  /** Only this stream's bytes. @default every stream */
  readonly stream?: 'stdout' | 'stderr' | 'pty';
  /** Aborts the ticket's request: the call rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}
