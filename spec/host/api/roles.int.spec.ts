/**
 * Token roles and environments, against a real host and a real codex executor: a `view` token reads and
 * follows but may not start or release (403 `FORBIDDEN_ROLE`); a token limited to some environments sees
 * only those and is refused every other (403 `FORBIDDEN_ENVIRONMENT`, whether it exists or not); a reload
 * that revokes a token ends its event streams and its requests get 401, while keyed starts, scoped by the
 * token's name, still replay after a reload; tokens never reach an answer or the log.
 */
import type { ApiResponse } from './api-client';
import { paths } from './api-client';
import type { ApiHost, ProblemBody } from './api-host';
import { expectProblem, expectStatus, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { Overview } from '../../../src/wire/operator-api';

const ENV = 'roles-1';
const VIEW_TOKEN = 'roles-spec-view-token-do-not-print';
const SCOPED_TOKEN = 'roles-spec-scoped-token-do-not-print';
const MINE_TOKEN = 'roles-spec-mine-token-do-not-print';
const CI_TOKEN = 'roles-spec-ci-token-do-not-print';
const NEW_TOKEN = 'roles-spec-new-token-do-not-print';
const SECRETS = [OPERATOR_TOKEN, VIEW_TOKEN, SCOPED_TOKEN, MINE_TOKEN, CI_TOKEN, NEW_TOKEN];

const TOKENS = [
  { name: 'ops', secret: OPERATOR_TOKEN },
  { name: 'watcher', role: 'view', secret: VIEW_TOKEN },
  { name: 'elsewhere', environments: ['roles-other'], secret: SCOPED_TOKEN },
  { name: 'mine', role: 'view', environments: [ENV, 'roles-other'], secret: MINE_TOKEN },
  { name: 'ci', secret: CI_TOKEN },
] as const;

describe('operator API: token roles and environments', () => {
  let setup: ApiHost;
  const answers: ApiResponse[] = [];
  const problem = (response: ApiResponse, status: number, code: string): ProblemBody => {
    answers.push(response);
    return expectProblem(response, status, code, setup.host.instanceId);
  };

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV, tokens: TOKENS });
  });

  afterAll(() => {
    const seen = [...answers.map((a) => a.text), ...setup.log].join('\n');
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
  });

  it('lets a view token read and follow, and refuses it every change with 403 FORBIDDEN_ROLE', async () => {
    const view = setup.api.as(VIEW_TOKEN);
    const echo = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'echo seen'] });
    expect((await view.get(paths.environments)).status).toBe(200);
    expect((await view.get(paths.process(ENV, echo.id))).status).toBe(200);
    expect((await view.request('HEAD', paths.processes(ENV))).status).toBe(200);
    expect(await finished(view, ENV, echo.id)).toMatchObject({ stdout: 'seen\n', exitCode: 0 });
    // A wait only reads: a view token may wait for an exit.
    expect(await view.post(`${paths.process(ENV, echo.id)}/wait`)).toMatchObject({ status: 200, body: { exitCode: 0 } });
    const refused = problem(await view.post(paths.processes(ENV), { argv: ['true'] }), 403, 'FORBIDDEN_ROLE');
    expect(refused.detail).toBe(
      'token watcher has the view role: it may only read, follow, wait and download output (GET, HEAD, POST …/wait, POST …/log/tickets); the file routes need operate, GET too',
    );
    problem(await view.delete(paths.process(ENV, echo.id)), 403, 'FORBIDDEN_ROLE');
    problem(await view.post(paths.stdinEnd(ENV, echo.id)), 403, 'FORBIDDEN_ROLE');
    // Unknown routes and methods are answered as they are for any token.
    problem(await view.request('PUT', paths.host), 405, 'METHOD_NOT_ALLOWED');
    expect((await listIds(setup, OPERATOR_TOKEN)).includes(echo.id)).toBe(true);
  });

  it('shows a token limited to some environments only those, and refuses it any other with 403 FORBIDDEN_ENVIRONMENT', async () => {
    const scoped = setup.api.as(SCOPED_TOKEN);
    expect((expectStatus(await scoped.get(paths.environments), 200) as { environments: { id: string }[] }).environments).toEqual([]);
    expect(expectStatus(await scoped.get(paths.host), 200)).toMatchObject({ environments: 0 });
    for (const path of [paths.environment(ENV), paths.processes(ENV), paths.environment('roles-other'), paths.environment('no-such-env')]) {
      const refused = problem(await scoped.get(path), path.includes('roles-other') ? 404 : 403, path.includes('roles-other') ? 'ENVIRONMENT_NOT_FOUND' : 'FORBIDDEN_ENVIRONMENT');
      if (refused.status === 403) expect(refused.detail).toMatch(/^token elsewhere may not touch environment /);
    }
    problem(await scoped.post(paths.processes(ENV), { argv: ['true'] }), 403, 'FORBIDDEN_ENVIRONMENT');
    const overview = await scoped.events(paths.overview);
    if (!('stream' in overview)) throw new Error(`overview refused: ${overview.refused.text}`);
    const first = JSON.parse((await overview.stream.next((e) => e.event === 'overview')).data) as Overview;
    expect(first.environments).toEqual([]);
    await overview.stream.close();

    const mine = setup.api.as(MINE_TOKEN);
    expect((expectStatus(await mine.get(paths.environments), 200) as { environments: { id: string }[] }).environments.map((e) => e.id)).toEqual([ENV]);
    const mineOverview = await mine.events(paths.overview);
    if (!('stream' in mineOverview)) throw new Error(`overview refused: ${mineOverview.refused.text}`);
    const seen = JSON.parse((await mineOverview.stream.next((e) => e.event === 'overview')).data) as Overview;
    expect(seen.environments.map((e) => e.id)).toEqual([ENV]);
    await mineOverview.stream.close();
    problem(await mine.post(paths.processes(ENV), { argv: ['true'] }), 403, 'FORBIDDEN_ROLE');
    // A view token limited to environments: the environment is checked first.
    problem(await mine.post(paths.processes('no-such-env'), { argv: ['true'] }), 403, 'FORBIDDEN_ENVIRONMENT');
  });

  it('replays a keyed start after a reload: keys are scoped by the token name, not its position', async () => {
    const ci = setup.api.as(CI_TOKEN);
    const headers = { headers: { 'idempotency-key': 'roles-start-1' } };
    const body = { argv: ['sleep', '30'] };
    const first = await ci.post(paths.processes(ENV), body, headers);
    expect(first.status).toBe(201);
    // Another order, another token first: positions shift, names do not.
    setup.tokens.replaceWith(new OperatorTokens([{ name: 'new', secret: NEW_TOKEN }, ...TOKENS.slice().reverse()]));
    const again = await ci.post(paths.processes(ENV), body, headers);
    expect({ status: again.status, replayed: again.headers['idempotent-replayed'], id: (again.body as { id: string }).id }).toEqual({ status: 200, replayed: 'true', id: (first.body as { id: string }).id });
    // The same key under another name is another start.
    const other = await setup.api.as(NEW_TOKEN).post(paths.processes(ENV), body, headers);
    expect(other.status).toBe(201);
    for (const id of [(first.body as { id: string }).id, (other.body as { id: string }).id]) expect((await setup.api.post(paths.terminate(ENV, id))).status).toBe(200);
  });

  it('ends the event streams of a token a reload revokes, and refuses its requests with 401; other streams stay', async () => {
    const view = setup.api.as(VIEW_TOKEN);
    const revokedStream = await view.events(paths.overview);
    const keptStream = await setup.api.events(paths.overview);
    if (!('stream' in revokedStream) || !('stream' in keptStream)) throw new Error('overview refused');
    await revokedStream.stream.next((e) => e.event === 'overview');
    await keptStream.stream.next((e) => e.event === 'overview');
    // The reload SIGHUP does: watcher is gone, ops stays as it was.
    const revoked = setup.tokens.replaceWith(new OperatorTokens(TOKENS.filter((token) => token.name !== 'watcher')));
    expect([...revoked]).toEqual(['new', 'watcher']);
    await revokedStream.stream.ended(5_000);
    expect(revokedStream.stream.raw()).toMatch(/: the operator token of this stream was revoked\n\n$/);
    problem(await view.get(paths.environments), 401, 'UNAUTHORIZED');
    expect(expectStatus(await setup.api.get(paths.host), 200)).toMatchObject({ eventStreams: 1 });
    await keptStream.stream.close();
  });
});

/** The ids of the processes of ENV as `token` lists them. */
async function listIds(setup: ApiHost, token: string): Promise<string[]> {
  return (expectStatus(await setup.api.as(token).get(paths.processes(ENV)), 200) as { processes: { id: string }[] }).processes.map((p) => p.id);
}
