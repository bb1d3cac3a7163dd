/**
 * The OpenAPI document at /api/v1/openapi.json is true, against a real host and a real codex executor:
 * every documented method of every documented path answers a real request (neither 404 nor 405), with a
 * documented status and a body valid (JSON Schema 2020-12, ajv) against the schema documented for that
 * status and content type, carrying every header documented as required; every other method answers 405
 * with `Allow` listing exactly the documented ones; and the router serves nothing the document does not list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorApi } from '../../../src/host/api/operator-api';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { methodsOf as routeMethodsOf } from '../../../src/host/api/router';
import { probeRoutes } from '../../../src/host/api/routes-public';
import { HostedEnvironments } from '../../../src/host/hosted-environments';
import { MemoryLogStore } from '../../../src/store/memory/memory-log-store';
import { MemoryStateStore } from '../../../src/store/memory/memory-state-store';
import type { ProcessResource, ProcessSseEvent } from '../../../src/wire/operator-api';
import { API_PREFIX, HOST_INSTANCE_HEADER } from '../../../src/wire/operator-api';
import type { ApiResponse, EventStream, SseEvent } from './api-client';
import { paths } from './api-client';
import type { ApiHost } from './api-host';
import { b64, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';
import type { DocumentedOperation, OpenApiDocument } from './openapi-document';
import { DocumentValidator, methodsOf, operationsOf } from './openapi-document';

const ENV = 'openapi-1';
const PROCESSES = `${API_PREFIX}/environments/{environmentId}/processes`;
const PROCESS = `${PROCESSES}/{processId}`;
const FILES = `${API_PREFIX}/environments/{environmentId}/files`;
const PREVIEWS = `${API_PREFIX}/environments/{environmentId}/previews`;
const FETCH = `${API_PREFIX}/environments/{environmentId}/fetch`;
/** The built pages of a fixture: the API reference's files are in its `api-docs/`. */
const UI_FIXTURE = join(__dirname, 'ui-fixture');
const DOCS_ASSET = 'swagger-ui-bundle-FIXTURE2.js';

/** The schema of each event's data, by event name (every event the streams send: the itemSchema of each stream must have them). */
const EVENT_SCHEMAS: Readonly<Record<ProcessSseEvent | 'overview', string>> = {
  output: 'OutputEventData',
  exited: 'ExitedEventData',
  closed: 'ClosedEventData',
  failed: 'FailedEventData',
  truncated: 'TruncatedEventData',
  restart: 'RestartEventData',
  overview: 'Overview',
};

/** What one real request saw: a whole answer, or an event stream's head and the events read from it. */
interface Observed {
  readonly status: number;
  readonly headers: ApiResponse['headers'];
  readonly text: string;
  readonly body: unknown;
  readonly events?: readonly SseEvent[];
}

/** Reads an event stream with `read`, then closes it; a refusal is observed as it is. */
async function observeStream(setup: ApiHost, path: string, read: (stream: EventStream) => Promise<unknown>): Promise<Observed> {
  const opened = await setup.api.events(path);
  if ('refused' in opened) return opened.refused;
  try {
    await read(opened.stream);
    return { status: opened.stream.status, headers: opened.stream.headers, text: '', body: undefined, events: [...opened.stream.events] };
  } finally {
    await opened.stream.close();
  }
}

describe('the OpenAPI document is true', () => {
  let setup: ApiHost;
  let document: OpenApiDocument;
  let validator: DocumentValidator;
  let served: ApiResponse;
  const started: Record<'running' | 'interrupted' | 'terminated' | 'piped' | 'sized' | 'done' | 'released', ProcessResource | undefined> = {
    running: undefined,
    sized: undefined,
    interrupted: undefined,
    terminated: undefined,
    piped: undefined,
    done: undefined,
    released: undefined,
  };
  const idOf = (name: keyof typeof started): string => started[name]?.id ?? 'not-started';
  const fill = (template: string): string =>
    template.replace('{environmentId}', ENV).replace('{processId}', idOf('running')).replace('{asset}', DOCS_ASSET).replace('{port}', '3000');

  let dataDir: string;
  /** The directory the file routes' probes read and write. */
  let filesDir: string;

  beforeAll(async () => {
    // A data dir, so that the events are read from the output logs (`time`) and `/log` answers.
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-openapi-'));
    filesDir = mkdtempSync(join(tmpdir(), 'exec-rx-openapi-files-'));
    for (const name of ['doc.bin', 'to-move.txt', 'to-remove.txt']) writeFileSync(join(filesDir, name), name);
    // HTTP on, with a preview listener: the preview rows answer (a link needs the listener), and the fetch
    // route reaches the host's own API reference page from the executor (127.0.0.1, on the default allow list).
    setup = await startApiHost({ environmentId: ENV, host: { outputLog: { dataDir }, previewPort: 0 }, operator: { uiDir: UI_FIXTURE, http: { enabled: true } } });
    served = await setup.api.get(paths.openapi, { token: null });
    document = served.body as OpenApiDocument;
    validator = new DocumentValidator(document);
    const sleeper = { argv: ['sleep', '60'] };
    started.running = await startProcess(setup.api, ENV, sleeper);
    started.interrupted = await startProcess(setup.api, ENV, sleeper);
    started.terminated = await startProcess(setup.api, ENV, sleeper);
    started.piped = await startProcess(setup.api, ENV, { argv: ['cat'], pipeStdin: true });
    started.sized = await startProcess(setup.api, ENV, { argv: ['sleep', '60'], tty: { rows: 24, cols: 80 } });
    started.done = await startProcess(setup.api, ENV, { argv: ['echo', 'done'] });
    started.released = await startProcess(setup.api, ENV, { argv: ['echo', 'released'] });
    await finished(setup.api, ENV, idOf('done'));
    await finished(setup.api, ENV, idOf('released'));
  });

  afterAll(async () => {
    await setup.host.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(filesDir, { recursive: true, force: true });
  });

  /** A real request for each documented operation, and the status it must get. */
  const probes = (): Record<string, { readonly status: number; readonly send: () => Promise<Observed> }> => {
    const api = setup.api;
    const table = routedProbes(api);
    // HEAD wherever GET answers: the same status, no body (an event stream's HEAD ends at once).
    const heads = Object.keys(table)
      .filter((key) => key.startsWith('GET ') && key !== `GET ${paths.openapi}` && !key.startsWith(`GET ${FILES}`))
      .map((key) => key.slice('GET '.length))
      .map((path) => [`HEAD ${path}`, { status: 200, send: () => api.request('HEAD', fill(path)) }] as const);
    // The route replicas forward previews to answers a client that is not a replica 404, as documented (the signed
    // forward itself: spec/cluster/preview-forwarding.int.spec.ts).
    const forwarded = Object.fromEntries(
      ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'].map((method) => [
        `${method} ${PREVIEWS}/{port}/request`,
        { status: 404, send: () => api.request(method, `${fill(PREVIEWS)}/3000/request?rest=%2F&form=path`) },
      ]),
    );
    return { ...table, ...Object.fromEntries(heads), ...fileProbes(api), ...forwarded };
  };

  /** The file routes' probes (each needs its `?path=`), HEAD included. */
  const fileProbes = (api: ApiHost['api']): Record<string, { readonly status: number; readonly send: () => Promise<Observed> }> => {
    const at = (sub: string, query: Record<string, string>): string => `${fill(FILES)}${sub}?${new URLSearchParams(query).toString()}`;
    const file = join(filesDir, 'doc.bin');
    const gets: Record<string, string> = {
      '/content': at('/content', { path: file }),
      '/metadata': at('/metadata', { path: file }),
      '/entries': at('/entries', { path: filesDir }),
      '/find': at('/find', { path: filesDir, glob: '*.txt' }),
      '/changes': at('/changes', { path: filesDir }),
    };
    const heads = Object.fromEntries(Object.entries(gets).map(([sub, url]) => [`HEAD ${FILES}${sub}`, { status: 200, send: () => api.request('HEAD', url) }]));
    return {
      ...heads,
      [`GET ${FILES}/content`]: { status: 200, send: () => api.get(gets['/content'] ?? '') },
      [`GET ${FILES}/metadata`]: { status: 200, send: () => api.get(gets['/metadata'] ?? '') },
      [`GET ${FILES}/entries`]: { status: 200, send: () => api.get(gets['/entries'] ?? '') },
      [`GET ${FILES}/find`]: { status: 200, send: () => api.get(gets['/find'] ?? '') },
      [`GET ${FILES}/changes`]: {
        status: 200,
        send: () =>
          observeStream(setup, gets['/changes'] ?? '', async (s) => {
            writeFileSync(join(filesDir, `changed-${Date.now()}.txt`), 'x');
            await s.next((e) => e.event === 'change');
          }),
      },
      [`PUT ${FILES}/content`]: { status: 201, send: () => api.request('PUT', at('/content', { path: join(filesDir, 'put.txt') }), { body: 'put' }) },
      [`POST ${FILES}/content/tickets`]: { status: 201, send: () => api.post(at('/content/tickets', { path: file })) },
      [`POST ${FILES}/directories`]: { status: 201, send: () => api.post(at('/directories', {}).replace(/\?$/, ''), { path: join(filesDir, 'made'), parents: false }) },
      [`POST ${FILES}/copy`]: { status: 201, send: () => api.post(at('/copy', {}).replace(/\?$/, ''), { source: file, destination: join(filesDir, 'copied.txt'), overwrite: false }) },
      [`POST ${FILES}/move`]: { status: 201, send: () => api.post(at('/move', {}).replace(/\?$/, ''), { source: join(filesDir, 'to-move.txt'), destination: join(filesDir, 'moved.txt') }) },
      [`DELETE ${FILES}`]: { status: 204, send: () => api.delete(at('', { path: join(filesDir, 'to-remove.txt') })) },
    };
  };

  const routedProbes = (api: ApiHost['api']): Record<string, { readonly status: number; readonly send: () => Promise<Observed> }> => {
    return {
      ['GET /healthz']: { status: 200, send: () => api.get('/healthz', { token: null }) },
      ['GET /readyz']: { status: 200, send: () => api.get('/readyz', { token: null }) },
      [`GET ${paths.openapi}`]: { status: 200, send: () => api.get(paths.openapi, { token: null }) },
      [`HEAD ${paths.openapi}`]: { status: 200, send: () => api.request('HEAD', paths.openapi, { token: null }) },
      [`GET ${API_PREFIX}/docs`]: { status: 200, send: () => api.get(`${API_PREFIX}/docs`, { token: null }) },
      [`GET ${API_PREFIX}/docs/{asset}`]: { status: 200, send: () => api.get(`${API_PREFIX}/docs/${DOCS_ASSET}`, { token: null }) },
      [`GET ${paths.host}`]: { status: 200, send: () => api.get(paths.host) },
      [`GET ${paths.environments}`]: { status: 200, send: () => api.get(paths.environments) },
      [`GET ${API_PREFIX}/environments/{environmentId}`]: { status: 200, send: () => api.get(paths.environment(ENV)) },
      [`GET ${paths.overview}`]: { status: 200, send: () => observeStream(setup, paths.overview, (s) => s.next((e) => e.event === 'overview')) },
      [`GET ${PROCESSES}`]: { status: 200, send: () => api.get(paths.processes(ENV)) },
      [`POST ${PROCESSES}`]: { status: 201, send: () => api.post(paths.processes(ENV), { argv: ['echo', 'openapi'], cwd: '/tmp', env: { A: 'b' }, tty: false, pipeStdin: false }) },
      [`GET ${PROCESS}`]: { status: 200, send: () => api.get(paths.process(ENV, idOf('running'))) },
      [`DELETE ${PROCESS}`]: { status: 204, send: () => api.delete(paths.process(ENV, idOf('released'))) },
      [`GET ${PROCESS}/log`]: { status: 200, send: () => api.get(`${paths.process(ENV, idOf('done'))}/log?stream=stdout,stderr&tail=5`) },
      [`GET ${PROCESS}/events`]: { status: 200, send: () => observeStream(setup, paths.events(ENV, idOf('done')), (s) => s.ended()) },
      [`POST ${PROCESS}/stdin`]: { status: 200, send: () => api.post(paths.stdin(ENV, idOf('piped')), { writeId: 'openapi-1', data: b64('written\n') }) },
      [`POST ${PROCESS}/stdin/end`]: { status: 200, send: () => api.post(paths.stdinEnd(ENV, idOf('piped'))) },
      [`POST ${PROCESS}/interrupt`]: { status: 200, send: () => api.post(paths.interrupt(ENV, idOf('interrupted'))) },
      [`POST ${PROCESS}/resize`]: { status: 200, send: () => api.post(`${paths.process(ENV, idOf('sized'))}/resize`, { rows: 40, cols: 100 }) },
      [`POST ${PROCESS}/log/tickets`]: { status: 201, send: () => api.post(`${paths.process(ENV, idOf('done'))}/log/tickets`) },
      [`POST ${PROCESS}/wait`]: { status: 200, send: () => api.post(`${paths.process(ENV, idOf('done'))}/wait`) },
      [`POST ${PROCESS}/terminate`]: { status: 200, send: () => api.post(paths.terminate(ENV, idOf('terminated'))) },
      [`GET ${PREVIEWS}`]: { status: 200, send: () => api.get(fill(PREVIEWS)) },
      [`PUT ${PREVIEWS}/{port}`]: { status: 200, send: () => api.request('PUT', `${fill(PREVIEWS)}/3000`, { json: { sharing: 'public' } }) },
      [`POST ${PREVIEWS}/{port}/links`]: { status: 201, send: () => api.post(`${fill(PREVIEWS)}/3000/links`) },
      // A page that is not JSON: the answer's body is bytes, which this client would parse if it were JSON.
      [`POST ${FETCH}`]: { status: 200, send: () => api.post(fill(FETCH), { url: `${setup.host.url}${API_PREFIX}/docs`, headers: [['accept', 'text/html']] }) },
    };
  };

  /** Everything wrong with what `operation` answered, by the document; `[]` when it is all as documented. */
  function check(operation: DocumentedOperation, observed: Observed): string[] {
    const errors: string[] = [];
    if (observed.headers[HOST_INSTANCE_HEADER] !== setup.host.instanceId) errors.push(`${HOST_INSTANCE_HEADER} is ${String(observed.headers[HOST_INSTANCE_HEADER])}`);
    const documented = validator.responseOf(operation, observed.status);
    if (documented === undefined) return [...errors, `status ${observed.status} is not documented (${observed.text.slice(0, 200)})`];
    for (const [name, header] of Object.entries(documented.response.headers ?? {})) {
      if (header.required === true && observed.headers[name.toLowerCase()] === undefined) errors.push(`no ${name} header, which the document requires`);
    }
    const content = documented.response.content;
    const type = (observed.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (content === undefined) return observed.text === '' ? errors : [...errors, 'a body where the document has none'];
    if (content[type] === undefined) return [...errors, `content type "${type}" is not documented (${Object.keys(content).join(', ')})`];
    if (operation.method === 'HEAD') return observed.text === '' ? errors : [...errors, 'a body in a HEAD answer'];
    if (type !== 'text/event-stream') return [...errors, ...validator.validateContent(documented.at, type, observed.body)];
    const events = observed.events ?? [];
    if (events.length === 0) errors.push('no event');
    for (const event of events) {
      // The event as OpenAPI 3.2 models it: its fields, `retry` a number.
      const item = { event: event.event, data: event.data, ...(event.id === undefined ? {} : { id: event.id }), ...(event.retry === undefined ? {} : { retry: Number(event.retry) }) };
      errors.push(...validator.validateEvent(documented.at, documented.response, item).map((error) => `event ${event.event}: ${error}`));
    }
    return errors;
  }

  it('is served without a token, as OpenAPI 3.2 JSON naming the host instance', () => {
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('application/json');
    expect(served.headers[HOST_INSTANCE_HEADER]).toBe(setup.host.instanceId);
    expect(document.openapi).toBe('3.2.0');
    expect(operationsOf(document).length).toBeGreaterThanOrEqual(15);
  });

  it('answers a real request on every documented method and path, with a documented status and a body valid against its schema', async () => {
    const table = probes();
    const outcomes: Record<string, { status: number; errors: string[] }> = {};
    const expected: Record<string, { status: number; errors: string[] }> = {};
    for (const operation of operationsOf(document)) {
      const key = `${operation.method} ${operation.path}`;
      const probe = table[key];
      expected[key] = { status: probe?.status ?? 0, errors: [] };
      if (probe === undefined) {
        outcomes[key] = { status: -1, errors: ['the spec has no real request for this documented operation'] };
        continue;
      }
      const observed = await probe.send();
      outcomes[key] = { status: observed.status, errors: check(operation, observed) };
    }
    expect(outcomes).toEqual(expected);
    // Every request the spec knows was documented (so the table above did run each).
    expect(Object.keys(table).sort()).toEqual(Object.keys(expected).sort());
  });

  it('answers every undocumented method with 405, Allow listing exactly the documented methods, as a valid problem', async () => {
    const outcomes: { path: string; method: string; status: number; allow: string[]; code: unknown; errors: string[] }[] = [];
    const expected: typeof outcomes = [];
    const notAllowed = { path: '', method: 'PUT', operation: { responses: { '405': { $ref: '#/components/responses/Problem405' } } } };
    for (const path of Object.keys(document.paths)) {
      const documented = methodsOf(document, path);
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !documented.includes(m))) {
        const answer = await setup.api.request(method, fill(path), { json: {} });
        const allow = String(answer.headers['allow'] ?? '')
          .split(/,\s*/)
          .filter((m) => m !== '')
          .sort();
        const errors = check({ ...notAllowed, path, method }, answer);
        outcomes.push({ path, method, status: answer.status, allow, code: (answer.body as { code?: unknown }).code, errors });
        expected.push({ path, method, status: 405, allow: documented, code: 'METHOD_NOT_ALLOWED', errors: [] });
      }
    }
    expect(outcomes).toEqual(expected);
    expect(outcomes.length).toBeGreaterThanOrEqual(30);
  });

  it('documents every route the router serves, with the same methods, and the data of every event the streams send', () => {
    const stores = { logs: new MemoryLogStore(), state: new MemoryStateStore() };
    const sessions = { rememberedAt: () => undefined, record: () => Promise.resolve() };
    const environments = new HostedEnvironments({ clientName: 'openapi-spec' }, () => undefined, { ...stores, sessions, owner: 'instance' });
    const api = new OperatorApi(environments, { tokens: new OperatorTokens([OPERATOR_TOKEN]) }, 'instance', stores);
    const probes = probeRoutes('instance', () => Promise.resolve(undefined)).map((route) => ({ path: route.path, methods: routeMethodsOf(route) }));
    const routed = Object.fromEntries([...probes, ...api.routes].map((route) => [route.path, [...route.methods].sort()]));
    const documented = Object.fromEntries(Object.keys(document.paths).map((path) => [path, methodsOf(document, path)]));
    expect(routed).toEqual(documented);
    const missing = Object.values(EVENT_SCHEMAS).filter((name) => document.components.schemas[name] === undefined);
    expect(missing).toEqual([]);
    // Each stream's itemSchema: one branch per event it sends, its data the event's named schema.
    const streams = { [`${PROCESS}/events`]: Object.keys(EVENT_SCHEMAS).filter((name) => name !== 'overview'), [paths.overview]: Object.keys(EVENT_SCHEMAS) };
    for (const [path, names] of Object.entries(streams)) {
      const operation = operationsOf(document).find((o) => o.path === path && o.method === 'GET');
      const documented = operation === undefined ? undefined : validator.responseOf(operation, 200);
      if (documented === undefined) throw new Error(`no 200 of GET ${path}`);
      const branches = (documented.response.content?.['text/event-stream']?.itemSchema?.oneOf ?? []) as readonly { properties: { data: { contentSchema: unknown } } }[];
      const byName = Object.fromEntries(validator.eventNames(documented.at, documented.response).map((name, i) => [name, branches[i]?.properties.data.contentSchema]));
      expect({ path, byName }).toEqual({ path, byName: Object.fromEntries(names.map((name) => [name, { $ref: `#/components/schemas/${(EVENT_SCHEMAS as Readonly<Record<string, string>>)[name] ?? ''}` }])) });
    }
  });

  it('kept the processes it drove consistent with their answers', async () => {
    const piped = await finished(setup.api, ENV, idOf('piped'));
    expect(piped).toMatchObject({ stdout: 'written\n', exitCode: 0 });
    expect((await finished(setup.api, ENV, idOf('interrupted'))).exitCode).toBe(130);
    expect((await finished(setup.api, ENV, idOf('terminated'))).exitCode).toBe(137);
    expect((await setup.api.get(paths.process(ENV, idOf('released')))).status).toBe(404);
  });
});
