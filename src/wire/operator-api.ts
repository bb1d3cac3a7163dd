/**
 * The operator API's wire shapes (`/api/v1`, served by `exec-rx host`, described by its OpenAPI
 * document): request bodies the host decodes, resources and problems it answers, and the data of its
 * Server-Sent Events. Pure data, shared by the host and by the clients that talk to it.
 */
import * as t from 'io-ts';
import { ErrorCode } from './error-code';
import { Integer, NonNegativeInteger } from './integer';
import { struct } from './struct';

/** Every operator route starts with this. */
export const API_PREFIX = '/api/v1';
/**
 * The response header naming the host instance (a UUID made at start): a restarted host has another one.
 * Replicas of one cluster (issue 33, one Redis) all answer with the cluster's id here, so that a client
 * moving between them does not take it for a restart; {@link HOST_REPLICA_HEADER} names each replica.
 */
export const HOST_INSTANCE_HEADER = 'exec-rx-host-instance';
/** The response header naming the replica that answered, among those of one cluster (for logs and messages only: the client decides nothing by it). */
export const HOST_REPLICA_HEADER = 'exec-rx-host-replica';
/**
 * The response header of the probes (`/healthz`, `/readyz`) carrying the digest of the operator tokens the
 * host accepts (`OperatorTokens.setDigest`): replicas answering the same one accept the same set.
 */
export const TOKENS_DIGEST_HEADER = 'exec-rx-tokens-digest';
/** The request header that makes a retried start return the same process. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

const NonEmptyString = t.refinement(t.string, (s) => s.length > 0 && s.length <= 4096, 'NonEmptyString');
/** A name `setenv` takes: not empty, no `=` and no NUL. */
const isEnvName = (name: string): boolean => name.length > 0 && !name.includes('=') && !name.includes('\u0000');
/** Variables whose names `setenv` takes. */
const Env = t.refinement(t.record(t.string, t.string), (env) => Object.keys(env).every(isEnvName), 'Env (names not empty, no = or NUL)');
const Dimension = t.refinement(NonNegativeInteger, (n) => n >= 1 && n <= 10_000, 'Dimension');

/** A terminal size in character cells. */
export const TtySize = struct('TtySize', { rows: Dimension, cols: Dimension });
/** A terminal size in character cells. */
export type TtySize = t.TypeOf<typeof TtySize>;

/**
 * `POST /api/v1/environments/{environmentId}/processes`. `cwd` defaults to the executor's home; `env` is
 * laid over the executor's core environment (`TERM=xterm-256color` added for a tty); `tty` may carry the
 * terminal's size; `pipeStdin` gives the process a stdin that can be written and ended.
 */
export const StartProcessRequest = struct(
  'StartProcessRequest',
  { argv: t.refinement(t.array(NonEmptyString), (argv) => argv.length >= 1 && argv.length <= 1024, 'Argv') },
  { cwd: NonEmptyString, env: Env, tty: t.union([t.boolean, TtySize]), pipeStdin: t.boolean },
);
/** The body of a start. */
export type StartProcessRequest = t.TypeOf<typeof StartProcessRequest>;

/**
 * `POST .../processes/{processId}/stdin`: base64 bytes and a client-chosen `writeId`. The host applies a
 * `writeId` once (it remembers the last 4096 per process): a retried POST gets the first answer.
 */
export const StdinWriteRequest = struct('StdinWriteRequest', {
  writeId: t.refinement(t.string, (s) => s.length >= 1 && s.length <= 128, 'WriteId'),
  data: t.string,
});
/** The body of a stdin write. */
export type StdinWriteRequest = t.TypeOf<typeof StdinWriteRequest>;

/** An error as the API reports it inside a resource or an event: the library's code and its message. */
export const ApiError = struct('ApiError', { code: t.string, message: t.string });
/** An error inside a resource or an event. */
export type ApiError = t.TypeOf<typeof ApiError>;

/**
 * One process as the API shows it. `exitCode` and `error` are `null` until known. Besides the live
 * states, a process the host's output log holds but no executor lists (one of before a host restart)
 * shows its last known state: `closed` (with its exit code), `failed`, or `unknown` (it was running when
 * the host went down, or its executor no longer lists it); `lost` is a process its executor did not take
 * back after a restart.
 */
export const ProcessResource = struct('ProcessResource', {
  id: t.string,
  environmentId: t.string,
  argv: t.array(t.string),
  tty: t.boolean,
  pipeStdin: t.boolean,
  state: t.keyof({ running: null, exited: null, closed: null, failed: null, unknown: null, lost: null }),
  exitCode: t.union([Integer, t.null]),
  error: t.union([ApiError, t.null]),
},
  {
    /** When it started (ISO-8601); null when the host does not know. Absent from hosts older than these fields. */
    startedAt: t.union([t.string, t.null]),
    /** When the host saw it exit (ISO-8601); null while it runs, or when the host does not know. */
    exitedAt: t.union([t.string, t.null]),
    /** The name of the operator token that started it (never the token); null when it was not started through the API, or the host does not know. Absent from older hosts. */
    startedBy: t.union([t.string, t.null]),
  },
);
/** One process as the API shows it. */
export type ProcessResource = t.TypeOf<typeof ProcessResource>;

/** `POST .../processes/{processId}/wait`'s answer: the exit code, and when the host saw the exit (ISO-8601; null when it does not know). */
export const WaitResult = struct('WaitResult', { exitCode: Integer, exitedAt: t.union([t.string, t.null]) });
/** The answer of a wait. */
export type WaitResult = t.TypeOf<typeof WaitResult>;

/** `POST .../processes/{processId}/terminate`'s answer: whether the process was running. */
export const TerminateResult = struct('TerminateResult', { running: t.boolean });
/** The answer of a terminate. */
export type TerminateResult = t.TypeOf<typeof TerminateResult>;

/**
 * One environment as the API shows it: its current generation, connection state and info. `offline`
 * (generation 0, no info) is an environment the host's output logs know but no executor joined since
 * the host started: its processes are the stored ones. With replicas, an environment another replica
 * owns has its owner's state, generation and error (no info), and is `offline` once the owner's lease ran out.
 */
export const EnvironmentResource = struct('EnvironmentResource', {
  id: t.string,
  generation: NonNegativeInteger,
  state: t.keyof({ starting: null, connecting: null, connected: null, disconnected: null, failed: null, closed: null, offline: null }),
  error: t.union([ApiError, t.null]),
  info: t.union([t.UnknownRecord, t.null]),
  processCount: NonNegativeInteger,
});
/** One environment as the API shows it. */
export type EnvironmentResource = t.TypeOf<typeof EnvironmentResource>;

/** `GET /api/v1/overview`'s `overview` event: every environment with its processes. */
export const Overview = struct('Overview', {
  hostInstance: t.string,
  environments: t.array(t.intersection([EnvironmentResource, struct('Processes', { processes: t.array(ProcessResource) })])),
});
/** The overview stream's snapshot. */
export type Overview = t.TypeOf<typeof Overview>;

/** RFC 9457 problem details, with the library's error `code` (one of the closed set) and the host instance. */
export const Problem = struct(
  'Problem',
  { type: t.string, title: t.string, status: Integer, code: ErrorCode, hostInstance: t.string },
  { detail: t.string },
);
/** RFC 9457 problem details. */
export type Problem = t.TypeOf<typeof Problem>;

/** The SSE event types of a process's event stream. `id:` carries the seq of the sequenced ones. */
export type ProcessSseEvent = 'output' | 'exited' | 'closed' | 'failed' | 'truncated' | typeof RESTART_EVENT;

/**
 * The last event of every event stream of a host that stops gracefully (its `retry:` field says the
 * same): the stream ends after it, and a client comes back after `retryMs` (resuming by seq). Not an error.
 */
export const RESTART_EVENT = 'restart';
/** `event: restart` data: how long to wait before reconnecting. */
export const RestartEventData = struct('RestartEventData', { retryMs: NonNegativeInteger });

/** A sequenced event read from the host's output log carries `time`: when the host received it (ms since the epoch). */
const Received = { time: NonNegativeInteger };
/** `event: output` data (`time` when read from the host's output log). */
export const OutputEventData = struct('OutputEventData', { seq: NonNegativeInteger, stream: t.keyof({ stdout: null, stderr: null, pty: null }), chunk: t.string }, Received);
/** `event: exited` data (`time` when read from the host's output log). */
export const ExitedEventData = struct('ExitedEventData', { seq: NonNegativeInteger, exitCode: Integer }, Received);
/** `event: closed` data (`time` when read from the host's output log). */
export const ClosedEventData = struct('ClosedEventData', { seq: NonNegativeInteger }, Received);
/** `event: failed` data: why the process failed, its `code` one of the closed set (the stream ends after it). */
export const FailedEventData = struct('FailedEventData', { code: ErrorCode, message: t.string });
/**
 * `event: truncated` data: history no longer reaches; the events that follow start at `nextSeq`. A
 * marker from the host's output log also says why (`reason`) and which seqs are missing (`fromSeq` to
 * `toSeq`, inclusive).
 */
export const TruncatedEventData = struct(
  'TruncatedEventData',
  { nextSeq: NonNegativeInteger, droppedEvents: NonNegativeInteger },
  {
    droppedBytes: NonNegativeInteger,
    reason: t.keyof({ quota: null, corrupt: null, writeFailed: null, released: null, evicted: null }),
    fromSeq: NonNegativeInteger,
    toSeq: NonNegativeInteger,
  },
);

/** Who the operator token of a request is: its name, role, and the environments it may touch (`null`: every one). Never the token. */
export const HostCaller = struct('HostCaller', {
  name: t.string,
  role: t.keyof({ view: null, operate: null }),
  environments: t.union([t.array(t.string), t.null]),
});
/** Who the operator token of a request is. */
export type HostCaller = t.TypeOf<typeof HostCaller>;

/** `GET /api/v1/host`'s answer: the host instance, counts of what it holds, and who the caller is. */
export const HostAnswer = struct('HostAnswer', {
  hostInstance: t.string,
  environments: NonNegativeInteger,
  eventStreams: NonNegativeInteger,
  waits: NonNegativeInteger,
  caller: HostCaller,
});
/** `GET /api/v1/host`'s answer. */
export type HostAnswer = t.TypeOf<typeof HostAnswer>;

/**
 * `POST …/processes/{processId}/log/tickets`'s answer: `url`, the log's path with a single-use download
 * ticket (relative to the host's origin; a GET of it needs no `Authorization`), and when the ticket
 * expires (ISO-8601).
 */
export const LogTicket = struct('LogTicket', { url: t.string, expiresAt: t.string });
/** A download ticket's answer. */
export type LogTicket = t.TypeOf<typeof LogTicket>;
