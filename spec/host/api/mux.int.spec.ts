/**
 * The operator API for a one-connection page (issue 23), against a real host and a real codex executor:
 * `GET /host` says who the caller is; `GET /overview?environmentId=&processId=&after=` carries the
 * overview and one process's events on one stream, whose `closed` or `failed` ends only the process part
 * (from the host's history, and from the output log on a host with a data dir); a token limited to other
 * environments is refused 403; download tickets are single use, bound to their process, need no token,
 * and never reach an answer other than the one that made them, nor the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStream, SseEvent } from './api-client';
import { paths } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectProblem, expectStatus, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';
import type { Overview } from '../../../src/wire/operator-api';
import { API_PREFIX } from '../../../src/wire/operator-api';
import { PATH_ENV } from '../sse/sse-setup';

const VIEW_TOKEN = 'mux-spec-view-token-do-not-print';
const SCOPED_TOKEN = 'mux-spec-scoped-token-do-not-print';
const TOKENS = (env: string) => [
  { name: 'ops', secret: OPERATOR_TOKEN },
  { name: 'watcher', role: 'view', environments: [env], secret: VIEW_TOKEN },
  { name: 'elsewhere', environments: ['mux-other'], secret: SCOPED_TOKEN },
] as const;

const mux = (environmentId: string, processId: string, after?: number): string =>
  `${paths.overview}?environmentId=${environmentId}&processId=${processId}${after === undefined ? '' : `&after=${after}`}`;

async function opened(setup: ApiHost, path: string, token: string = OPERATOR_TOKEN, headers: Record<string, string> = {}): Promise<EventStream> {
  const answer = await setup.api.as(token).events(path, { headers });
  if (!('stream' in answer)) throw new Error(`${path} answered ${answer.refused.status}: ${answer.refused.text}`);
  return answer.stream;
}

const overviewOf = (event: SseEvent): Overview => JSON.parse(event.data) as Overview;
const lists = (event: SseEvent, processId: string): boolean => event.event === 'overview' && overviewOf(event).environments.some((e) => e.processes.some((p) => p.id === processId));
const processEvents = (stream: EventStream): SseEvent[] => stream.events.filter((e) => e.event !== 'overview');
const seqs = (events: readonly SseEvent[]): number[] => events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
const text = (events: readonly SseEvent[]): string =>
  events
    .filter((e) => e.event === 'output')
    .map((e) => Buffer.from((JSON.parse(e.data) as { chunk: string }).chunk, 'base64').toString('utf8'))
    .join('');

/** Drives a `cat` through the API: writes `lines`, ends stdin; returns its id. */
async function catProcess(setup: ApiHost): Promise<string> {
  const cat = await startProcess(setup.api, setup.environmentId, { argv: ['/bin/cat'], cwd: '/tmp', env: PATH_ENV, pipeStdin: true });
  return cat.id;
}

async function feed(setup: ApiHost, processId: string, lines: readonly string[]): Promise<void> {
  for (const [i, line] of lines.entries()) expectStatus(await setup.api.post(paths.stdin(setup.environmentId, processId), { writeId: `w${i}`, data: b64(line) }), 200);
  expectStatus(await setup.api.post(paths.stdinEnd(setup.environmentId, processId)), 200);
}

/** The process part closed, then a new process shows in an overview on the same (still open) stream. */
async function overviewGoesOn(setup: ApiHost, stream: EventStream): Promise<void> {
  const next = await startProcess(setup.api, setup.environmentId, { argv: ['/bin/true'], cwd: '/tmp', env: PATH_ENV });
  await stream.next((e) => lists(e, next.id));
}

function muxSpecs(what: string, start: () => Promise<ApiHost>): void {
  describe(`the multiplexed overview (${what})`, () => {
    let setup: ApiHost;
    beforeAll(async () => {
      setup = await start();
    });

    it('carries the overview and the process events on one stream; closed ends only the process part', async () => {
      const id = await catProcess(setup);
      const stream = await opened(setup, mux(setup.environmentId, id));
      await stream.next((e) => lists(e, id));
      await feed(setup, id, ['one\n', 'two\n']);
      await stream.next((e) => e.event === 'closed');
      const events = processEvents(stream);
      expect(events.map((e) => e.event).filter((e) => e !== 'output')).toEqual(['exited', 'closed']);
      expect(seqs(events)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
      expect(text(events)).toBe('one\ntwo\n');
      await overviewGoesOn(setup, stream);
      // Nothing of the process came after its close.
      expect(processEvents(stream)).toHaveLength(events.length);
      await stream.close();

      // Resumed after a seq (?after= or Last-Event-ID): only what follows it.
      const last = seqs(events).at(-1) ?? 0;
      for (const resumed of [await opened(setup, mux(setup.environmentId, id, last - 1)), await opened(setup, mux(setup.environmentId, id), OPERATOR_TOKEN, { 'last-event-id': String(last - 1) })]) {
        await resumed.next((e) => e.event === 'closed');
        expect(seqs(processEvents(resumed))).toEqual([last]);
        await resumed.close();
      }
    });

    it('says a process that is not there with a failed frame, and the overview goes on', async () => {
      const stream = await opened(setup, mux(setup.environmentId, 'no-such-process'));
      const failed = await stream.next((e) => e.event === 'failed');
      expect(JSON.parse(failed.data)).toMatchObject({ code: 'PROCESS_NOT_FOUND' });
      await overviewGoesOn(setup, stream);
      await stream.close();
    });

    it('refuses a token limited to other environments (403) and a half selection (400)', async () => {
      const id = await catProcess(setup);
      const refused = await setup.api.as(SCOPED_TOKEN).events(mux(setup.environmentId, id));
      if (!('refused' in refused)) throw new Error('the scoped token was let through');
      expectProblem(refused.refused, 403, 'FORBIDDEN_ENVIRONMENT', setup.host.instanceId);
      const half = await setup.api.events(`${paths.overview}?environmentId=${setup.environmentId}`);
      if (!('refused' in half)) throw new Error('a half selection was let through');
      expectProblem(half.refused, 400, 'INVALID_REQUEST', setup.host.instanceId);
      // The view token of this environment follows it.
      const view = await opened(setup, mux(setup.environmentId, id), VIEW_TOKEN);
      await feed(setup, id, ['seen\n']);
      await view.next((e) => e.event === 'closed');
      expect(text(view.events)).toBe('seen\n');
      await view.close();
    });
  });
}

describe('operator API for a one-connection page', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-mux-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  describe('GET /host', () => {
    it('says who the caller is: name, role and environments (null: every one), never the token', async () => {
      const setup = await startApiHost({ environmentId: 'mux-host', tokens: TOKENS('mux-host') });
      expect(expectStatus(await setup.api.get(paths.host), 200)).toMatchObject({ hostInstance: setup.host.instanceId, caller: { name: 'ops', role: 'operate', environments: null } });
      const view = await setup.api.as(VIEW_TOKEN).get(paths.host);
      expect(expectStatus(view, 200)).toMatchObject({ caller: { name: 'watcher', role: 'view', environments: ['mux-host'] } });
      expect(view.text).not.toContain(VIEW_TOKEN);
      expectProblem(await setup.api.as(null).get(paths.host), 401, 'UNAUTHORIZED', setup.host.instanceId);
    });
  });

  muxSpecs('from the history', () => startApiHost({ environmentId: 'mux-memory', tokens: TOKENS('mux-memory') }));
  muxSpecs('from the output log', () => startApiHost({ environmentId: 'mux-log', tokens: TOKENS('mux-log'), host: { outputLog: { dataDir: join(dataDir, 'mux') } } }));

  describe('download tickets', () => {
    let setup: ApiHost;
    const tickets: string[] = [];
    beforeAll(async () => {
      setup = await startApiHost({ environmentId: 'mux-tickets', tokens: TOKENS('mux-tickets'), host: { outputLog: { dataDir: join(dataDir, 'tickets') } } });
    });
    afterAll(() => {
      const logged = setup.log.join('\n');
      expect(tickets.length).toBeGreaterThan(0);
      for (const ticket of tickets) expect(logged).not.toContain(ticket);
      for (const token of [OPERATOR_TOKEN, VIEW_TOKEN]) expect(logged).not.toContain(token);
    });

    async function ticketFor(processId: string, token = VIEW_TOKEN): Promise<string> {
      const answer = await setup.api.as(token).post(`${paths.process(setup.environmentId, processId)}/log/tickets`);
      const body = expectStatus(answer, 201) as { url: string; expiresAt: string };
      const match = /[?&]ticket=([A-Za-z0-9_-]+)$/.exec(body.url);
      expect(body.url.startsWith(`${API_PREFIX}/environments/mux-tickets/processes/${processId}/log?ticket=`)).toBe(true);
      const ttl = Date.parse(body.expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      if (match?.[1] === undefined) throw new Error(`no ticket in ${body.url}`);
      expect(match[1]).toHaveLength(43);
      expect(body.url).not.toContain(token);
      tickets.push(match[1]);
      return body.url;
    }

    it('gives a view token a single-use url that downloads the log without a token, as an attachment', async () => {
      const id = await catProcess(setup);
      const stream = await opened(setup, `${paths.events(setup.environmentId, id)}`);
      await feed(setup, id, ['downloaded\n']);
      await stream.ended();
      const url = await ticketFor(id);
      const download = await setup.api.as(null).get(url);
      expect({ status: download.status, text: download.text, disposition: download.headers['content-disposition'] }).toEqual({ status: 200, text: 'downloaded\n', disposition: `attachment; filename="${id}.log"` });
      expectProblem(await setup.api.as(null).get(url), 401, 'UNAUTHORIZED', setup.host.instanceId);
      // With ?stream= too; an operate token may ask as well.
      const stdout = await setup.api.as(null).get(`${await ticketFor(id, OPERATOR_TOKEN)}&stream=stdout`);
      expect({ status: stdout.status, text: stdout.text }).toEqual({ status: 200, text: 'downloaded\n' });
    });

    it('answers 401 for an unknown ticket, one of another process (used up), and on any other route', async () => {
      const first = await catProcess(setup);
      const second = await catProcess(setup);
      await feed(setup, first, ['a\n']);
      await feed(setup, second, ['b\n']);
      const unauthorized = async (path: string): Promise<void> => void expectProblem(await setup.api.as(null).get(path), 401, 'UNAUTHORIZED', setup.host.instanceId);
      await unauthorized(`${paths.process(setup.environmentId, first)}/log?ticket=${'A'.repeat(43)}`);
      const url = await ticketFor(first);
      await unauthorized(url.replace(first, second));
      await unauthorized(url);
      const other = await ticketFor(first);
      const ticket = other.slice(other.indexOf('?'));
      await unauthorized(`${paths.events(setup.environmentId, first)}${ticket}`);
      await unauthorized(`${paths.host}${ticket}`);
      // A POST with a ticket is not a download.
      expectProblem(await setup.api.as(null).post(`${paths.process(setup.environmentId, first)}/log/tickets${ticket}`), 401, 'UNAUTHORIZED', setup.host.instanceId);
      // A HEAD does not take a ticket (nor use it up).
      expect((await setup.api.as(null).request('HEAD', other)).status).toBe(401);
      // The ticket tried elsewhere was not used up: it still downloads its own log.
      expect((await setup.api.as(null).get(other)).status).toBe(200);
      expectProblem(await setup.api.post(`${paths.process(setup.environmentId, 'no-such-process')}/log/tickets`), 404, 'PROCESS_NOT_FOUND', setup.host.instanceId);
    });
  });
});
