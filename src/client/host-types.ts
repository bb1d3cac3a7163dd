/**
 * What the client hands its users, as documented interfaces: the API's resources (checked against the
 * wire codecs of `wire/operator-api` when they arrive) and process events with their bytes decoded.
 */

/** An error inside a resource: the library's code and its message. */
export interface ApiErrorInfo {
  /** The library's error code (`RESUME_FAILED`, `PROCESS_GAP` …). */
  readonly code: string;
  /** What happened, in words (never a secret). */
  readonly message: string;
}

/** A terminal size in character cells. */
export interface TerminalSize {
  /** Rows, 1 to 10000. */
  readonly rows: number;
  /** Columns, 1 to 10000. */
  readonly cols: number;
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
  readonly tty?: boolean | TerminalSize;
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
  /** Why, from a host that keeps output on disk: past the quota, a damaged record, a failed write, a released or evicted log. */
  readonly reason?: 'quota' | 'corrupt' | 'writeFailed' | 'released' | 'evicted';
}

/** A process event as `HostClient.events$` emits it. */
export type HostProcessEvent = HostOutputEvent | HostExitedEvent | HostClosedEvent | HostTruncatedEvent;

/** Options of `HostClient.start`. */
export interface StartOptions {
  /** Aborting stops waiting (and retrying): the call rejects with `signal.reason`; the start may still have happened. */
  readonly signal?: AbortSignal;
  /** The Idempotency-Key; retries of this call reuse it. @default a fresh random UUID per call */
  readonly idempotencyKey?: string;
}
