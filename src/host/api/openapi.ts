/**
 * The OpenAPI 3.2 document of the operator API (3.2 for `itemSchema`, the SSE events; see `info.description`), served at
 * `/api/v1/openapi.json`. Written by hand beside the router (the router is not generated from it); every GET has its HEAD (the
 * same answer without the body). `spec/host/api/openapi.int.spec.ts` holds the two together: every documented method and path
 * answers, every other method answers 405, and every response body validates against its schema.
 *
 * This file assembles the document: its `info`, tags and security, the paths (`./openapi-host-paths`,
 * `./openapi-process-paths`, `./files/openapi-file-paths`, `./preview/openapi-preview-paths`, each GET given its HEAD here) and the components (`./openapi-components`).
 */
import type { Json } from './openapi-builders';
import { COMPONENTS } from './openapi-components';
import { HOST_PATHS } from './openapi-host-paths';
import { PROCESS_PATHS } from './openapi-process-paths';
import { FILE_PATHS } from './files/openapi-file-paths';
import { PREVIEW_PATHS } from './preview/openapi-preview-paths';

/** GET's operation, answered as HEAD (the same statuses and headers, no body): every GET path has one. */
function headOf(get: Json): Json {
  if (get === null || typeof get !== 'object' || Array.isArray(get)) return get;
  const operation = get as { readonly [key: string]: Json };
  const { summary, description: _description, operationId, ...rest } = operation;
  return {
    ...rest,
    ...(typeof operationId === 'string' ? { operationId: `${operationId}Head` } : {}),
    summary: `${typeof summary === 'string' ? summary : 'GET'}: the headers only (no body)`,
  };
}

/** `paths` with a `head` beside every `get` that has none. */
const withHead = (paths: Record<string, Record<string, Json>>): Record<string, Json> =>
  Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [path, item['get'] === undefined || item['head'] !== undefined ? item : { ...item, head: headOf(item['get']) }]),
  );

/** The document's `info.description`: what the API is, and what of it needs OpenAPI 3.2. */
const DESCRIPTION =
  'Environments (executors joined to this host) and the processes running on them; ' +
  'with a data dir, also the processes of before a host restart (their last known state, their output from the log). ' +
  'Every answer names the host instance in the `exec-rx-host-instance` header; ' +
  'errors are `application/problem+json` (RFC 9457) with the library error `code`. ' +
  'Process events are Server-Sent Events: `id:` is the seq, `Last-Event-ID` or `?after=SEQ` resumes with exactly what follows.\n\n' +
  'OpenAPI 3.2: the event streams (`streamOverview`, `streamProcessEvents`) describe each event with `itemSchema` ' +
  '(one `oneOf` branch per event name: `event` that name, `data` a JSON text whose parsed value `contentSchema` gives, ' +
  '`id` the seq of a sequenced event, `retry` on `restart`). ' +
  'A tool that knows only OpenAPI 3.0 or 3.1 (which have no `itemSchema`) sees those responses as `text/event-stream` text without a schema; ' +
  'the data of each event is a named schema under `components.schemas` (`OutputEventData`, `ExitedEventData`, `ClosedEventData`, ' +
  '`FailedEventData`, `TruncatedEventData`, `RestartEventData`, `Overview`) to use directly. ' +
  'Nothing else here needs 3.2: changing `openapi` to `3.1.0` and dropping `itemSchema` gives a valid 3.1 document.';

/** The document. */
export const OPENAPI_DOCUMENT: Json = {
  openapi: '3.2.0',
  info: { title: 'exec-rx host operator API', version: '1.0.0', description: DESCRIPTION },
  tags: [
    { name: 'host', description: 'The host itself: liveness, readiness, this document, and who the caller is.' },
    { name: 'environments', description: 'Executors joined to this host (each an environment, by id), and their connection state.' },
    {
      name: 'processes',
      description: 'Start, list, read, drive (stdin, interrupt, resize, terminate), wait for and release the processes of an environment; their output bytes from the log.',
    },
    {
      name: 'files',
      description:
        "An environment's files: read (streamed, ranges), write (streamed, moved into place), list, find, watch, make directories, remove, copy and move. " +
        'Every file route needs an `operate` token, GET too.',
    },
    {
      name: 'http',
      description:
        'HTTP through an environment (a host started with `--allow-http`): the sharing level of its ports, signed preview links (the previews are served on the ' +
        "preview listener, `--preview-port`), and requests made from inside the environment (`…/fetch`). Every route needs an `operate` token, GET too.",
    },
    { name: 'streams', description: "Server-Sent Events: the live overview of every environment, and one process's events (resumable by seq)." },
  ],
  security: [{ operatorToken: [] }],
  paths: withHead({ ...HOST_PATHS, ...PROCESS_PATHS, ...FILE_PATHS, ...PREVIEW_PATHS }),
  components: COMPONENTS,
};

/**
 * The document as the package ships it (`dist/openapi.json`) and the repository keeps it
 * (`docs/openapi.json`): JSON with two-space indents and a final newline. `npm run openapi` writes both.
 */
export const openApiText = (): string => `${JSON.stringify(OPENAPI_DOCUMENT, null, 2)}\n`;
