import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import type { OutputStream as EventOutputStream } from './process-event';
import { Base64Bytes } from './base64';
import { decodeWith } from './decode';
import { ShellInfo } from './environment';
import { Integer, NonNegativeInteger } from './integer';
import { outputEventOf } from './output-event';
import { withDefault } from './presence';
import { SandboxContext } from './sandbox';
import { struct } from './struct';

const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

// Codecs whose types the main entry exports: see the note in `./environment`.

/**
 * `process/start` `envPolicy`: a base environment built by policy (`inherit` `all`, `core` or `none`,
 * then `exclude`/`includeOnly` patterns, case-insensitive), with `env` overlaid on top.
 * @hidden
 */
export const EnvPolicy = struct(
  'EnvPolicy',
  {
    /** The base: `all` copies the executor's environment, `core` a minimal core set, `none` nothing. */
    inherit: t.keyof({ core: null, all: null, none: null }),
  },
  {
    /** Keep the variables the executor excludes by default (secrets-looking names). @default false */
    ignoreDefaultExcludes: t.boolean,
    /** Name patterns (case-insensitive) removed from the base. */
    exclude: t.array(t.string),
    /** Variables set on the base, before `env` is overlaid. */
    set: t.record(t.string, t.string),
    /** When given, only names matching one of these patterns (case-insensitive) are kept. */
    includeOnly: t.array(t.string),
  },
);
/**
 * `process/start` `envPolicy`: the child's base environment, built by policy; `env` is overlaid on top.
 * @interface
 */
export type EnvPolicy = t.TypeOf<typeof EnvPolicy>;

/** `process/start` `metadata`, telemetry only. @hidden */
export const ExecMetadata = struct(
  'ExecMetadata',
  {},
  {
    /** A UUID naming the conversation thread (anything else: the start is refused with -32602). */
    threadId: t.string,
    /** The id of the tool call that started the process. */
    toolCallId: t.string,
  },
);
/**
 * `process/start` `metadata`: telemetry only, it does not change how the process runs.
 * @interface
 */
export type ExecMetadata = t.TypeOf<typeof ExecMetadata>;

/** `process/start` `shellSnapshot`: restore cached login-shell state. @hidden */
export const ShellSnapshot = struct('ShellSnapshot', {
  /** The key of the snapshot the executor cached. */
  scopeId: t.string,
  /** The shell whose login state was cached. */
  shell: ShellInfo,
});
/**
 * `process/start` `shellSnapshot`: restore executor-cached login-shell state (only when the executor's
 * `capabilities.shellSnapshotV2` is set).
 * @interface
 */
export type ShellSnapshot = t.TypeOf<typeof ShellSnapshot>;

/** `process/start` `managedNetwork` (from codex's source only). @hidden */
export const ManagedNetwork = struct('ManagedNetwork', {
  /** Loopback ports the process may use. */
  loopbackPorts: t.array(NonNegativeInteger),
  /** Whether the process may bind local ports. */
  allowLocalBinding: t.boolean,
});
/**
 * `process/start` `managedNetwork`: the loopback ports a process with managed networking may use
 * (known from codex's source only).
 * @interface
 */
export type ManagedNetwork = t.TypeOf<typeof ManagedNetwork>;

/**
 * `process/start` params (docs/protocol.md#process-methods). `cwd` is a `file://` URI; `env` is the
 * child's exact environment unless `envPolicy` is set (`{}` gives an empty one; a tty spawn needs
 * `PATH`). `networkProxy` (gate on `capabilities.networkProxyLaunch`) is passed through loosely.
 * @hidden
 */
export const ExecParams = struct(
  'ExecParams',
  {
    /** Our key for the process, unique in the session (not an OS pid); reserved for 80 s after it closes. */
    processId: t.string,
    /** The program and its arguments; not empty. `argv[0]` is looked up on `PATH`. */
    argv: t.array(t.string),
    /** The working directory, a `file://` URI; a missing one fails like a missing program. */
    cwd: t.string,
    /** The child's exact environment (`{}`: an empty one), or what is overlaid on `envPolicy`'s base. */
    env: t.record(t.string, t.string),
    /** Run in a pseudo-terminal: output comes as stream `pty`, stdin is writable. */
    tty: t.boolean,
  },
  {
    /** Keep a non-tty process's stdin open for `write`. @default false */
    pipeStdin: t.boolean,
    /** The `argv[0]` the process sees, when it differs from the program run. */
    arg0: nullable(t.string),
    /** Build the base environment by policy; `env` is overlaid on it. @default none: `env` is exact */
    envPolicy: nullable(EnvPolicy),
    /** Telemetry about who started the process. */
    metadata: ExecMetadata,
    /** Restore a cached login-shell state first. */
    shellSnapshot: ShellSnapshot,
    /** The filesystem/network sandbox to run in. @default none: unsandboxed */
    sandbox: nullable(SandboxContext),
    /** Require managed networking, failing closed without details. @default false */
    enforceManagedNetwork: t.boolean,
    /** The managed-networking settings. */
    managedNetwork: ManagedNetwork,
    /** Launch an executor-local network proxy for the process (passed through as it is). */
    networkProxy: t.UnknownRecord,
  },
);
/**
 * `process/start` params: what to run, where, and with which environment (docs/protocol.md#process-methods).
 * @interface
 */
export type ExecParams = t.TypeOf<typeof ExecParams>;

/**
 * `process/start` result. `sandboxType` is `none`, `macosSeatbelt`, `linuxSeccomp`,
 * `windowsRestrictedToken` or `windowsMxc`, or missing from legacy executors. It is kept a plain string:
 * failing to decode the answer to a start that did spawn would leak the process.
 */
export const ExecResponse = struct('ExecResponse', { processId: t.string }, { sandboxType: t.string });
/** `process/start` result. */
export type ExecResponse = t.TypeOf<typeof ExecResponse>;

/** `process/read` params: output after `afterSeq` (default 0), at most about `maxBytes`, waiting up to `waitMs` (default 0). */
export const ReadParams = struct(
  'ReadParams',
  { processId: t.string },
  { afterSeq: nullable(NonNegativeInteger), maxBytes: nullable(NonNegativeInteger), waitMs: nullable(NonNegativeInteger) },
);
/** `process/read` params. */
export type ReadParams = t.TypeOf<typeof ReadParams>;

/** The stream a chunk came from: `stdout`, `stderr`, or `pty` for a tty process. */
export const OutputStream: t.Type<EventOutputStream, EventOutputStream, unknown> = t.keyof(
  { stdout: null, stderr: null, pty: null },
  'OutputStream',
);
/** The stream a chunk came from (the same type as `./process-event`'s). */
export type OutputStream = EventOutputStream;

/** One retained output chunk in a `process/read` result; `chunk` holds the raw bytes. @hidden */
export const ProcessOutputChunk = struct('ProcessOutputChunk', {
  /** The chunk's sequence number (shared with the process's exited and closed events). */
  seq: NonNegativeInteger,
  /** The stream it came from. */
  stream: OutputStream,
  /** The raw bytes (decoded from base64). */
  chunk: Base64Bytes,
});
/**
 * One retained output chunk of a `process/read` result.
 * @interface
 */
export type ProcessOutputChunk = t.TypeOf<typeof ProcessOutputChunk>;

/**
 * `process/read` result (docs/protocol.md#reading-with-a-cursor). Exit and close events are never chunks:
 * `exited`/`exitCode`/`closed` report them. `failure` (always `null` from the executor) defaults to
 * `null` and `sandboxDenied` to `false` when absent.
 * @hidden
 */
export const ReadResponse = struct('ReadResponse', {
  /** Retained output chunks after `afterSeq`, ascending; a chunk older than the executor's window is gone. */
  chunks: t.array(ProcessOutputChunk),
  /** The seq to read after next time (see docs/protocol.md#reading-with-a-cursor: with `maxBytes`, one past the last chunk). */
  nextSeq: NonNegativeInteger,
  /** Whether the process has exited (at read time). */
  exited: t.boolean,
  /** The exit code once exited (128 + signal for a signalled process), else `null`. */
  exitCode: nullable(Integer),
  /** Whether all output streams ended: nothing more will come. */
  closed: t.boolean,
  /** Why the read failed on our side (the environment failed); `null` from the executor. */
  failure: withDefault(nullable(t.string), () => null),
  /** Whether the executor classified a sandboxed failure as a sandbox denial. */
  sandboxDenied: withDefault(t.boolean, () => false),
});
/**
 * What `ExecProcess.read` resolves with: the retained output after a seq and the process's exit and
 * close flags (docs/protocol.md#reading-with-a-cursor).
 * @interface
 */
export type ReadResponse = t.TypeOf<typeof ReadResponse>;

/** `process/write` params: bytes for stdin; `writeId` (non-empty) makes a retry idempotent. */
export const WriteParams = struct('WriteParams', { processId: t.string, chunk: Base64Bytes, writeId: t.string });
/** `process/write` params. */
export type WriteParams = t.TypeOf<typeof WriteParams>;

/** `process/write` outcome (see the type). @hidden */
export const WriteStatus = t.keyof({ accepted: null, unknownProcess: null, stdinClosed: null, starting: null }, 'WriteStatus');
/**
 * What `ExecProcess.write` resolves with: `accepted` (queued to stdin; also for a repeated `writeId`),
 * `unknownProcess`, `stdinClosed` (a non-tty process started without `pipeStdin`), or `starting`.
 * @useDeclaredType
 */
export type WriteStatus = t.TypeOf<typeof WriteStatus>;

/** `process/write` result. */
export const WriteResponse = struct('WriteResponse', { status: WriteStatus });
/** `process/write` result. */
export type WriteResponse = t.TypeOf<typeof WriteResponse>;

/** `process/signal` params: `interrupt` is the only signal. */
export const SignalParams = struct('SignalParams', { processId: t.string, signal: t.keyof({ interrupt: null }) });
/** `process/signal` params. */
export type SignalParams = t.TypeOf<typeof SignalParams>;

/** `process/signal` result: `{}` (also for unknown or exited processes). */
export const SignalResponse = struct('SignalResponse', {});
/** `process/signal` result. */
export type SignalResponse = t.TypeOf<typeof SignalResponse>;

/** `process/terminate` params. */
export const TerminateParams = struct('TerminateParams', { processId: t.string });
/** `process/terminate` params. */
export type TerminateParams = t.TypeOf<typeof TerminateParams>;

/** `process/terminate` result: `running` is whether a live process was signalled (its process group is killed, exit 137). */
export const TerminateResponse = struct('TerminateResponse', { running: t.boolean });
/** `process/terminate` result. */
export type TerminateResponse = t.TypeOf<typeof TerminateResponse>;

/** `process/output` params: one chunk (≤ 8192 bytes) of a process's output, as raw bytes. */
export const ProcessOutputNotification = struct('ProcessOutputNotification', {
  processId: t.string,
  seq: NonNegativeInteger,
  stream: OutputStream,
  chunk: Base64Bytes,
});
/** `process/output` params. */
export type ProcessOutputNotification = t.TypeOf<typeof ProcessOutputNotification>;

/** `process/exited` params. `exitCode` is 128 + signal for a signalled process; `sandboxDenied` defaults to `false`. */
export const ProcessExitedNotification = struct('ProcessExitedNotification', {
  processId: t.string,
  seq: NonNegativeInteger,
  exitCode: Integer,
  sandboxDenied: withDefault(t.boolean, () => false),
});
/** `process/exited` params. */
export type ProcessExitedNotification = t.TypeOf<typeof ProcessExitedNotification>;

/** `process/closed` params: all output streams ended; the last event of a process, with its highest seq. */
export const ProcessClosedNotification = struct('ProcessClosedNotification', { processId: t.string, seq: NonNegativeInteger });
/** `process/closed` params. */
export type ProcessClosedNotification = t.TypeOf<typeof ProcessClosedNotification>;

/**
 * The hot-path guard for `process/output` params: what `ProcessOutputNotification.decode` yields, or
 * `undefined` where it fails, for a value produced by `JSON.parse` — with typeof checks only. A
 * property spec holds the two equal.
 */
export function processOutputOf(params: unknown): ProcessOutputNotification | undefined {
  const event = outputEventOf(params);
  return event === undefined ? undefined : { processId: (params as { readonly processId: string }).processId, seq: event.seq, stream: event.stream, chunk: event.chunk };
}

/**
 * Decodes `process/output` params with the hand-written {@link processOutputOf} first; params it refuses go
 * through the codec, only to build the {@link DecodeError} naming the failing paths.
 */
export function decodeProcessOutput(params: unknown): E.Either<DecodeError, ProcessOutputNotification> {
  const decoded = processOutputOf(params);
  return decoded === undefined ? decodeWith(ProcessOutputNotification)(params) : E.right(decoded);
}
