/**
 * The paths of the OpenAPI document (`./openapi`) that are about the host and its environments: the
 * probes, the document itself and its rendering (the API reference page), who the caller is, the
 * environments, and the live overview stream.
 * A `get` without its `head` gets one when the document is assembled.
 */
import { API_PREFIX, TOKENS_DIGEST_HEADER } from '../../wire/operator-api';
import type { Json } from './openapi-builders';
import { ID, json, obj, pathParams, problems, ref } from './openapi-builders';
import { OVERVIEW_EVENTS, eventStream } from './openapi-event-streams';
import { SET_DIGEST_LENGTH } from './token-set-digest';

/** What `…/overview` sends and when it ends (its operation's description). */
const OVERVIEW_DESCRIPTION =
  'One `event: overview` per change, its data an `Overview`; a comment ping every 15 s. ' +
  'A host that stops gracefully ends it with `event: restart` (`RestartEventData`, and an SSE `retry:` field): come back after `retryMs`. ' +
  "With `environmentId` and `processId` (both or neither: 400), the same stream also carries that process's events as `…/events` gives them " +
  '(`output`, `exited`, `closed`, `truncated`, `failed`; `id:` the seq), after `after` or `Last-Event-ID`: ' +
  'its `closed` or `failed` ends only the process part, the overview goes on. ' +
  'A process that is not there (or cannot be read) is a `failed` event with the code a request for it would get (`PROCESS_NOT_FOUND` …). ' +
  'A token limited to other environments gets 403 `FORBIDDEN_ENVIRONMENT`. A client more than the buffer bound behind is cut: it resumes by seq.';

/** The probes' header: the digest of the operator tokens the host accepts now (a host serving this document has them). */
const PROBE_HEADERS: Json = {
  [TOKENS_DIGEST_HEADER]: {
    description: 'The digest of the operator tokens this host accepts now (over their names, roles, environments and digests): the same on replicas with the same set.',
    required: true,
    schema: { type: 'string', pattern: `^[0-9a-f]{${SET_DIGEST_LENGTH}}$` },
  },
};

/** A probe's answer: its JSON body, described, with {@link PROBE_HEADERS}. */
const probeAnswer = (schema: Json, description: string): Json => ({ description, headers: PROBE_HEADERS, content: { 'application/json': { schema } } });

/** The paths of the host and its environments, by path, in the document's order. */
export const HOST_PATHS: Record<string, Record<string, Json>> = {
  '/healthz': {
    get: {
      operationId: 'getHealth',
      tags: ['host'],
      summary: 'Liveness: the process is alive and its event loop turns (no token)',
      security: [],
      responses: { '200': probeAnswer(obj({ status: { const: 'ok' } }), 'Alive') },
    },
  },
  '/readyz': {
    get: {
      operationId: 'getReadiness',
      tags: ['host'],
      summary: 'Readiness: the host accepts work (no token)',
      description:
        'Ready once it listens with its state loaded, while it is not stopping and its data dir (if any) is writable. ' +
        'Answered while the host stops too (503 `stopping`). ' +
        'Replicas (one Redis) each read their own operator tokens file: after a rolling reload, they all accept the same set once each ' +
        `answers the same \`${TOKENS_DIGEST_HEADER}\`.`,
      security: [],
      responses: {
        '200': probeAnswer(obj({ status: { const: 'ready' } }), 'Ready'),
        '503': probeAnswer(
          obj({ status: { const: 'not ready' }, reason: { enum: ['starting', 'stopping', 'data dir not writable'] } }),
          'Not ready, and why (`Retry-After`)',
        ),
      },
    },
  },
  [`${API_PREFIX}/openapi.json`]: {
    get: {
      operationId: 'getOpenApiDocument',
      tags: ['host'],
      summary: 'This document',
      security: [],
      responses: { '200': json({ type: 'object' }, 'The OpenAPI document') },
    },
    head: {
      operationId: 'getOpenApiDocumentHead',
      tags: ['host'],
      summary: "This document's headers",
      security: [],
      responses: { '200': json({ type: 'object' }, 'The headers of the OpenAPI document, no body') },
    },
  },
  [`${API_PREFIX}/docs`]: {
    get: {
      operationId: 'getApiReference',
      tags: ['host'],
      summary: 'This document, rendered: the API reference page (no token)',
      description:
        'An HTML page that renders this document with Swagger UI, read-only: no "Try it out" console and no Authorize button, ' +
        'so it never asks for a token. Its files are served by this host (below `/api/v1/docs/`), no other origin, under a strict ' +
        '`Content-Security-Policy`. `no-cache`: revalidated on every visit.',
      security: [],
      responses: {
        '200': {
          description: 'The page',
          headers: {
            'Content-Security-Policy': { description: "The page's policy: its scripts, style and calls from this origin only.", required: true, schema: { type: 'string' } },
          },
          content: { 'text/html': { schema: { type: 'string' } } },
        },
        '503': { description: 'The page is not built (`npm run build` builds it)', content: { 'text/plain': { schema: { type: 'string' } } } },
      },
    },
  },
  [`${API_PREFIX}/docs/{asset}`]: {
    parameters: [{ name: 'asset', in: 'path', required: true, schema: ID, description: 'A file of the page, by the name the page gives it (a hash of its content in it).' }],
    get: {
      operationId: 'getApiReferenceAsset',
      tags: ['host'],
      summary: "A file of the API reference page: Swagger UI's script and style, the page's script, a license note (no token)",
      description: 'Cached for a year (`immutable`): a file that changes changes its name. Any name the page does not use is 404.',
      security: [],
      responses: {
        '200': {
          description: 'The file',
          content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } }, 'text/plain': { schema: { type: 'string' } } },
        },
        '404': { description: 'No file of the page has that name', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...problems(400),
      },
    },
  },
  [`${API_PREFIX}/host`]: {
    get: {
      operationId: 'getHost',
      tags: ['host'],
      summary: 'The host instance',
      responses: { '200': json(ref('HostInfo'), 'This host'), ...problems(401, 403, 429) },
    },
  },
  [`${API_PREFIX}/environments`]: {
    get: {
      operationId: 'listEnvironments',
      tags: ['environments'],
      summary: 'List environments',
      responses: { '200': json(ref('EnvironmentList'), 'Every environment'), ...problems(401, 403, 429) },
    },
  },
  [`${API_PREFIX}/environments/{environmentId}`]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'getEnvironment',
      tags: ['environments'],
      summary: 'One environment',
      responses: { '200': json(ref('EnvironmentResource'), 'The environment'), ...problems(400, 401, 403, 404, 429) },
    },
  },
  [`${API_PREFIX}/overview`]: {
    parameters: [
      {
        name: 'environmentId',
        in: 'query',
        required: false,
        schema: ID,
        description: "With `processId`: the stream also carries this process's events (a page's one connection).",
      },
      {
        name: 'processId',
        in: 'query',
        required: false,
        schema: ID,
        description: 'With `environmentId`: the process whose events the stream also carries.',
      },
      {
        name: 'after',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 0 },
        description: "Resume the process's events after this seq (wins over Last-Event-ID).",
      },
    ],
    get: {
      operationId: 'streamOverview',
      tags: ['streams'],
      summary: "Live overview: every environment with its processes (and, selected, one process's events)",
      description: OVERVIEW_DESCRIPTION,
      responses: {
        '200': eventStream(
          "An event stream of `Overview` snapshots (and the selected process's events); each event is one branch of `itemSchema` (OpenAPI 3.2)",
          OVERVIEW_EVENTS,
        ),
        ...problems(400, 401, 403, 429, 503),
      },
    },
  },
};
