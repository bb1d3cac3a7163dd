/**
 * The operator API's limits, against a real host and a real codex executor: its request rate per token
 * (429 with Retry-After) is its own, apart from the executors' handshake budget, so an operator at the
 * limit never keeps an executor from re-dialling; event streams per token (429) and in all (503), each
 * with Retry-After, and given back when streams end.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { HostServer } from '../../../src/host/host-options';
import type { ApiClient, ApiResponse, EventStream } from './api-client';
import { paths, within } from './api-client';
import { b64, expectProblem, OPERATOR_TOKEN, SECOND_OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';

/** Resolves once environment `id` is in `state` (generation `generation`). */
const reached = (host: HostServer, id: string, state: string, generation = 1): Promise<unknown> =>
  within(firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === id && e.generation === generation && e.state === state)))), 30_000, `${id} ${state}`);

/** Opens an event stream that must be accepted. */
async function openStream(api: ApiClient, path: string): Promise<EventStream> {
  const opened = await api.events(path);
  if ('refused' in opened) throw new Error(`${path} refused: ${opened.refused.status} ${opened.refused.text}`);
  return opened.stream;
}

/** Opens an event stream that must be refused; returns the refusal. */
async function refusedStream(api: ApiClient, path: string): Promise<ApiResponse> {
  const opened = await api.events(path);
  if ('stream' in opened) {
    await opened.stream.close();
    throw new Error(`${path} was accepted`);
  }
  return opened.refused;
}

const retryAfterOf = (response: ApiResponse): number => Number(response.headers['retry-after']);

describe('operator API limits', () => {
  it("answers 429 with Retry-After over a token's request rate, and leaves the executors' handshake budget alone", async () => {
    const ENV = 'limits-rate';
    // The executor spends 2 handshakes joining (registration, upgrade) and at most 2 re-dialling; the
    // operator requests below would empty this bucket many times over if they drew on it.
    const setup = await startApiHost({
      environmentId: ENV,
      tokens: [OPERATOR_TOKEN, SECOND_OPERATOR_TOKEN],
      operator: { requestsPerSecond: 0.01, requestBurst: 5, unauthenticatedPerSecond: 1 },
      host: { maxHandshakesPerSecond: 0.01, handshakeBurst: 4 },
    });
    const problem = (response: ApiResponse, status: number, code: string) => expectProblem(response, status, code, setup.host.instanceId);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await setup.api.get(paths.environments)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const limited = await setup.api.post(paths.processes(ENV), { argv: ['true'] });
    problem(limited, 429, 'TOO_MANY_REQUESTS');
    expect(retryAfterOf(limited)).toBeGreaterThanOrEqual(1);
    // Without a token: the anonymous bucket (burst 2), then 429 too.
    const anonymous: number[] = [];
    for (let i = 0; i < 4; i += 1) anonymous.push((await setup.api.get(paths.environments, { token: null })).status);
    expect(anonymous).toEqual([401, 401, 429, 429]);
    // Another token has its own budget.
    expect((await setup.api.as(SECOND_OPERATOR_TOKEN).get(paths.environments)).status).toBe(200);

    // The executor's socket drops; it re-dials and is adopted again within its own budget.
    const disconnected = reached(setup.host, ENV, 'disconnected');
    expect(setup.host.dropSocket(ENV)).toBe(true);
    await disconnected;
    await reached(setup.host, ENV, 'connected');
    expect(setup.log.filter((line) => line.includes('(429'))).toEqual([]);
    const stillLimited = await setup.api.get(paths.environments);
    problem(stillLimited, 429, 'TOO_MANY_REQUESTS');
    expect(retryAfterOf(stillLimited)).toBeGreaterThanOrEqual(1);
  });

  it('answers 429 over the streams of one token and 503 over the streams in all, with Retry-After; ended streams give their places back', async () => {
    const ENV = 'limits-sse';
    const setup = await startApiHost({ environmentId: ENV, tokens: [OPERATOR_TOKEN, SECOND_OPERATOR_TOKEN], operator: { sse: { perToken: 2, total: 3 } } });
    const problem = (response: ApiResponse, status: number, code: string) => expectProblem(response, status, code, setup.host.instanceId);
    const a = setup.api;
    const b = setup.api.as(SECOND_OPERATOR_TOKEN);
    const cat = await startProcess(a, ENV, { argv: ['cat'], pipeStdin: true });
    const events = paths.events(ENV, cat.id);
    const streams = [await openStream(a, events), await openStream(a, events)];

    const perToken = await refusedStream(a, events);
    problem(perToken, 429, 'TOO_MANY_STREAMS');
    expect(retryAfterOf(perToken)).toBeGreaterThanOrEqual(1);
    problem(await refusedStream(a, paths.overview), 429, 'TOO_MANY_STREAMS');

    streams.push(await openStream(b, events));
    expect((await a.get(paths.host)).body).toMatchObject({ eventStreams: 3 });
    const total = await refusedStream(b, paths.overview);
    problem(total, 503, 'TOO_MANY_STREAMS');
    expect(retryAfterOf(total)).toBeGreaterThanOrEqual(1);

    // The process closes: its streams end, and their places are free again.
    expect((await a.post(paths.stdin(ENV, cat.id), { writeId: 'w', data: b64('bye\n') })).status).toBe(200);
    expect((await a.post(paths.stdinEnd(ENV, cat.id))).status).toBe(200);
    for (const stream of streams) {
      const ended = await stream.ended();
      expect(ended.map((e) => e.event)).toContain('closed');
    }
    expect((await a.get(paths.host)).body).toMatchObject({ eventStreams: 0 });
    const again = [await openStream(a, paths.overview), await openStream(a, paths.overview), await openStream(b, paths.overview)];
    for (const stream of again) await stream.close();
  });
});

