/**
 * The paths of the OpenAPI document (`./openapi`) that are about an environment's processes: list and
 * start, read and release, the event stream, the output bytes from the log and their download ticket,
 * stdin, the signals and the resize, and the wait. A `get` without its `head` gets one when the
 * document is assembled.
 */
import { API_PREFIX } from '../../wire/operator-api';
import type { Json } from './openapi-builders';
import { json, obj, pathParams, problems, ref } from './openapi-builders';
import { negotiatedEventStream, PROCESS_EVENTS } from './openapi-event-streams';

const processPaths = `${API_PREFIX}/environments/{environmentId}/processes`;
const processPath = `${processPaths}/{processId}`;

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
    description:
      "Only the end of the selected output (like kubectl's `--tail` and `--limit-bytes`): " +
      '`N` the last N lines (at most 1000000; a last line without its newline counts), `Nb` the last N bytes.',
  },
  {
    name: 'since',
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description: 'Only output the host received at or after this time: RFC 3339 (`2026-12-01T16:00:00Z`) or ms since the epoch.',
  },
];

/** What `…/events` sends and when it ends (its operation's description). */
const EVENTS_DESCRIPTION =
  'Server-Sent Events, or the binary stream (`application/vnd.exec-rx.events`: output as bytes, every other event as in SSE) for a request ' +
  'whose Accept names it (docs/binary-events.md). ' +
  'Events `output` (data `OutputEventData`, bytes base64), `exited` (`ExitedEventData`), `closed` (`ClosedEventData`), ' +
  '`failed` (`FailedEventData`) and `truncated` (`TruncatedEventData`); `id:` is the seq. ' +
  'A host that stops gracefully ends every stream with `restart` (`RestartEventData`, and an SSE `retry:` field of the same ms): ' +
  'nothing follows it; reconnect after `retryMs`, resuming after the last seq (not an error). ' +
  'The stream ends after `closed` or `failed`, or when the client falls more than the buffer bound behind (resume with Last-Event-ID). ' +
  "With a data dir every process the host holds a log of (one of before a restart too) is read from that log at the client's pace " +
  '(never cut for being slow): its sequenced events carry `time` (when the host received them) and its `truncated` markers `reason`, ' +
  '`fromSeq` and `toSeq`; followed, a process whose end is unknown (state `unknown`) ends with `failed` `PROCESS_GONE` once its log was read.';

/** The paths of an environment's processes, by path, in the document's order. */
export const PROCESS_PATHS: Record<string, Record<string, Json>> = {
  [processPaths]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'listProcesses',
      tags: ['processes'],
      summary: "List an environment's processes",
      responses: { '200': json(ref('ProcessList'), 'The processes'), ...problems(400, 401, 403, 404, 429, 503) },
    },
    post: {
      operationId: 'startProcess',
      tags: ['processes'],
      summary: 'Start a process',
      parameters: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          schema: { type: 'string', minLength: 1, maxLength: 255 },
          description:
            'A retried start with the same key and body returns the same process (200), ' +
            'across a host restart with a data dir too (or 409 `START_UNKNOWN` when the executor never got it).',
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('StartProcessRequest') } } },
      responses: {
        '201': json(ref('ProcessResource'), 'Started'),
        '200': json(ref('ProcessResource'), 'A replay of an earlier start with this Idempotency-Key'),
        ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
      },
    },
  },
  [processPath]: {
    parameters: pathParams('environmentId', 'processId'),
    get: {
      operationId: 'getProcess',
      tags: ['processes'],
      summary: 'One process',
      responses: { '200': json(ref('ProcessResource'), 'The process'), ...problems(400, 401, 403, 404, 429, 503) },
    },
    delete: {
      operationId: 'releaseProcess',
      tags: ['processes'],
      summary: 'Release a closed process (its history and its place in the list)',
      responses: { '204': { description: 'Released' }, ...problems(400, 401, 403, 404, 409, 429, 503) },
    },
  },
  [`${processPath}/events`]: {
    parameters: [
      ...pathParams('environmentId', 'processId'),
      {
        name: 'after',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 0 },
        description: 'Resume after this seq (wins over Last-Event-ID).',
      },
      {
        name: 'follow',
        in: 'query',
        required: false,
        schema: { enum: ['true', 'false'] },
        description: '`false`: only what the host holds now, then the stream ends. Default `true` (then live).',
      },
    ],
    get: {
      operationId: 'streamProcessEvents',
      tags: ['streams'],
      summary: "A process's events",
      description: EVENTS_DESCRIPTION,
      responses: {
        '200': negotiatedEventStream("The process's events; each is one branch of `itemSchema` (OpenAPI 3.2)", PROCESS_EVENTS),
        ...problems(400, 401, 403, 404, 429, 503),
      },
    },
  },
  [`${processPath}/log`]: {
    parameters: [
      ...pathParams('environmentId', 'processId'),
      ...LOG_PARAMETERS,
      {
        name: 'ticket',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description:
          'A download ticket from `POST …/log/tickets`, instead of the token (a GET without `Authorization`): ' +
          'good once, for 60 s, for this process. A used, expired or unknown one is 401.',
      },
    ],
    get: {
      operationId: 'getProcessLog',
      tags: ['processes'],
      summary: "A process's output bytes, as they came",
      description:
        "The output the host's log holds now (no follow), read from the disk at the client's pace: " +
        'a process of this run or of one before a host restart. ' +
        "Ranges the log cannot give (quota, damage) are skipped; the events route's `truncated` markers name them. " +
        'A host without a data dir keeps no log: 409 `LOG_READ_FAILED`. ' +
        'Answered with `Content-Disposition: attachment; filename="<processId>.log"` (a browser that navigated here with a ticket saves it).',
      security: [{ operatorToken: [] }, {}],
      responses: {
        '200': {
          description: 'The selected output bytes',
          content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
        },
        ...problems(400, 401, 403, 404, 409, 429, 503),
      },
    },
  },
  [`${processPath}/log/tickets`]: {
    parameters: pathParams('environmentId', 'processId'),
    post: {
      operationId: 'createLogTicket',
      tags: ['processes'],
      summary: "A single-use download ticket for the process's output bytes (view tokens too)",
      description:
        'A url of `…/log` with `?ticket=`: a GET of it needs no `Authorization` (a browser downloads by navigating). ' +
        'The ticket is random, not the token; it is good once, for 60 s, for this process, ' +
        'and stands for the token that asked (dropped if a reload revokes that token). Add `&stream=` (or `tail`, `since`) to select.',
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
    post: {
      operationId: 'endStdin',
      tags: ['processes'],
      summary: 'End the input (idempotent)',
      responses: { '200': json(obj({ status: { const: 'ended' } }), 'Ended'), ...problems(400, 401, 403, 404, 409, 413, 429, 503) },
    },
  },
  [`${processPath}/interrupt`]: {
    parameters: pathParams('environmentId', 'processId'),
    post: {
      operationId: 'interruptProcess',
      tags: ['processes'],
      summary: 'Send SIGINT (exit 130 follows)',
      responses: {
        '200': json(obj({ status: { const: 'interrupted' } }), 'The executor took the signal (earlier hosts answered 202, which HostClient accepts too)'),
        ...problems(400, 401, 403, 404, 413, 429, 503),
      },
    },
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
        'Answers once the process has exited: its exit code and when the host saw it exit. ' +
        'A process of before a host restart is answered from its output log once its executor was taken back: its exit, ' +
        'or 409 (`PROCESS_GONE`: lost, or how it ended is unknown; `HOST_ERROR`: its stream failed). A process that fails is 409 with its error code. ' +
        'When the host stops, an open wait is answered 503 `CLOSED` with `Retry-After`: ask again.',
      responses: { '200': json(ref('WaitResult'), 'It has exited'), ...problems(400, 401, 404, 409, 413, 429, 503) },
    },
  },
  [`${processPath}/terminate`]: {
    parameters: pathParams('environmentId', 'processId'),
    post: {
      operationId: 'terminateProcess',
      tags: ['processes'],
      summary: 'Kill the process group (exit 137 follows)',
      responses: { '200': json(obj({ running: { type: 'boolean' } }), 'Whether it was running'), ...problems(400, 401, 403, 404, 413, 429, 503) },
    },
  },
};
