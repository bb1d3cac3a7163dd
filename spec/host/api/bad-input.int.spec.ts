/**
 * Bad input to the operator API, against a real host and a real codex executor: each refusal is a
 * problem+json with a clear code and the host instance, and nothing is created or lost — after every
 * refused start the process list is unchanged, after every refused write the process's output is intact.
 */
import { paths } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectProblem, finished, listProcesses, startApiHost, startProcess } from './api-host';

const ENV = 'bad-input-1';
const MAX_BODY = 64 * 1024;

describe('operator API: bad input', () => {
  let setup: ApiHost;
  const problem = (response: Parameters<typeof expectProblem>[0], status: number, code: string) => expectProblem(response, status, code, setup.host.instanceId);
  /** The ids of the listed processes, sorted. */
  const listedIds = async (): Promise<string[]> => (await listProcesses(setup.api, ENV)).map((p) => p.id).sort();

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV, operator: { maxBodyBytes: MAX_BODY } });
    // Something listed already, so "unchanged" compares a real list.
    await finished(setup.api, ENV, (await startProcess(setup.api, ENV, { argv: ['true'] })).id);
  });

  it('refuses malformed JSON with 400 MALFORMED_JSON and starts nothing', async () => {
    const before = await listedIds();
    for (const body of ['{"argv": [', '{argv: ["ls"]}', '', '{"argv":["ls"]} trailing']) {
      const response = await setup.api.post(paths.processes(ENV), undefined, { body, headers: { 'content-type': 'application/json' } });
      expect(problem(response, 400, 'MALFORMED_JSON').detail).toBe('the body is not valid JSON');
    }
    expect(await listedIds()).toEqual(before);
  });

  it('refuses wrong types with 400 INVALID_REQUEST naming the path, and starts nothing', async () => {
    const before = await listedIds();
    const cases: [unknown, string][] = [
      [{ argv: 'ls' }, 'argv: expected Argv'],
      [{ argv: [] }, 'argv: expected Argv'],
      [{ argv: ['ls', ''] }, 'argv.1: expected NonEmptyString'],
      [{ argv: ['ls'], tty: 'yes' }, 'tty: expected (boolean | TtySize)'],
      [{ argv: ['ls'], tty: { rows: 0, cols: 80 } }, 'tty: expected (boolean | TtySize); tty.rows: expected Dimension'],
      [{ argv: ['ls'], env: { A: 1 } }, 'env.A: expected string'],
      [{ argv: ['ls'], cwd: 7 }, 'cwd: expected NonEmptyString'],
      [{ argv: ['ls'], pipeStdin: 'true' }, 'pipeStdin: expected boolean'],
      [{ cwd: '/tmp' }, 'argv: expected Argv'],
      [[{ argv: ['ls'] }], 'the body: expected StartProcessRequest'],
    ];
    const details = [];
    for (const [json] of cases) details.push(problem(await setup.api.post(paths.processes(ENV), json), 400, 'INVALID_REQUEST').detail);
    expect(details).toEqual(cases.map(([, detail]) => detail));
    const write = { writeId: 'w', data: b64('x') };
    const writes: [unknown, string][] = [
      [{ ...write, writeId: '' }, 'writeId: expected WriteId'],
      [{ ...write, data: 5 }, 'data: expected string'],
      [{ ...write, data: 'not base64!' }, 'data must be standard base64'],
      [{ data: write.data }, 'writeId: expected WriteId'],
    ];
    const id = before[0] ?? 'none';
    details.length = 0;
    for (const [json] of writes) details.push(problem(await setup.api.post(paths.stdin(ENV, id), json), 400, 'INVALID_REQUEST').detail);
    expect(details).toEqual(writes.map(([, detail]) => detail));
    expect(await listedIds()).toEqual(before);
  });

  it('refuses unknown fields (a misspelt one is not ignored) and env names that are empty or hold = or NUL, with 400 naming them, and starts nothing', async () => {
    const piped = await startProcess(setup.api, ENV, { argv: ['cat'], pipeStdin: true });
    const sized = await startProcess(setup.api, ENV, { argv: ['sleep', '30'], tty: { rows: 24, cols: 80 } });
    const before = await listedIds();
    const cases: [string, unknown, string][] = [
      [paths.processes(ENV), { argv: ['ls'], pipeStdn: true }, 'unknown field: pipeStdn'],
      [paths.processes(ENV), { argv: ['ls'], tty: { rows: 24, cols: 80, pixels: 1 } }, 'unknown field: tty.pixels'],
      [paths.processes(ENV), { argv: ['ls'], extra: 1, other: 2 }, 'unknown fields: extra, other'],
      [paths.processes(ENV), JSON.parse('{"argv":["ls"],"toString":1,"__proto__":{"pipeStdin":true}}'), 'unknown fields: toString, __proto__'],
      [paths.processes(ENV), { argv: ['ls'], env: { '': 'x' } }, 'env: expected Env (names not empty, no = or NUL)'],
      [paths.processes(ENV), { argv: ['ls'], env: { 'A=B': 'x' } }, 'env: expected Env (names not empty, no = or NUL)'],
      [paths.processes(ENV), { argv: ['ls'], env: { 'A\u0000': 'x' } }, 'env: expected Env (names not empty, no = or NUL)'],
      [paths.stdin(ENV, piped.id), { writeId: 'w-unknown', data: b64('x'), eof: true }, 'unknown field: eof'],
      [`${paths.process(ENV, sized.id)}/resize`, { rows: 10, cols: 10, x: 0 }, 'unknown field: x'],
    ];
    const details = [];
    for (const [path, json] of cases) details.push(problem(await setup.api.post(path, json), 400, 'INVALID_REQUEST').detail);
    expect(details).toEqual(cases.map(([, , detail]) => detail));
    // The same bodies without the stray field or name are good.
    expect((await setup.api.post(paths.processes(ENV), { argv: ['true'], env: { A_B: 'x' }, tty: { rows: 24, cols: 80 } })).status).toBe(201);
    expect((await listedIds()).length).toBe(before.length + 1);
    for (const process of [piped, sized]) await setup.api.post(paths.terminate(ENV, process.id));
  });

  it('never echoes the values it refused into the problem (a process env stays out of errors)', async () => {
    const secret = 'bad-input-env-value-do-not-echo';
    const bodies = [[{ argv: ['ls'], env: { TOKEN: secret } }], { argv: ['ls'], env: { TOKEN: secret, N: 5 } }, { argv: [secret, 5] }];
    for (const json of bodies) {
      const response = await setup.api.post(paths.processes(ENV), json);
      problem(response, 400, 'INVALID_REQUEST');
      expect(response.text).not.toContain(secret);
    }
  });

  it('answers a program or cwd that cannot start with 422 SPAWN_FAILED, with or without a pipe or a (sized) tty, and lists nothing', async () => {
    const before = await listedIds();
    const outcomes = [];
    for (const extra of [{}, { pipeStdin: true }, { tty: true }, { tty: { rows: 30, cols: 90 } }]) {
      const missing = await setup.api.post(paths.processes(ENV), { argv: ['no-such-program-for-bad-input'], ...extra });
      outcomes.push({ extra, status: missing.status, code: (missing.body as { code?: string }).code });
      problem(missing, 422, 'SPAWN_FAILED');
    }
    for (const extra of [{}, { pipeStdin: true }, { tty: true }, { tty: { rows: 30, cols: 90 } }]) problem(await setup.api.post(paths.processes(ENV), { argv: ['true'], cwd: '/no/such/dir', ...extra }), 422, 'SPAWN_FAILED');
    expect(outcomes.map((o) => o.status)).toEqual([422, 422, 422, 422]);
    expect(await listedIds()).toEqual(before);
  });

  it('answers unknown environments with 404 ENVIRONMENT_NOT_FOUND and unknown processes with 404 PROCESS_NOT_FOUND', async () => {
    const before = await listedIds();
    const api = setup.api;
    for (const response of [await api.get(paths.environment('no-such-env')), await api.get(paths.processes('no-such-env')), await api.post(paths.processes('no-such-env'), { argv: ['true'] })]) {
      problem(response, 404, 'ENVIRONMENT_NOT_FOUND');
    }
    const unknown = '00000000-0000-4000-8000-000000000000';
    const responses = [
      await api.get(paths.process(ENV, unknown)),
      await api.delete(paths.process(ENV, unknown)),
      await api.get(paths.events(ENV, unknown)),
      await api.post(paths.stdin(ENV, unknown), { writeId: 'w', data: b64('x') }),
      await api.post(paths.stdinEnd(ENV, unknown)),
      await api.post(paths.interrupt(ENV, unknown)),
      await api.post(paths.terminate(ENV, unknown)),
    ];
    for (const response of responses) problem(response, 404, 'PROCESS_NOT_FOUND');
    // A process of this environment asked for under another one is not found there either.
    problem(await api.get(paths.process('no-such-env', before[0] ?? unknown)), 404, 'ENVIRONMENT_NOT_FOUND');
    expect(await listedIds()).toEqual(before);
  });

  it('refuses an oversized body with 413 BODY_TOO_LARGE, declared by content-length or sent chunked, and starts nothing', async () => {
    const before = await listedIds();
    // Declares more than the limit and sends almost nothing: refused on the declaration, before reading.
    problem(await setup.api.refusedUpload(paths.processes(ENV), { declaredBytes: MAX_BODY + 1, maxBytes: 0 }), 413, 'BODY_TOO_LARGE');
    // Chunked, no length: refused once the bytes read pass the limit (sending stops at 4x the limit).
    problem(await setup.api.refusedUpload(paths.processes(ENV), { maxBytes: 4 * MAX_BODY }), 413, 'BODY_TOO_LARGE');
    // A complete body over the limit, both ways.
    const big = { argv: ['echo', 'x'.repeat(MAX_BODY)] };
    problem(await setup.api.post(paths.processes(ENV), big), 413, 'BODY_TOO_LARGE');
    problem(await setup.api.post(paths.processes(ENV), big, { chunked: true }), 413, 'BODY_TOO_LARGE');
    expect(await listedIds()).toEqual(before);
    // A body at the limit is read.
    const fits = JSON.stringify({ argv: ['true'], env: { PAD: '' } });
    const padded = JSON.stringify({ argv: ['true'], env: { PAD: 'p'.repeat(MAX_BODY - fits.length) } });
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY);
    const started = await setup.api.post(paths.processes(ENV), undefined, { body: padded, headers: { 'content-type': 'application/json' }, chunked: true });
    expect(started.status).toBe(201);
    await finished(setup.api, ENV, (started.body as { id: string }).id);
  });

  it('refuses a body that is not application/json with 415 and starts nothing', async () => {
    const before = await listedIds();
    const body = JSON.stringify({ argv: ['true'] });
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/jsonx' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      problem(await setup.api.post(paths.processes(ENV), undefined, { body, headers }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expect(await listedIds()).toEqual(before);
    // Parameters and case do not matter.
    expect((await setup.api.post(paths.processes(ENV), undefined, { body, headers: { 'content-type': 'Application/JSON; charset=utf-8' } })).status).toBe(201);
  });

  it('answers ids that try to leave their segment with 400 INVALID_ID, never a file', async () => {
    const long = 'a'.repeat(129);
    const huge = 'b'.repeat(4000);
    const targets = [
      '/api/v1/environments/..',
      '/api/v1/environments/../../../../etc/passwd',
      '/api/v1/../../etc/passwd',
      '/api/v1/environments/%2e%2e',
      '/api/v1/environments/%2E%2E/processes',
      '/api/v1/environments/..%2F..%2Fetc%2Fpasswd',
      '/api/v1/environments/..%2f',
      '/api/v1/environments/a%2Fb',
      '/api/v1/environments/a%5Cb',
      '/api/v1/environments/.hidden',
      '/api/v1/environments/%00',
      '/api/v1/environments/%zz',
      `/api/v1/environments/${long}`,
      `/api/v1/environments/${huge}/processes`,
      `/api/v1/environments/${ENV}/processes/..`,
      `/api/v1/environments/${ENV}/processes/%2e%2e%2f%2e%2e%2fetc%2fpasswd`,
      `/api/v1/environments/${ENV}/processes/x%2F..%2F..%2Fopenapi.json/events`,
    ];
    const outcomes = [];
    for (const target of targets) {
      const response = await setup.api.get(target);
      outcomes.push({ target: target.slice(0, 80), status: response.status, code: (response.body as { code?: string }).code, file: /root:|"openapi"/.test(response.text) });
    }
    expect(outcomes).toEqual(targets.map((target) => ({ target: target.slice(0, 80), status: 400, code: 'INVALID_ID', file: false })));
  });

  it('answers a `follow` that is not true or false, or an `after` or `follow` given twice, with 400 INVALID_REQUEST naming it', async () => {
    const id = (await startProcess(setup.api, ENV, { argv: ['echo', 'query'] })).id;
    await finished(setup.api, ENV, id);
    const cases = [
      ['follow=maybe', 'follow'],
      ['follow=', 'follow'],
      ['follow=TRUE', 'follow'],
      ['follow=true&follow=false', 'follow'],
      ['after=1&after=2', 'after'],
    ] as const;
    const outcomes: { query: string; status: number; code: unknown; names: boolean }[] = [];
    for (const [query, name] of cases) {
      const answer = await setup.api.get(`${paths.events(ENV, id)}?${query}`);
      const body = answer.body as { code?: unknown; detail?: unknown };
      outcomes.push({ query, status: answer.status, code: body.code, names: typeof body.detail === 'string' && body.detail.startsWith(name) });
    }
    expect(outcomes).toEqual(cases.map(([query]) => ({ query, status: 400, code: 'INVALID_REQUEST', names: true })));
    // The good ones still answer.
    expect((await setup.api.get(`${paths.events(ENV, id)}?follow=false&after=0`)).status).toBe(200);
    expect((await setup.api.get(`${paths.events(ENV, id)}?follow=true`)).status).toBe(200);
  });

  it('answers a bad `after` or Last-Event-ID with 400 INVALID_REQUEST', async () => {
    const id = (await startProcess(setup.api, ENV, { argv: ['echo', 'resume'] })).id;
    await finished(setup.api, ENV, id);
    for (const after of ['-1', 'abc', '1.5', '1e3', '0x10', '99999999999999999999']) {
      problem(await setup.api.get(`${paths.events(ENV, id)}?after=${after}`), 400, 'INVALID_REQUEST');
    }
    for (const lastEventId of ['nope', '-3', '2.0']) {
      problem(await setup.api.get(paths.events(ENV, id), { headers: { 'last-event-id': lastEventId } }), 400, 'INVALID_REQUEST');
    }
    // A good one resumes: after any event's id, exactly the events that follow it.
    const all = (await finished(setup.api, ENV, id)).events;
    const first = all[0]?.id ?? 'none';
    for (const resume of [{ path: `${paths.events(ENV, id)}?after=${first}` }, { path: paths.events(ENV, id), headers: { 'last-event-id': first } }]) {
      const opened = await setup.api.events(resume.path, resume.headers === undefined ? {} : { headers: resume.headers });
      if (!('stream' in opened)) throw new Error(`resume refused: ${opened.refused.text}`);
      expect(await opened.stream.ended()).toEqual(all.slice(1));
    }
    expect(all.map((e) => e.event).sort()).toEqual(['closed', 'exited', 'output']);
  });
});
