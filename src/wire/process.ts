import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import type { OutputStream as EventOutputStream } from './process-event';
import { Base64Bytes, decodeCanonical } from './base64';
import { decodeWith } from './decode';
import { ShellInfo } from './environment';
import { Integer, isNonNegativeInteger, NonNegativeInteger } from './integer';
import { withDefault } from './presence';
import { SandboxContext } from './sandbox';
import { struct } from './struct';

const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

/**
 * `process/start` `envPolicy`: a base environment built by policy (`inherit` `all`, `core` or `none`,
 * then `exclude`/`includeOnly` patterns, case-insensitive), with `env` overlaid on top.
 */
export const EnvPolicy = struct(
  'EnvPolicy',
  { inherit: t.keyof({ core: null, all: null, none: null }) },
  { ignoreDefaultExcludes: t.boolean, exclude: t.array(t.string), set: t.record(t.string, t.string), includeOnly: t.array(t.string) },
);
/** `process/start` `envPolicy`. */
export type EnvPolicy = t.TypeOf<typeof EnvPolicy>;

/** `process/start` `metadata`, telemetry only (`threadId` must be a UUID or the executor answers -32602). */
export const ExecMetadata = struct('ExecMetadata', {}, { threadId: t.string, toolCallId: t.string });
/** `process/start` `metadata`. */
export type ExecMetadata = t.TypeOf<typeof ExecMetadata>;

/** `process/start` `shellSnapshot`: restore cached login-shell state (gate on `capabilities.shellSnapshotV2`). */
export const ShellSnapshot = struct('ShellSnapshot', { scopeId: t.string, shell: ShellInfo });
/** `process/start` `shellSnapshot`. */
export type ShellSnapshot = t.TypeOf<typeof ShellSnapshot>;

/** `process/start` `managedNetwork` (from codex's source only). */
export const ManagedNetwork = struct('ManagedNetwork', { loopbackPorts: t.array(NonNegativeInteger), allowLocalBinding: t.boolean });
/** `process/start` `managedNetwork`. */
export type ManagedNetwork = t.TypeOf<typeof ManagedNetwork>;

/**
 * `process/start` params (docs/protocol.md#process-methods). `cwd` is a `file://` URI; `env` is the
 * child's exact environment unless `envPolicy` is set (`{}` gives an empty one; a tty spawn needs
 * `PATH`). `networkProxy` (gate on `capabilities.networkProxyLaunch`) is passed through loosely.
 */
export const ExecParams = struct(
  'ExecParams',
  { processId: t.string, argv: t.array(t.string), cwd: t.string, env: t.record(t.string, t.string), tty: t.boolean },
  {
    pipeStdin: t.boolean,
    arg0: nullable(t.string),
    envPolicy: nullable(EnvPolicy),
    metadata: ExecMetadata,
    shellSnapshot: ShellSnapshot,
    sandbox: nullable(SandboxContext),
    enforceManagedNetwork: t.boolean,
    managedNetwork: ManagedNetwork,
    networkProxy: t.UnknownRecord,
  },
);
/** `process/start` params. */
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

/** One retained output chunk in a `process/read` result; `chunk` holds the raw bytes. */
export const ProcessOutputChunk = struct('ProcessOutputChunk', { seq: NonNegativeInteger, stream: OutputStream, chunk: Base64Bytes });
/** One retained output chunk. */
export type ProcessOutputChunk = t.TypeOf<typeof ProcessOutputChunk>;

/**
 * `process/read` result (docs/protocol.md#reading-with-a-cursor). Exit and close events are never chunks:
 * `exited`/`exitCode`/`closed` report them. `failure` (always `null` from the executor) defaults to
 * `null` and `sandboxDenied` to `false` when absent.
 */
export const ReadResponse = struct('ReadResponse', {
  chunks: t.array(ProcessOutputChunk),
  nextSeq: NonNegativeInteger,
  exited: t.boolean,
  exitCode: nullable(Integer),
  closed: t.boolean,
  failure: withDefault(nullable(t.string), () => null),
  sandboxDenied: withDefault(t.boolean, () => false),
});
/** `process/read` result. */
export type ReadResponse = t.TypeOf<typeof ReadResponse>;

/** `process/write` params: bytes for stdin; `writeId` (non-empty) makes a retry idempotent. */
export const WriteParams = struct('WriteParams', { processId: t.string, chunk: Base64Bytes, writeId: t.string });
/** `process/write` params. */
export type WriteParams = t.TypeOf<typeof WriteParams>;

/** `process/write` outcome: `accepted` (also for a repeated `writeId`), `unknownProcess`, `stdinClosed`, `starting`. */
export const WriteStatus = t.keyof({ accepted: null, unknownProcess: null, stdinClosed: null, starting: null }, 'WriteStatus');
/** `process/write` outcome. */
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
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const { processId, seq, stream, chunk } = params as { readonly [key: string]: unknown };
  if (typeof processId !== 'string' || !isNonNegativeInteger(seq) || typeof chunk !== 'string') return undefined;
  if (stream !== 'stdout' && stream !== 'stderr' && stream !== 'pty') return undefined;
  const bytes = decodeCanonical(chunk);
  return bytes === undefined ? undefined : { processId, seq, stream, chunk: bytes };
}

/**
 * Decodes `process/output` params on the hot path ({@link processOutputOf}); params it refuses go
 * through the codec, only to build the {@link DecodeError} naming the failing paths.
 */
export function decodeProcessOutput(params: unknown): E.Either<DecodeError, ProcessOutputNotification> {
  const decoded = processOutputOf(params);
  return decoded === undefined ? decodeWith(ProcessOutputNotification)(params) : E.right(decoded);
}
