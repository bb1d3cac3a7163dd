/**
 * Retried and conflicting requests on the operator API, against a real host and a real codex executor: a
 * replayed writeId applies once (another body under it is 422), a replayed Idempotency-Key returns the
 * process the first start made (another body under it is 422), refused writes lose nothing, and writes
 * with no stdin, writes after the end and releasing a running process answer 409.
 */
import { paths } from './api-client';
import type { ApiResponse } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectProblem, finished, listProcesses, SECOND_OPERATOR_TOKEN, OPERATOR_TOKEN, startApiHost, startProcess, UUID } from './api-host';

const ENV = 'replays-1';
const MAX_BODY = 64 * 1024;

describe('operator API: replays and conflicts', () => {
  let setup: ApiHost;
  const problem = (response: ApiResponse, status: number, code: string) => expectProblem(response, status, code, setup.host.instanceId);
  const listedIds = async (): Promise<string[]> => (await listProcesses(setup.api, ENV)).map((p) => p.id).sort();
  const write = (processId: string, writeId: string, text: string): Promise<ApiResponse> => setup.api.post(paths.stdin(ENV, processId), { writeId, data: b64(text) });

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV, tokens: [OPERATOR_TOKEN, SECOND_OPERATOR_TOKEN], operator: { maxBodyBytes: MAX_BODY } });
  });

  it('applies a writeId once: a replay with the same data is answered and not applied again, one with other data is 422 WRITE_ID_REUSED', async () => {
    const cat = await startProcess(setup.api, ENV, { argv: ['cat'], pipeStdin: true });
    expect((await write(cat.id, 'w1', 'one\n')).body).toEqual({ writeId: 'w1', status: 'accepted' });
    expect((await write(cat.id, 'w1', 'one\n')).body).toEqual({ writeId: 'w1', status: 'accepted' });
    // A retry racing the first POST: every answer is the one write's.
    const racing = await Promise.all([write(cat.id, 'w2', 'two\n'), write(cat.id, 'w2', 'two\n'), write(cat.id, 'w2', 'two\n')]);
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200]);
    const reused = problem(await write(cat.id, 'w1', 'other\n'), 422, 'WRITE_ID_REUSED');
    expect(reused.detail).toBe('writeId w1 was used for other bytes');
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).status).toBe(200);
    expect(await finished(setup.api, ENV, cat.id)).toMatchObject({ stdout: 'one\ntwo\n', exitCode: 0 });
  });

  it('loses nothing to refused writes: the output is exactly the accepted bytes, in order', async () => {
    const cat = await startProcess(setup.api, ENV, { argv: ['cat'], pipeStdin: true });
    const stdin = paths.stdin(ENV, cat.id);
    expect((await write(cat.id, 'a', 'first\n')).status).toBe(200);
    problem(await setup.api.post(stdin, undefined, { body: '{"writeId":"b","data":', headers: { 'content-type': 'application/json' } }), 400, 'MALFORMED_JSON');
    problem(await setup.api.post(stdin, { writeId: 'b', data: 5 }), 400, 'INVALID_REQUEST');
    problem(await setup.api.post(stdin, { writeId: 'b', data: 'bm90IGJhc2U2NA' }), 400, 'INVALID_REQUEST');
    problem(await setup.api.post(stdin, undefined, { body: JSON.stringify({ writeId: 'b', data: b64('lost\n') }), headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    problem(await setup.api.post(stdin, { writeId: 'b', data: b64('x'.repeat(MAX_BODY)) }), 413, 'BODY_TOO_LARGE');
    problem(await setup.api.refusedUpload(stdin, { maxBytes: 4 * MAX_BODY }), 413, 'BODY_TOO_LARGE');
    problem(await write(cat.id, 'a', 'lost\n'), 422, 'WRITE_ID_REUSED');
    // 'b' was never applied, so it is still free.
    expect((await write(cat.id, 'b', 'second\n')).status).toBe(200);
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).status).toBe(200);
    expect(await finished(setup.api, ENV, cat.id)).toMatchObject({ stdout: 'first\nsecond\n', exitCode: 0 });
  });

  it('returns the first process for a replayed Idempotency-Key with the same body (200, idempotent-replayed), 422 IDEMPOTENCY_KEY_REUSED for another body', async () => {
    const before = await listedIds();
    const body = { argv: ['sleep', '30'], env: { A: '1', B: '2' } };
    const key = { 'idempotency-key': 'start-1' };
    const first = await setup.api.post(paths.processes(ENV), body, { headers: key });
    expect(first.status).toBe(201);
    const id = (first.body as { id: string }).id;
    expect(id).toMatch(UUID);
    expect(first.headers['location']).toBe(paths.process(ENV, id));
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    // The same body (its keys in another order) is the same start.
    const again = await setup.api.post(paths.processes(ENV), { env: { B: '2', A: '1' }, argv: ['sleep', '30'] }, { headers: key });
    expect({ status: again.status, replayed: again.headers['idempotent-replayed'], location: again.headers['location'], body: again.body }).toEqual({
      status: 200,
      replayed: 'true',
      location: first.headers['location'],
      body: first.body,
    });
    const reused = problem(await setup.api.post(paths.processes(ENV), { ...body, argv: ['sleep', '31'] }, { headers: key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(reused.detail).toBe('this Idempotency-Key was used for another start');

    // Retries racing the first start: one process.
    const racing = await Promise.all([0, 1, 2].map(() => setup.api.post(paths.processes(ENV), body, { headers: { 'idempotency-key': 'start-2' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(racing.map((r) => (r.body as { id: string }).id)).size).toBe(1);

    // Keys belong to their token: another token's same key starts its own process.
    const other = await setup.api.as(SECOND_OPERATOR_TOKEN).post(paths.processes(ENV), body, { headers: key });
    expect(other.status).toBe(201);
    expect((other.body as { id: string }).id).not.toBe(id);

    for (const bad of ['', 'has space', 'k'.repeat(256)]) {
      problem(await setup.api.post(paths.processes(ENV), body, { headers: { 'idempotency-key': bad } }), 400, 'INVALID_REQUEST');
    }
    const started = [id, (racing[0]?.body as { id: string }).id, (other.body as { id: string }).id];
    expect(await listedIds()).toEqual([...before, ...started].sort());
    for (const processId of started) expect((await setup.api.post(paths.terminate(ENV, processId))).body).toEqual({ running: true });
  });

  it('answers 409 STDIN_CLOSED for a process without stdin and for a write after the end; the end itself is idempotent', async () => {
    const plain = await startProcess(setup.api, ENV, { argv: ['sleep', '30'] });
    problem(await write(plain.id, 'w', 'x'), 409, 'STDIN_CLOSED');
    problem(await setup.api.post(paths.stdinEnd(ENV, plain.id)), 409, 'STDIN_CLOSED');

    const cat = await startProcess(setup.api, ENV, { argv: ['cat'], pipeStdin: true });
    expect((await write(cat.id, 'w1', 'before the end\n')).status).toBe(200);
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).body).toEqual({ status: 'ended' });
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).body).toEqual({ status: 'ended' });
    problem(await write(cat.id, 'w2', 'after the end\n'), 409, 'STDIN_CLOSED');
    // A retry of a write accepted before the end still gets its answer (and applies nothing).
    expect((await write(cat.id, 'w1', 'before the end\n')).status).toBe(200);
    expect(await finished(setup.api, ENV, cat.id)).toMatchObject({ stdout: 'before the end\n', exitCode: 0 });
    problem(await write(cat.id, 'w3', 'after it closed\n'), 409, 'STDIN_CLOSED');
    expect((await setup.api.post(paths.terminate(ENV, plain.id))).body).toEqual({ running: true });
  });

  it('answers 409 STDIN_CLOSED for a write to a process that ended by itself, with a pipe or a tty', async () => {
    for (const start of [{ argv: ['true'], pipeStdin: true }, { argv: ['true'], tty: true }]) {
      const done = await startProcess(setup.api, ENV, start);
      expect((await finished(setup.api, ENV, done.id)).exitCode).toBe(0);
      const late = await write(done.id, 'late', 'too late\n');
      expect({ start, status: late.status }).toEqual({ start, status: 409 });
      problem(late, 409, 'STDIN_CLOSED');
    }
  });

  it('refuses to release a running process with 409 PROCESS_RUNNING; it keeps running until terminated, then releases once', async () => {
    const sleeper = await startProcess(setup.api, ENV, { argv: ['sleep', '30'] });
    const path = paths.process(ENV, sleeper.id);
    problem(await setup.api.delete(path), 409, 'PROCESS_RUNNING');
    expect((await setup.api.get(path)).body).toMatchObject({ id: sleeper.id, state: 'running', exitCode: null });
    expect((await setup.api.post(paths.terminate(ENV, sleeper.id))).body).toEqual({ running: true });
    expect((await finished(setup.api, ENV, sleeper.id)).exitCode).toBe(137);
    expect((await setup.api.delete(path)).status).toBe(204);
    problem(await setup.api.get(path), 404, 'PROCESS_NOT_FOUND');
    problem(await setup.api.delete(path), 404, 'PROCESS_NOT_FOUND');
    expect(await listedIds()).not.toContain(sleeper.id);
  });
});
