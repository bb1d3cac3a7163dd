/**
 * The paths of the OpenAPI document (`../openapi`) that are about an environment's files (`./routes-files`):
 * the content (GET, HEAD, PUT) and its download ticket, metadata, entries, find, the change stream,
 * directories, remove, copy and move. Every operation needs an `operate` token.
 */
import type { Json } from '../openapi-builders';
import { json, pathParams, problems, ref } from '../openapi-builders';
import { eventStream } from '../openapi-event-streams';
import { FILES } from './routes-files';

/** The `path` query parameter every file route takes (`what` says what it names). */
const PATH = (what: string): Json => ({
  name: 'path',
  in: 'query',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 4096 },
  description: `${what}: an absolute native path of the executor (\`/…\`, or \`C:\\…\` on Windows); no NUL, no \`..\` segment, at most 4096 bytes (else 400 \`INVALID_PATH\`).`,
});

const BYTES = { type: 'string', contentMediaType: 'application/octet-stream' } as const;
const header = (description: string, required = true): Json => ({ description, required, schema: { type: 'string' } });

/** The headers of a download's answer. */
const DOWNLOAD_HEADERS: Record<string, Json> = {
  ETag: header('Weak: `W/"<size>-<mtimeMs>"`.'),
  'Content-Disposition': header('`attachment` (or `inline` for text/plain and png/jpeg/gif/webp with `?disposition=inline`), with `filename*`.'),
  'X-Content-Type-Options': header('`nosniff`.'),
  'Content-Security-Policy': header("`sandbox; default-src 'none'`."),
  'Accept-Ranges': header('`bytes`.'),
};

const CONTENT_GET_PARAMETERS: readonly Json[] = [
  PATH('The file'),
  { name: 'disposition', in: 'query', required: false, schema: { enum: ['attachment', 'inline'] }, description: '`inline` is honoured for text/plain and raster images only.' },
  {
    name: 'ticket',
    in: 'query',
    required: false,
    schema: { type: 'string' },
    description: 'A download ticket from `POST …/files/content/tickets` for this very file, instead of the token: good once, for 60 s.',
  },
  {
    name: 'Range',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'One range (`bytes=a-b`, `bytes=a-`, `bytes=-n`); several or malformed ones are ignored (200).',
  },
  {
    name: 'If-Range',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: 'An HTTP date: the Range applies only when it is the Last-Modified (an entity tag never matches: the tags are weak).',
  },
  { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag a cache holds: 304 while it is current.' },
];

const GET_CONTENT: Json = {
  operationId: 'downloadFile',
  tags: ['files'],
  summary: "A file's bytes, streamed (Range, If-Range, ETag)",
  description:
    'Streamed from `fs/open` and pipelined `fs/readBlock`s at the client\'s pace. The file\'s metadata is read again before the last block: ' +
    'if its size or mtime changed the answer is cut (a short transfer), never passed as whole. 503 `FILE_BUSY` past the per-environment cap of open transfers.',
  parameters: CONTENT_GET_PARAMETERS,
  security: [{ operatorToken: [] }, {}],
  responses: {
    '200': {
      description: "The whole file (Content-Type by the name's extension, `application/octet-stream` otherwise)",
      headers: DOWNLOAD_HEADERS,
      content: { 'application/octet-stream': { schema: BYTES } },
    },
    '206': { description: 'The range asked for (`Content-Range`)', headers: DOWNLOAD_HEADERS, content: { 'application/octet-stream': { schema: BYTES } } },
    '304': { description: 'Not modified (If-None-Match)' },
    ...problems(400, 401, 403, 404, 409, 416, 429, 503, 507),
  },
};

const HEAD_CONTENT: Json = {
  operationId: 'headFile',
  tags: ['files'],
  summary: "A file's download headers (size, ETag, Last-Modified) from its metadata alone: the file is not opened",
  parameters: CONTENT_GET_PARAMETERS,
  responses: {
    '200': { description: 'The headers a GET would send', headers: DOWNLOAD_HEADERS },
    '206': { description: 'The headers of the range' },
    '304': { description: 'Not modified' },
    '416': { description: 'The range lies past the end' },
    ...problems(400, 401, 403, 404, 409, 429, 503),
  },
};

const PUT_CONTENT: Json = {
  operationId: 'uploadFile',
  tags: ['files'],
  summary: "Write a file's bytes (the raw body, streamed), created or replaced whole",
  description:
    'Written to a temp sibling `.<name>.exec-rx-upload-<random>` at the pace of the body, then moved into place (`mv -f` on POSIX: atomic; ' +
    'the new file has the temp file\'s mode: an execute bit is not kept). A Content-Length over the host\'s limit is 413 before reading. ' +
    '`If-None-Match: *` creates only, `If-Match` replaces only that version (412); the executor has no compare-and-swap: a change between the check and the move is not seen. ' +
    'A connection to the executor lost mid-upload is 503 `UPLOAD_INTERRUPTED` (send it again: uploads do not resume).',
  parameters: [
    PATH('The file'),
    { name: 'If-None-Match', in: 'header', required: false, schema: { const: '*' }, description: 'Only if the file does not exist.' },
    { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'Only if the file is this version (its ETag).' },
  ],
  // The bytes as they are, whatever their media type: no schema (OpenAPI 3.1+'s way to say binary), so a
  // generated client (openapi-typescript) takes any body instead of a string.
  requestBody: { required: true, description: 'The file\'s bytes, any Content-Type.', content: { 'application/octet-stream': {}, '*/*': {} } },
  responses: {
    '200': { ...(json(ref('FileEntry'), 'Replaced') as Record<string, Json>), headers: { ETag: header('The new version.') } },
    '201': { ...(json(ref('FileEntry'), 'Created') as Record<string, Json>), headers: { ETag: header('The new version.') } },
    ...problems(400, 401, 403, 404, 409, 412, 413, 429, 503, 507),
  },
};

/** The paths of an environment's files, by path, in the document's order. */
export const FILE_PATHS: Record<string, Record<string, Json>> = {
  [FILES]: {
    parameters: pathParams('environmentId'),
    delete: {
      operationId: 'removeFile',
      tags: ['files'],
      summary: 'Remove a file, a symlink or a directory',
      description: 'A missing path is 404. A non-empty directory needs `recursive=true` (else 409 `DIRECTORY_NOT_EMPTY`); a tree is removed by `rm -rf` on POSIX.',
      parameters: [PATH('What to remove'), { name: 'recursive', in: 'query', required: false, schema: { enum: ['true', 'false'] } }],
      responses: { '204': { description: 'Removed' }, ...problems(400, 401, 403, 404, 409, 429, 502, 503, 504) },
    },
  },
  [`${FILES}/content`]: { parameters: pathParams('environmentId'), get: GET_CONTENT, head: HEAD_CONTENT, put: PUT_CONTENT },
  [`${FILES}/content/tickets`]: {
    parameters: pathParams('environmentId'),
    post: {
      operationId: 'createFileTicket',
      tags: ['files'],
      summary: 'A single-use download ticket for one file',
      description: 'A url of `…/files/content?path=…&ticket=…`: a GET of it needs no `Authorization` (a browser downloads by navigating); good once, for 60 s.',
      parameters: [PATH('The file')],
      responses: { '201': json(ref('LogTicket'), 'The ticket'), ...problems(400, 401, 403, 404, 409, 413, 429, 503) },
    },
  },
  [`${FILES}/metadata`]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'getFileMetadata',
      tags: ['files'],
      summary: "A path's type, size and mtime",
      parameters: [PATH('The path')],
      responses: { '200': json(ref('FileEntry'), 'The entry'), ...problems(400, 401, 403, 404, 429, 503) },
    },
  },
  [`${FILES}/entries`]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'listDirectory',
      tags: ['files'],
      summary: "A directory's entries, sorted by name, with size and mtime (at most 10000: `truncated`)",
      parameters: [PATH('The directory')],
      responses: { '200': json(ref('FileListing'), 'The entries'), ...problems(400, 401, 403, 404, 409, 429, 503) },
    },
  },
  [`${FILES}/find`]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'findFiles',
      tags: ['files'],
      summary: 'The paths under a directory, walked with limits and filtered by a glob',
      description:
        'Glob: `*` any run but `/`, `**` any run including `/`, `?` one character, `[a-z]`/`[!a-z]` a set; without `/` it matches names, with `/` paths relative to `path`. ' +
        'Hidden directories are not descended into, directory symlinks not followed.',
      parameters: [
        PATH('The directory'),
        { name: 'glob', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 1024 } },
        { name: 'maxDepth', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d{1,2}$' }, description: '0 to 64 (default 8); 0 lists the direct children.' },
        { name: 'maxEntries', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d{1,5}$' }, description: '1 to 10000 (default 1000).' },
      ],
      responses: { '200': json(ref('FindResult'), 'What matched'), ...problems(400, 401, 403, 404, 429, 503) },
    },
  },
  [`${FILES}/changes`]: {
    parameters: pathParams('environmentId'),
    get: {
      operationId: 'streamFileChanges',
      tags: ['files', 'streams'],
      summary: "Server-Sent Events of a directory's changes (polled every 2 s)",
      description:
        'Events `change` with a `FileChange`. The host polls the directory every 2 s (`fs/readDirectory` and one `fs/getMetadata` per entry, at most 1000 entries), ' +
        'once per directory whoever watches; the answer begins once the first poll took the directory as it is.',
      parameters: [PATH('The directory')],
      responses: {
        '200': eventStream('The change stream', [['change', 'FileChange', 'none']]),
        ...problems(400, 401, 403, 404, 409, 429, 503),
      },
    },
  },
  [`${FILES}/directories`]: {
    parameters: pathParams('environmentId'),
    post: {
      operationId: 'makeDirectory',
      tags: ['files'],
      summary: 'Make a directory (and its parents with `parents: true`, as `mkdir -p`: one already there is 200)',
      requestBody: { required: true, content: { 'application/json': { schema: ref('CreateDirectoryRequest') } } },
      responses: {
        '200': json(ref('FileEntry'), 'Already there (with `parents`)'),
        '201': json(ref('FileEntry'), 'Made'),
        ...problems(400, 401, 403, 404, 409, 413, 415, 429, 503, 507),
      },
    },
  },
  [`${FILES}/copy`]: {
    parameters: pathParams('environmentId'),
    post: {
      operationId: 'copyFile',
      tags: ['files'],
      summary: 'Copy a file or a directory (`cp -a` on POSIX, `fs/copy` on Windows)',
      requestBody: { required: true, content: { 'application/json': { schema: ref('TransferRequest') } } },
      responses: { '201': json(ref('FileEntry'), 'The destination'), ...problems(400, 401, 403, 404, 409, 413, 415, 429, 502, 503, 504, 507) },
    },
  },
  [`${FILES}/move`]: {
    parameters: pathParams('environmentId'),
    post: {
      operationId: 'moveFile',
      tags: ['files'],
      summary: 'Move a file or a directory (`mv -f` on POSIX, `fs/copy` + `fs/remove` on Windows)',
      requestBody: { required: true, content: { 'application/json': { schema: ref('TransferRequest') } } },
      responses: { '201': json(ref('FileEntry'), 'The destination'), ...problems(400, 401, 403, 404, 409, 413, 415, 429, 502, 503, 504, 507) },
    },
  },
};
