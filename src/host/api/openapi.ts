/**
 * The OpenAPI 3.2 document of the operator API (3.2 for `itemSchema`, the SSE events; see `info.description`), served at `/api/v1/openapi.json`. Written by hand beside
 * the router (the router is not generated from it); every GET has its HEAD (the same answer without the
 * body). `spec/host/api/openapi.int.spec.ts` holds the two together: every documented method and path
 * answers, every other method answers 405, and every response body validates against its schema.
 */
import { API_PREFIX } from '../../wire/operator-api';
import { SAFE_ID_PATTERN } from '../../wire/safe-id';

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, Json>, required: readonly string[] = Object.keys(properties)): Json => ({ type: 'object', additionalProperties: false, properties, required });
const json = (schema: Json, description: string): Json => ({ description, content: { 'application/json': { schema } } });
const problems = (...statuses: readonly number[]): Record<string, Json> =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Problem${status}` }]));
const ID = { type: 'string', pattern: SAFE_ID_PATTERN };
const pathParams = (...names: readonly string[]): Json => names.map((name) => ({ name, in: 'path', required: true, schema: ID }));

/** How an SSE event of a stream is framed: `id:` the seq (a sequenced event), `retry:` (the come-back event), or neither. */
type Framing = 'seq' | 'retry' | 'none';

/** The events a process's stream sends: name, the schema of its data, its framing. */
const PROCESS_EVENTS: readonly (readonly [string, string, Framing])[] = [
  ['output', 'OutputEventData', 'seq'],
  ['exited', 'ExitedEventData', 'seq'],
  ['closed', 'ClosedEventData', 'seq'],
  ['failed', 'FailedEventData', 'none'],
  ['truncated', 'TruncatedEventData', 'none'],
  ['restart', 'RestartEventData', 'retry'],
];
/** The events of the overview: its snapshots, then those of `…/events` for a selected process. */
const OVERVIEW_EVENTS: readonly (readonly [string, string, Framing])[] = [['overview', 'Overview', 'none'], ...PROCESS_EVENTS];

/**
 * One SSE event as OpenAPI 3.2 models it (an object of its fields: `event`, `data`, `id`, `retry`): its
 * `event` name, and its `data` a JSON text whose parsed value `contentSchema` describes.
 */
function sseEvent([name, schema, framing]: readonly [string, string, Framing]): Json {
  const properties: Record<string, Json> = {
    event: { const: name },
    data: { type: 'string', contentMediaType: 'application/json', contentSchema: ref(schema) },
  };
  if (framing === 'seq') properties['id'] = { type: 'string', pattern: '^(0|[1-9][0-9]*)$', description: 'The seq (as in the data): resume after it with `Last-Event-ID` or `?after=`.' };
  if (framing === 'retry') properties['retry'] = { type: 'integer', minimum: 0, description: 'The same ms as `retryMs`.' };
  return { title: name, type: 'object', properties, required: ['event', 'data', ...(framing === 'seq' ? ['id'] : framing === 'retry' ? ['retry'] : [])] };
}

/**
 * An SSE response: its `itemSchema` (OpenAPI 3.2) describes each event, one `oneOf` branch per event
 * name. No `schema`: for `text/event-stream`, 3.2 reads `schema` as the whole stream as an array of
 * events, while a 3.0/3.1 tool would read it as the body; without it, such a tool sees a stream of text.
 */
const eventStream = (description: string, events: readonly (readonly [string, string, Framing])[]): Json => ({
  description,
  content: {
    'text/event-stream': {
      itemSchema: {
        type: 'object',
        properties: { event: { type: 'string' }, data: { type: 'string' }, id: { type: 'string' }, retry: { type: 'integer', minimum: 0 } },
        required: ['event', 'data'],
        oneOf: events.map(sseEvent),
      },
    },
  },
});

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed JSON, a body that does not match its schema (an unknown field included), an id that is not a safe id, or a query parameter (`after`, `follow`, `stream`, `tail`, `since`) out of its range or given twice.',
  401: 'No operator token, or a wrong one (no detail is given).',
  403: 'The token may not do this: `FORBIDDEN_ROLE` (a `view` token: it may only GET, follow, wait and ask for a download ticket) or `FORBIDDEN_ENVIRONMENT` (a token limited to other environments). With `--cors-origin`, `FORBIDDEN_ORIGIN` answers a preflight (OPTIONS) from an origin not listed.',
  404: 'No such environment, process or route.',
  405: 'The path exists but not with this method (`Allow` lists those it has).',
  409: 'The request conflicts with the process: (`/wait`) it failed or was lost instead of exiting; it has no stdin, its input ended, or it has not closed; or (`/log`) the host keeps no output log (no data dir); or (a start) `START_UNKNOWN`: a start with this Idempotency-Key was in flight when the host stopped, and its executor has no such process.',
  413: 'The body is larger than the host reads.',
  415: 'The body is not `application/json`.',
  422: 'The program cannot be started, or an Idempotency-Key / writeId was used for another request.',
  429: 'Too many requests or event streams for this token (`Retry-After`).',
  503: 'The environment is starting, recovering or failed, the host holds its total of event streams, or (`/wait`) the host is stopping (`Retry-After`).',
};

/** `time` on a sequenced event read from the output log. */
const TIME: Json = { type: 'integer', minimum: 0, description: 'When the host received the event (ms since the epoch); on events read from the output log (a host with a data dir).' };

/** The query parameters of `…/log`. */
const LOG_PARAMETERS: readonly Json[] = [
  {
    name: 'stream',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    schema: { type: 'array', items: { type: 'string', pattern: '^(stdout|stderr|pty)(,(stdout|stderr|pty))*$' } },
    description: 'Which streams: `stdout`, `stderr`, `pty`; repeated or a comma list. Default: all.',
  },
  {
    name: 'tail',
    in: 'query',
    required: false,
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})b?$' },
    description: "Only the end of the selected output (like kubectl's `--tail` and `--limit-bytes`): `N` the last N lines (at most 1000000; a last line without its newline counts), `Nb` the last N bytes.",
  },
  {
    name: 'since',
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description: 'Only output the host received at or after this time: RFC 3339 (`2026-12-01T16:00:00Z`) or ms since the epoch.',
  },
];

const ENVIRONMENT: Record<string, Json> = {
  id: { type: 'string' },
  generation: { type: 'integer', minimum: 0 },
  state: {
    enum: ['starting', 'connecting', 'connected', 'disconnected', 'failed', 'closed', 'offline'],
    description: '`offline` (generation 0, no info): only the output logs know the environment; no executor joined under its id since the host started.',
  },
  error: { oneOf: [ref('ApiError'), { type: 'null' }] },
  info: { type: ['object', 'null'] },
  processCount: { type: 'integer', minimum: 0 },
};

/** GET's operation, answered as HEAD (the same statuses and headers, no body): every GET path has one. */
function headOf(get: Json): Json {
  if (get === null || typeof get !== 'object' || Array.isArray(get)) return get;
  const operation = get as { readonly [key: string]: Json };
  const { summary, description: _description, operationId, ...rest } = operation;
  return { ...rest, ...(typeof operationId === 'string' ? { operationId: `${operationId}Head` } : {}), summary: `${typeof summary === 'string' ? summary : 'GET'}: the headers only (no body)` };
}

/** `paths` with a `head` beside every `get` that has none. */
const withHead = (paths: Record<string, Record<string, Json>>): Record<string, Json> =>
  Object.fromEntries(Object.entries(paths).map(([path, item]) => [path, item['get'] === undefined || item['head'] !== undefined ? item : { ...item, head: headOf(item['get']) }]));

const processPaths = `${API_PREFIX}/environments/{environmentId}/processes`;
const processPath = `${processPaths}/{processId}`;

/** The document. */
export const OPENAPI_DOCUMENT: Json = {
  openapi: '3.2.0',
  info: {
    title: 'exec-rx host operator API',
    version: '1.0.0',
    description:
      'Environments (executors joined to this host) and the processes running on them; with a data dir, also the processes of before a host restart (their last known state, their output from the log). Every answer names the host instance in the `exec-rx-host-instance` header; errors are `application/problem+json` (RFC 9457) with the library error `code`. Process events are Server-Sent Events: `id:` is the seq, `Last-Event-ID` or `?after=SEQ` resumes with exactly what follows.\n\nOpenAPI 3.2: the event streams (`streamOverview`, `streamProcessEvents`) describe each event with `itemSchema` (one `oneOf` branch per event name: `event` that name, `data` a JSON text whose parsed value `contentSchema` gives, `id` the seq of a sequenced event, `retry` on `restart`). A tool that knows only OpenAPI 3.0 or 3.1 (which have no `itemSchema`) sees those responses as `text/event-stream` text without a schema; the data of each event is a named schema under `components.schemas` (`OutputEventData`, `ExitedEventData`, `ClosedEventData`, `FailedEventData`, `TruncatedEventData`, `RestartEventData`, `Overview`) to use directly. Nothing else here needs 3.2: changing `openapi` to `3.1.0` and dropping `itemSchema` gives a valid 3.1 document.',
  },
  tags: [
    { name: 'host', description: 'The host itself: liveness, readiness, this document, and who the caller is.' },
    { name: 'environments', description: 'Executors joined to this host (each an environment, by id), and their connection state.' },
    { name: 'processes', description: "Start, list, read, drive (stdin, interrupt, resize, terminate), wait for and release the processes of an environment; their output bytes from the log." },
    { name: 'streams', description: 'Server-Sent Events: the live overview of every environment, and one process\'s events (resumable by seq).' },
  ],
  security: [{ operatorToken: [] }],
  paths: withHead({
    '/healthz': {
      get: {
        operationId: 'getHealth',
        tags: ['host'],
        summary: 'Liveness: the process is alive and its event loop turns (no token)',
        security: [],
        responses: { '200': json(obj({ status: { const: 'ok' } }), 'Alive') },
      },
    },
    '/readyz': {
      get: {
        operationId: 'getReadiness',
        tags: ['host'],
        summary: 'Readiness: the host accepts work (no token)',
        description: 'Ready once it listens with its state loaded, while it is not stopping and its data dir (if any) is writable. Answered while the host stops too (503 `stopping`).',
        security: [],
        responses: {
          '200': json(obj({ status: { const: 'ready' } }), 'Ready'),
          '503': json(obj({ status: { const: 'not ready' }, reason: { enum: ['starting', 'stopping', 'data dir not writable'] } }), 'Not ready, and why (`Retry-After`)'),
        },
      },
    },
    [`${API_PREFIX}/openapi.json`]: {
      get: { operationId: 'getOpenApiDocument', tags: ['host'], summary: 'This document', security: [], responses: { '200': json({ type: 'object' }, 'The OpenAPI document') } },
      head: { operationId: 'getOpenApiDocumentHead', tags: ['host'], summary: "This document's headers", security: [], responses: { '200': json({ type: 'object' }, 'The headers of the OpenAPI document, no body') } },
    },
    [`${API_PREFIX}/host`]: { get: { operationId: 'getHost', tags: ['host'], summary: 'The host instance', responses: { '200': json(ref('HostInfo'), 'This host'), ...problems(401, 403, 429) } } },
    [`${API_PREFIX}/environments`]: { get: { operationId: 'listEnvironments', tags: ['environments'], summary: 'List environments', responses: { '200': json(ref('EnvironmentList'), 'Every environment'), ...problems(401, 403, 429) } } },
    [`${API_PREFIX}/environments/{environmentId}`]: {
      parameters: pathParams('environmentId'),
      get: { operationId: 'getEnvironment', tags: ['environments'], summary: 'One environment', responses: { '200': json(ref('EnvironmentResource'), 'The environment'), ...problems(400, 401, 403, 404, 429) } },
    },
    [`${API_PREFIX}/overview`]: {
      parameters: [
        { name: 'environmentId', in: 'query', required: false, schema: ID, description: 'With `processId`: the stream also carries this process\'s events (a page\'s one connection).' },
        { name: 'processId', in: 'query', required: false, schema: ID, description: 'With `environmentId`: the process whose events the stream also carries.' },
        { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: "Resume the process's events after this seq (wins over Last-Event-ID)." },
      ],
      get: {
        operationId: 'streamOverview',
        tags: ['streams'],
        summary: 'Live overview: every environment with its processes (and, selected, one process\'s events)',
        description:
          'One `event: overview` per change, its data an `Overview`; a comment ping every 15 s. A host that stops gracefully ends it with `event: restart` (`RestartEventData`, and an SSE `retry:` field): come back after `retryMs`. With `environmentId` and `processId` (both or neither: 400), the same stream also carries that process\'s events as `…/events` gives them (`output`, `exited`, `closed`, `truncated`, `failed`; `id:` the seq), after `after` or `Last-Event-ID`: its `closed` or `failed` ends only the process part, the overview goes on. A process that is not there (or cannot be read) is a `failed` event with the code a request for it would get (`PROCESS_NOT_FOUND` …). A token limited to other environments gets 403 `FORBIDDEN_ENVIRONMENT`. A client more than the buffer bound behind is cut: it resumes by seq.',
        responses: { '200': eventStream('An event stream of `Overview` snapshots (and the selected process\'s events); each event is one branch of `itemSchema` (OpenAPI 3.2)', OVERVIEW_EVENTS), ...problems(400, 401, 403, 429, 503) },
      },
    },
    [processPaths]: {
      parameters: pathParams('environmentId'),
      get: { operationId: 'listProcesses', tags: ['processes'], summary: "List an environment's processes", responses: { '200': json(ref('ProcessList'), 'The processes'), ...problems(400, 401, 403, 404, 429, 503) } },
      post: {
        operationId: 'startProcess',
        tags: ['processes'],
        summary: 'Start a process',
        parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'A retried start with the same key and body returns the same process (200), across a host restart with a data dir too (or 409 `START_UNKNOWN` when the executor never got it).' }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('StartProcessRequest') } } },
        responses: { '201': json(ref('ProcessResource'), 'Started'), '200': json(ref('ProcessResource'), 'A replay of an earlier start with this Idempotency-Key'), ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429, 503) },
      },
    },
    [processPath]: {
      parameters: pathParams('environmentId', 'processId'),
      get: { operationId: 'getProcess', tags: ['processes'], summary: 'One process', responses: { '200': json(ref('ProcessResource'), 'The process'), ...problems(400, 401, 403, 404, 429, 503) } },
      delete: { operationId: 'releaseProcess', tags: ['processes'], summary: 'Release a closed process (its history and its place in the list)', responses: { '204': { description: 'Released' }, ...problems(400, 401, 403, 404, 409, 429, 503) } },
    },
    [`${processPath}/events`]: {
      parameters: [...(pathParams('environmentId', 'processId') as readonly Json[]), { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'Resume after this seq (wins over Last-Event-ID).' }, { name: 'follow', in: 'query', required: false, schema: { enum: ['true', 'false'] }, description: '`false`: only what the host holds now, then the stream ends. Default `true` (then live).' }],
      get: {
        operationId: 'streamProcessEvents',
        tags: ['streams'],
        summary: "A process's events",
        description:
          'Events `output` (data `OutputEventData`, bytes base64), `exited` (`ExitedEventData`), `closed` (`ClosedEventData`), `failed` (`FailedEventData`) and `truncated` (`TruncatedEventData`); `id:` is the seq. A host that stops gracefully ends every stream with `restart` (`RestartEventData`, and an SSE `retry:` field of the same ms): nothing follows it; reconnect after `retryMs`, resuming after the last seq (not an error). The stream ends after `closed` or `failed`, or when the client falls more than the buffer bound behind (resume with Last-Event-ID). With a data dir every process the host holds a log of (one of before a restart too) is read from that log at the client\'s pace (never cut for being slow): its sequenced events carry `time` (when the host received them) and its `truncated` markers `reason`, `fromSeq` and `toSeq`; followed, a process whose end is unknown (state `unknown`) ends with `failed` `PROCESS_GONE` once its log was read.',
        responses: { '200': eventStream("The process's events; each is one branch of `itemSchema` (OpenAPI 3.2)", PROCESS_EVENTS), ...problems(400, 401, 403, 404, 429, 503) },
      },
    },
    [`${processPath}/log`]: {
      parameters: [
        ...(pathParams('environmentId', 'processId') as readonly Json[]),
        ...LOG_PARAMETERS,
        { name: 'ticket', in: 'query', required: false, schema: { type: 'string' }, description: 'A download ticket from `POST …/log/tickets`, instead of the token (a GET without `Authorization`): good once, for 60 s, for this process. A used, expired or unknown one is 401.' },
      ],
      get: {
        operationId: 'getProcessLog',
        tags: ['processes'],
        summary: "A process's output bytes, as they came",
        description:
          "The output the host's log holds now (no follow), read from the disk at the client's pace: a process of this run or of one before a host restart. Ranges the log cannot give (quota, damage) are skipped; the events route's `truncated` markers name them. A host without a data dir keeps no log: 409 `LOG_READ_FAILED`. Answered with `Content-Disposition: attachment; filename=\"<processId>.log\"` (a browser that navigated here with a ticket saves it).",
        security: [{ operatorToken: [] }, {}],
        responses: { '200': { description: 'The selected output bytes', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } }, ...problems(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    [`${processPath}/log/tickets`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: {
        operationId: 'createLogTicket',
        tags: ['processes'],
        summary: "A single-use download ticket for the process's output bytes (view tokens too)",
        description:
          'A url of `…/log` with `?ticket=`: a GET of it needs no `Authorization` (a browser downloads by navigating). The ticket is random, not the token; it is good once, for 60 s, for this process, and stands for the token that asked (dropped if a reload revokes that token). Add `&stream=` (or `tail`, `since`) to select.',
        responses: { '201': json(ref('LogTicket'), 'The ticket'), ...problems(400, 401, 403, 404, 413, 429, 503) },
      },
    },
    [`${processPath}/stdin`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: {
        operationId: 'writeStdin',
        tags: ['processes'],
        summary: 'Write to stdin (once per writeId, in arrival order; answered once accepted)',
        requestBody: { required: true, content: { 'application/json': { schema: ref('StdinWriteRequest') } } },
        responses: { '200': json(ref('WriteAccepted'), 'Accepted by the executor'), ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429, 503) },
      },
    },
    [`${processPath}/stdin/end`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: { operationId: 'endStdin', tags: ['processes'], summary: 'End the input (idempotent)', responses: { '200': json(obj({ status: { const: 'ended' } }), 'Ended'), ...problems(400, 401, 403, 404, 409, 413, 429, 503) } },
    },
    [`${processPath}/interrupt`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: { operationId: 'interruptProcess', tags: ['processes'], summary: 'Send SIGINT (exit 130 follows)', responses: { '200': json(obj({ status: { const: 'interrupted' } }), 'The executor took the signal (earlier hosts answered 202, which HostClient accepts too)'), ...problems(400, 401, 403, 404, 413, 429, 503) } },
    },
    [`${processPath}/resize`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: {
        operationId: 'resizeProcess',
        tags: ['processes'],
        summary: "Resize a sized tty's terminal (the command gets SIGWINCH; resizes coalesce, the last wins)",
        requestBody: { required: true, content: { 'application/json': { schema: ref('TtySize') } } },
        responses: { '200': json(ref('TtySize'), 'Applied (or a later size superseded it)'), ...problems(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      },
    },
    [`${processPath}/wait`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: {
        operationId: 'waitProcess',
        tags: ['processes'],
        summary: "Wait until the process has exited (like Docker's container wait); at once for one that has",
        description:
          'Answers once the process has exited: its exit code and when the host saw it exit. A process of before a host restart is answered from its output log once its executor was taken back: its exit, or 409 (`PROCESS_GONE`: lost, or how it ended is unknown; `HOST_ERROR`: its stream failed). A process that fails is 409 with its error code. When the host stops, an open wait is answered 503 `CLOSED` with `Retry-After`: ask again.',
        responses: { '200': json(ref('WaitResult'), 'It has exited'), ...problems(400, 401, 404, 409, 413, 429, 503) },
      },
    },
    [`${processPath}/terminate`]: {
      parameters: pathParams('environmentId', 'processId'),
      post: { operationId: 'terminateProcess', tags: ['processes'], summary: 'Kill the process group (exit 137 follows)', responses: { '200': json(obj({ running: { type: 'boolean' } }), 'Whether it was running'), ...problems(400, 401, 403, 404, 413, 429, 503) } },
    },
  }),
  components: {
    securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'An operator token (not an executor credential).' } },
    responses: Object.fromEntries(
      Object.entries(STATUS_TEXT).map(([status, description]) => [`Problem${status}`, { description, content: { 'application/problem+json': { schema: ref('Problem') } } }]),
    ),
    schemas: {
      ApiError: obj({ code: { type: 'string' }, message: { type: 'string' } }),
      Problem: obj(
        { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, code: { type: 'string' }, detail: { type: 'string' }, hostInstance: { type: 'string' } },
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
      LogTicket: obj({
        url: { type: 'string', description: "`…/log?ticket=T`, relative to the host's origin." },
        expiresAt: { type: 'string', description: 'When the ticket expires (ISO-8601).' },
      }),
      EnvironmentResource: obj(ENVIRONMENT),
      EnvironmentList: obj({ hostInstance: { type: 'string' }, environments: { type: 'array', items: ref('EnvironmentResource') } }),
      WaitResult: obj({
        exitCode: { type: 'integer', description: 'The exit status, or 128 + signal.' },
        exitedAt: { type: ['string', 'null'], description: 'When the host saw it exit (ISO-8601); null when it does not know (it exited before the wait, and the host keeps no output log).' },
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
            'A process only the output logs hold (of before a host restart) shows its last known state: `closed` with its exit code, `failed`, or `unknown` (it was running when the host went down, or no executor lists it now); `lost`: its executor did not take it back after a restart.',
        },
        exitCode: { type: ['integer', 'null'] },
        error: { oneOf: [ref('ApiError'), { type: 'null' }] },
        startedAt: { type: ['string', 'null'], description: 'When it started (ISO-8601); null when the host does not know (a process it took back and keeps no output log of).' },
        exitedAt: { type: ['string', 'null'], description: 'When the host saw it exit (ISO-8601); null while it runs, or when the host does not know.' },
        startedBy: { type: ['string', 'null'], description: "The name of the operator token that started it through this API (never the token), kept across a restart with a data dir; null for a process started otherwise, or that the host does not know. Hosts older than this field leave it out." },
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
          env: { type: 'object', propertyNames: { minLength: 1, pattern: '^[^=\\u0000]+$' }, additionalProperties: { type: 'string' }, description: "Laid over the executor's core environment (names not empty, no = or NUL)." },
          tty: { oneOf: [{ type: 'boolean' }, ref('TtySize')], description: 'A pty (TERM=xterm-256color unless env sets it), optionally sized.' },
          pipeStdin: { type: 'boolean', description: 'A stdin that can be written and ended.' },
        },
        ['argv'],
      ),
      StdinWriteRequest: obj({ writeId: { type: 'string', minLength: 1, maxLength: 128 }, data: { type: 'string', contentEncoding: 'base64' } }),
      WriteAccepted: obj({ writeId: { type: 'string' }, status: { const: 'accepted' } }),
      OutputEventData: obj({ seq: { type: 'integer' }, time: TIME, stream: { enum: ['stdout', 'stderr', 'pty'] }, chunk: { type: 'string', contentEncoding: 'base64' } }, ['seq', 'stream', 'chunk']),
      ExitedEventData: obj({ seq: { type: 'integer' }, time: TIME, exitCode: { type: 'integer' } }, ['seq', 'exitCode']),
      ClosedEventData: obj({ seq: { type: 'integer' }, time: TIME }, ['seq']),
      FailedEventData: ref('ApiError'),
      RestartEventData: obj({ retryMs: { type: 'integer', minimum: 0, description: 'How long to wait before reconnecting (ms); the `retry:` field says the same.' } }, ['retryMs']),
      TruncatedEventData: obj(
        {
          nextSeq: { type: 'integer', description: 'The seq of the next event delivered.' },
          droppedEvents: { type: 'integer' },
          droppedBytes: { type: 'integer' },
          reason: {
            enum: ['quota', 'corrupt', 'writeFailed', 'released', 'evicted'],
            description:
              'From the output log: why the range is missing. `quota`: segments dropped to keep the process within its quota; `corrupt`: records damaged on disk; `writeFailed`: taken while the disk refused writes; `released`: the history was released; `evicted`: the log is gone (total bound, retention) or the seqs come before its first.',
          },
          fromSeq: { type: 'integer', minimum: 0, description: 'From the output log: the first missing seq.' },
          toSeq: { type: 'integer', minimum: 0, description: 'From the output log: the last missing seq (`nextSeq - 1`).' },
        },
        ['nextSeq', 'droppedEvents'],
      ),
    },
  },
};

/**
 * The document as the package ships it (`dist/openapi.json`) and the repository keeps it
 * (`docs/openapi.json`): JSON with two-space indents and a final newline. `npm run openapi` writes both.
 */
export const openApiText = (): string => `${JSON.stringify(OPENAPI_DOCUMENT, null, 2)}\n`;
