/**
 * The `components` of the OpenAPI document (`./openapi`): what its operations refer to by name. The
 * operator-token security scheme, one problem response per error status (what it means on this API), and
 * the schemas of the request and response bodies and of the events' data.
 */
import type { Json } from './openapi-builders';
import { obj, ref } from './openapi-builders';
import { PREVIEW_SCHEMAS } from './preview/openapi-preview-paths';

/** What each error status means on this API: the description of its `Problem<status>` response. */
const STATUS_TEXT: Record<number, string> = {
  400:
    'Malformed JSON, a body that does not match its schema (an unknown field included), an id that is not a safe id, ' +
    'or a query parameter (`after`, `follow`, `stream`, `tail`, `since`) out of its range or given twice.',
  401: 'No operator token, or a wrong one (no detail is given).',
  403:
    'The token may not do this: `FORBIDDEN_ROLE` (a `view` token: it may only GET, follow, wait and ask for a download ticket) ' +
    'or `FORBIDDEN_ENVIRONMENT` (a token limited to other environments). ' +
    'With `--cors-origin`, `FORBIDDEN_ORIGIN` answers a preflight (OPTIONS) from an origin not listed. ' +
    'The file routes need `operate` for every method, GET too; `FILE_FORBIDDEN` (the executor refused) and `OUTSIDE_FILES_ROOT` (`--files-root`). ' +
    '(http) `HTTP_DISABLED`: the host runs without `--allow-http`; `HTTP_TARGET_REFUSED`: the fetch target, or a redirect\'s, is not on the allow list.',
  404: 'No such environment, process or route; (files) `FILE_NOT_FOUND`.',
  405: 'The path exists but not with this method (`Allow` lists those it has).',
  409:
    'The request conflicts with the process: (`/wait`) it failed or was lost instead of exiting; ' +
    'it has no stdin, its input ended, or it has not closed; or (`/log`) the host keeps no output log (no data dir); ' +
    'or (a start) `START_UNKNOWN`: a start with this Idempotency-Key was in flight when the host stopped, and its executor has no such process; ' +
    '(files) `IS_A_DIRECTORY`, `NOT_A_DIRECTORY`, `DIRECTORY_NOT_EMPTY`, `FILE_EXISTS`; ' +
    '(http) `HTTP_DISABLED`: a preview link from a host without a preview listener (`--preview-port`).',
  412: '(files) `PRECONDITION_FAILED`: If-None-Match: * on an existing file, or If-Match on another version.',
  413: 'The body is larger than the host reads; (http) `HTTP_REQUEST_TOO_LARGE`: the fetch body is over `--max-preview-body`.',
  415: 'The body is not `application/json`.',
  416: '(files) `RANGE_NOT_SATISFIABLE`: the Range lies past the end of the file (`Content-Range: bytes */<size>` says its size).',
  422: 'The program cannot be started, or an Idempotency-Key / writeId was used for another request.',
  429: 'Too many requests or event streams for this token (`Retry-After`).',
  502:
    '(files) `FILE_OPERATION_FAILED`: a copy, move or remove helper process failed for a reason the host does not know; ' +
    '(http) `PREVIEW_FAILED`: the environment could not reach the fetch target.',
  504:
    '(files) `REQUEST_TIMEOUT`: a copy, move or remove ran past its bound and was terminated; ' +
    '(http) `PREVIEW_TIMEOUT`: the fetch target sent no answer within the bound.',
  507: "(files) `INSUFFICIENT_STORAGE`: the executor's disk is full.",
  503:
    'The environment is starting, recovering or failed, the host holds its total of event streams, ' +
    'or (`/wait`) the host is stopping (`Retry-After`); (files) `FILE_BUSY` (every one of the per-environment open transfers stayed taken ' +
    'for the 10 s a transfer waits its turn) or `UPLOAD_INTERRUPTED`.',
};

/** `time` on a sequenced event read from the output log. */
const TIME: Json = {
  type: 'integer',
  minimum: 0,
  description: 'When the host received the event (ms since the epoch); on events read from the output log (a host with a data dir).',
};

/** The fields of an environment (an `EnvironmentResource`, and one of the `Overview`'s environments). */
const ENVIRONMENT: Record<string, Json> = {
  id: { type: 'string' },
  generation: { type: 'integer', minimum: 0 },
  state: {
    enum: ['starting', 'connecting', 'connected', 'disconnected', 'failed', 'closed', 'offline'],
    description:
      '`offline` (generation 0, no info): only the output logs know the environment; no executor joined under its id since the host started. ' +
      "With replicas, an environment another replica owns has its owner's state, generation and error (its info only there), " +
      "and is `offline` once the owner's lease ran out (a `failed` one stays `failed`).",
  },
  error: { oneOf: [ref('ApiError'), { type: 'null' }] },
  info: { type: ['object', 'null'] },
  processCount: { type: 'integer', minimum: 0 },
};

/** The schemas of the bodies and of the events' data, by name (what {@link ref} refers to). */
const SCHEMAS: Record<string, Json> = {
  ApiError: obj({ code: { type: 'string' }, message: { type: 'string' } }),
  Problem: obj(
    {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      code: { type: 'string' },
      detail: { type: 'string' },
      hostInstance: { type: 'string' },
    },
    ['type', 'title', 'status', 'code', 'hostInstance'],
  ),
  HostInfo: obj({
    hostInstance: { type: 'string' },
    environments: { type: 'integer', minimum: 0 },
    eventStreams: { type: 'integer', minimum: 0 },
    waits: { type: 'integer', minimum: 0, description: 'Open `…/wait` requests.' },
    caller: ref('HostCaller'),
  }),
  HostCaller: obj({
    name: { type: 'string', description: "The operator token's name (never the token)." },
    role: { enum: ['view', 'operate'] },
    environments: { type: ['array', 'null'], items: { type: 'string' }, description: 'The environments it may touch; null: every one.' },
  }),
  FileEntry: obj({
    path: { type: 'string' },
    name: { type: 'string' },
    type: { enum: ['file', 'directory', 'other'] },
    size: { type: 'integer', minimum: 0 },
    modifiedAt: { type: ['string', 'null'], description: 'ISO-8601 with ms; null when the executor gives none.' },
    isSymlink: { type: 'boolean' },
    etag: { type: ['string', 'null'], description: 'A file\'s weak ETag `W/"<size>-<mtimeMs>"`; null for a directory.' },
  }),
  FileListing: obj({ path: { type: 'string' }, entries: { type: 'array', items: ref('FileEntry') }, truncated: { type: 'boolean' } }),
  FindResult: obj({
    path: { type: 'string' },
    entries: { type: 'array', items: obj({ path: { type: 'string' }, type: { enum: ['file', 'directory', 'other'] } }) },
    truncated: { type: 'boolean' },
  }),
  FileChange: obj({ kind: { enum: ['created', 'changed', 'removed'] }, entry: ref('FileEntry') }),
  CreateDirectoryRequest: obj({ path: { type: 'string' }, parents: { type: 'boolean' } }, ['path']),
  TransferRequest: obj({ source: { type: 'string' }, destination: { type: 'string' }, overwrite: { type: 'boolean' } }, ['source', 'destination']),
  LogTicket: obj({
    url: { type: 'string', description: "`…/log?ticket=T`, relative to the host's origin." },
    expiresAt: { type: 'string', description: 'When the ticket expires (ISO-8601).' },
  }),
  EnvironmentResource: obj(ENVIRONMENT),
  EnvironmentList: obj({ hostInstance: { type: 'string' }, environments: { type: 'array', items: ref('EnvironmentResource') } }),
  WaitResult: obj({
    exitCode: { type: 'integer', description: 'The exit status, or 128 + signal.' },
    exitedAt: {
      type: ['string', 'null'],
      description: 'When the host saw it exit (ISO-8601); null when it does not know (it exited before the wait, and the host keeps no output log).',
    },
  }),
  ProcessResource: obj({
    id: { type: 'string' },
    environmentId: { type: 'string' },
    argv: { type: 'array', items: { type: 'string' } },
    tty: { type: 'boolean' },
    pipeStdin: { type: 'boolean' },
    state: {
      enum: ['running', 'exited', 'closed', 'failed', 'unknown', 'lost'],
      description:
        'A process only the output logs hold (of before a host restart) shows its last known state: `closed` with its exit code, `failed`, ' +
        'or `unknown` (it was running when the host went down, or no executor lists it now); `lost`: its executor did not take it back after a restart.',
    },
    exitCode: { type: ['integer', 'null'] },
    error: { oneOf: [ref('ApiError'), { type: 'null' }] },
    startedAt: {
      type: ['string', 'null'],
      description: 'When it started (ISO-8601); null when the host does not know (a process it took back and keeps no output log of).',
    },
    exitedAt: { type: ['string', 'null'], description: 'When the host saw it exit (ISO-8601); null while it runs, or when the host does not know.' },
    startedBy: {
      type: ['string', 'null'],
      description:
        'The name of the operator token that started it through this API (never the token), kept across a restart with a data dir; ' +
        'null for a process started otherwise, or that the host does not know. Hosts older than this field leave it out.',
    },
  }),
  ProcessList: obj({ processes: { type: 'array', items: ref('ProcessResource') } }),
  Overview: obj({
    hostInstance: { type: 'string' },
    environments: { type: 'array', items: obj({ ...ENVIRONMENT, processes: { type: 'array', items: ref('ProcessResource') } }) },
  }),
  TtySize: obj({ rows: { type: 'integer', minimum: 1, maximum: 10000 }, cols: { type: 'integer', minimum: 1, maximum: 10000 } }),
  StartProcessRequest: obj(
    {
      argv: { type: 'array', minItems: 1, maxItems: 1024, items: { type: 'string', minLength: 1, maxLength: 4096 } },
      cwd: { type: 'string', minLength: 1, description: "Default: the executor's home directory." },
      env: {
        type: 'object',
        propertyNames: { minLength: 1, pattern: '^[^=\\u0000]+$' },
        additionalProperties: { type: 'string' },
        description: "Laid over the executor's core environment (names not empty, no = or NUL).",
      },
      tty: { oneOf: [{ type: 'boolean' }, ref('TtySize')], description: 'A pty (TERM=xterm-256color unless env sets it), optionally sized.' },
      pipeStdin: { type: 'boolean', description: 'A stdin that can be written and ended.' },
    },
    ['argv'],
  ),
  StdinWriteRequest: obj({ writeId: { type: 'string', minLength: 1, maxLength: 128 }, data: { type: 'string', contentEncoding: 'base64' } }),
  WriteAccepted: obj({ writeId: { type: 'string' }, status: { const: 'accepted' } }),
  OutputEventData: obj(
    { seq: { type: 'integer' }, time: TIME, stream: { enum: ['stdout', 'stderr', 'pty'] }, chunk: { type: 'string', contentEncoding: 'base64' } },
    ['seq', 'stream', 'chunk'],
  ),
  ExitedEventData: obj({ seq: { type: 'integer' }, time: TIME, exitCode: { type: 'integer' } }, ['seq', 'exitCode']),
  ClosedEventData: obj({ seq: { type: 'integer' }, time: TIME }, ['seq']),
  FailedEventData: ref('ApiError'),
  RestartEventData: obj(
    { retryMs: { type: 'integer', minimum: 0, description: 'How long to wait before reconnecting (ms); the `retry:` field says the same.' } },
    ['retryMs'],
  ),
  TruncatedEventData: obj(
    {
      nextSeq: { type: 'integer', description: 'The seq of the next event delivered.' },
      droppedEvents: { type: 'integer' },
      droppedBytes: {
        type: 'integer',
        minimum: 0,
        description:
          'The output bytes the dropped events held: exact for what the history or the log quota dropped and for `writeFailed`; ' +
          'for `corrupt`, the damaged bytes less one record header per event. Absent when the host does not know (a marker for what ' +
          "the executor's own window evicted); 0 with `droppedEvents` above 0 is unknown too (the executor does not say).",
      },
      reason: {
        enum: ['quota', 'corrupt', 'writeFailed', 'released', 'evicted'],
        description:
          'From the output log: why the range is missing. `quota`: segments dropped to keep the process within its quota; ' +
          '`corrupt`: records damaged on disk; `writeFailed`: taken while the disk refused writes; `released`: the history was released; ' +
          '`evicted`: the log is gone (total bound, retention) or the seqs come before its first.',
      },
      fromSeq: { type: 'integer', minimum: 0, description: 'From the output log: the first missing seq.' },
      toSeq: { type: 'integer', minimum: 0, description: 'From the output log: the last missing seq (`nextSeq - 1`).' },
    },
    ['nextSeq', 'droppedEvents'],
  ),
};

/** The document's `components`: the security scheme, the problem responses by status, and the schemas (HTTP's from `./preview/openapi-preview-paths`). */
export const COMPONENTS: Json = {
  securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'An operator token (not an executor credential).' } },
  responses: Object.fromEntries(
    Object.entries(STATUS_TEXT).map(([status, description]) => [
      `Problem${status}`,
      { description, content: { 'application/problem+json': { schema: ref('Problem') } } },
    ]),
  ),
  schemas: { ...SCHEMAS, ...PREVIEW_SCHEMAS },
};
