/**
 * The paths of the OpenAPI document (`../openapi`) that are about HTTP through an environment (`./routes-previews`):
 * the public ports of an environment, a port's sharing level, a signed preview link, and the fetch route; and the
 * schemas of their bodies (`PREVIEW_SCHEMAS`, which `../openapi-components` takes in). Every operation needs an
 * `operate` token, and answers 403 `HTTP_DISABLED` on a host without `--allow-http`. The previews themselves are
 * served on the preview listener (`--preview-port`), not by this API: a link's url leads there.
 */
import { API_PREFIX } from '../../../wire/operator-api';
import { FETCH_HEADERS_HEADER, FETCH_REDIRECTED_HEADER, FETCH_STATUS_HEADER, FETCH_URL_HEADER } from '../../../wire/http-api';
import type { Json } from '../openapi-builders';
import { json, obj, pathParams, problems, ref } from '../openapi-builders';
import { MAX_HTTP_BODY_BYTES } from './http-settings';

const PREVIEWS = `${API_PREFIX}/environments/{environmentId}/previews`;
const FETCH = `${API_PREFIX}/environments/{environmentId}/fetch`;
const TAGS = ['http'];

/** The `{port}` path parameter: a port of the environment. */
const PORT: Json = {
  name: 'port',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[1-9][0-9]{0,4}$' },
  description: 'A port in the environment, 1 to 65535 (else 400 `INVALID_ID`).',
};

const SHARING: Json = {
  enum: ['private', 'public'],
  description:
    '`private` (the default): tokens with `operate` for the environment, and preview links. `public`: anyone, rate-limited ' +
    '(every request takes a slot of the executor\'s request line); kept in the owner\'s memory, private again after a restart.',
};

const header = (description: string): Json => ({ description, required: true, schema: { type: 'string' } });

/** The headers of the fetch route's answer: the target's answer, beside the body that is the target's body. */
const FETCH_ANSWER_HEADERS: Record<string, Json> = {
  [FETCH_STATUS_HEADER]: header("The target's status (`200`, `404`, a `3xx` with `redirect: manual` …)."),
  [FETCH_HEADERS_HEADER]: header(
    "The target's headers, hop-by-hop ones dropped: base64url of a JSON array of `[name, value]` pairs, in order " +
      "(a `Set-Cookie` stays the target's: the browser never takes it for the host's).",
  ),
  [FETCH_URL_HEADER]: header('The url of the final answer, after the redirects followed (percent-encoded as `encodeURI` does).'),
  [FETCH_REDIRECTED_HEADER]: header('`true` when a redirect was followed, else `false`.'),
};

/** The schemas of the HTTP routes' bodies, by name (the document's `components.schemas` take them in). */
export const PREVIEW_SCHEMAS: Record<string, Json> = {
  PreviewLink: obj({
    environmentId: { type: 'string' },
    port: { type: 'integer', minimum: 1, maximum: 65_535 },
    pathUrl: {
      type: 'string',
      description:
        'The path form on the preview listener, `…/{environmentId}/{port}/?exec-rx-preview-link=…`: ' +
        'opened once, it answers 303 with a `__Host-` session cookie and drops the link from the url.',
    },
    hostUrl: {
      type: ['string', 'null'],
      description: 'The host-name form, `{port}-{environmentId}.DOMAIN` (`--preview-domain`); null without a preview domain, or for an environment id that is not a DNS label.',
    },
    expiresAt: { type: 'string', description: 'When the link, and the cookie it is exchanged for, stop opening anything (ISO-8601); 1 h after it was made.' },
  }),
  PreviewPort: obj({ port: { type: 'integer', minimum: 1, maximum: 65_535 }, sharing: SHARING }),
  PreviewList: obj({
    environmentId: { type: 'string' },
    previews: { type: 'array', items: ref('PreviewPort'), description: 'The ports an operator made public; every other port is private.' },
  }),
  SharingChange: obj({ sharing: SHARING }),
  FetchEnvelope: obj(
    {
      url: { type: 'string', description: 'http or https; 127.0.0.1 and ::1 of the executor, or what `--http-allow` names (else 403 `HTTP_TARGET_REFUSED`).' },
      method: { type: 'string', description: 'Default `GET`.' },
      headers: {
        type: 'array',
        items: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }], minItems: 2, maxItems: 2 },
        description: '`[name, value]` pairs, sent as they are (hop-by-hop ones dropped).',
      },
      bodyBase64: {
        type: 'string',
        contentEncoding: 'base64',
        description:
          `The request body; at most the host's \`--max-preview-body\` (default 10 MiB, at most ${MAX_HTTP_BODY_BYTES / 1024 / 1024} MiB), ` +
          'else 413 `HTTP_REQUEST_TOO_LARGE`.',
      },
      redirect: {
        enum: ['follow', 'manual', 'error'],
        description:
          '`follow` (default): the host follows at most 20 redirects, checking each hop; ' +
          '`manual`: the 3xx is the answer (its `Location` in `exec-rx-fetch-headers`); `error`: a redirect fails the request.',
      },
      timeoutMs: {
        type: 'integer',
        minimum: 1,
        description: "The bound on the whole exchange, head and body (the executor's `timeoutMs`, per hop); default `--preview-timeout` (60 s), at most 600 s.",
      },
    },
    ['url'],
  ),
};

/** One method of the route replicas forward previews to (no client calls it: 404 unless signed by a replica). */
function forwardedPreview(method: string): Json {
  return {
    operationId: `forwardedPreview${method[0]?.toUpperCase() ?? ''}${method.slice(1)}`,
    tags: TAGS,
    summary: 'Replicas only: a preview request another replica forwarded to the environment\'s owner',
    description:
      'A preview that reached a replica without the environment\'s executor is forwarded here, signed with the replica key (the query names the rest of its path, ' +
      'its form, its Host and scheme); the answer is the target\'s, streamed. Any call not signed by a replica is 404 `ROUTE_NOT_FOUND`.',
    parameters: [
      { name: 'rest', in: 'query', required: true, schema: { type: 'string' }, description: 'The path and query the app sees.' },
      { name: 'form', in: 'query', required: false, schema: { enum: ['path', 'host'] }, description: 'The form the preview was reached through.' },
      { name: 'host', in: 'query', required: false, schema: { type: 'string' }, description: 'The Host the browser sent.' },
      { name: 'proto', in: 'query', required: false, schema: { enum: ['http', 'https'] }, description: 'The scheme the browser used.' },
    ],
    responses: {
      '200': { description: "The target's answer, its status and headers as the target sent them (rewritten as a preview's are)" },
      ...problems(400, 401, 403, 404, 413, 429, 502, 503, 504),
    },
  };
}

/** The paths of HTTP through an environment, by path, in the document's order. */
export const PREVIEW_PATHS: Record<string, Record<string, Json>> = {
  [PREVIEWS]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'listPreviews',
      tags: TAGS,
      summary: "The environment's ports with a sharing level other than private (the public ones)",
      responses: { '200': json(ref('PreviewList'), 'The public ports'), ...problems(400, 401, 403, 404, 429) },
    },
  },
  [`${PREVIEWS}/{port}`]: {
    parameters: [...pathParams('environmentId'), PORT],
    put: {
      operationId: 'sharePreview',
      tags: TAGS,
      summary: "Set a port's sharing level (audited: `preview share`)",
      description: 'Kept by the environment\'s owner, in memory: after a restart, or a move to another replica, every port is private again.',
      requestBody: { required: true, content: { 'application/json': { schema: ref('SharingChange') } } },
      responses: { '200': json(ref('PreviewPort'), 'The port and its level'), ...problems(400, 401, 403, 404, 413, 415, 429, 503) },
    },
  },
  [`${PREVIEWS}/{port}/links`]: {
    parameters: [...pathParams('environmentId'), PORT],
    post: {
      operationId: 'createPreviewLink',
      tags: TAGS,
      summary: 'A signed link to one port of the environment, for a browser (audited: `preview link`)',
      description:
        'Signed with the replicas\' key (or a key the host made at start), scoped to this environment and port, good for 1 h, and only while the token that asked is accepted: ' +
        'revoking it ends the link, the cookies made from it and their open previews. 403 `HTTP_DISABLED` on a host without a preview listener (`--preview-port`).',
      responses: { '201': json(ref('PreviewLink'), 'The link'), ...problems(400, 401, 403, 404, 429) },
    },
  },
  [`${PREVIEWS}/{port}/request`]: {
    parameters: [...pathParams('environmentId'), PORT],
    ...Object.fromEntries(['get', 'put', 'post', 'delete', 'patch'].map((method) => [method, forwardedPreview(method)])),
  },
  [FETCH]: {
    parameters: pathParams('environmentId'),
    post: {
      operationId: 'fetchFromEnvironment',
      tags: TAGS,
      summary: 'An HTTP request made from inside the environment (audited: `fetch`); the answer is the target\'s body, streamed',
      description:
        "The executor makes the request (`http/request`, from its own network). The host checks the target against its allow list and follows redirects itself, hop by hop, " +
        "checking each. The target's status, headers, final url and whether it was redirected come in the `exec-rx-fetch-*` headers; the body streams with a bounded buffer " +
        '(8 MiB unread: the answer is cut). A target that sends no head within the bound is 504 `PREVIEW_TIMEOUT`; one that cannot be reached is 502 `PREVIEW_FAILED`.',
      requestBody: { required: true, content: { 'application/json': { schema: ref('FetchEnvelope') } } },
      responses: {
        '200': {
          description: "The target's answer: its body as it came (decompressed by the executor), whatever the target's status",
          headers: FETCH_ANSWER_HEADERS,
          content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
        },
        ...problems(400, 401, 403, 404, 413, 415, 429, 502, 503, 504),
      },
    },
  },
};
