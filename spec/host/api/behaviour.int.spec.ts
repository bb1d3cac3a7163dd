/**
 * What the operator API does with processes, against a real host and a real codex executor: defaults of
 * a start (the executor's home, env over its core set, TERM for a tty), stdin through a pipe (in order,
 * ended once) and a tty (Ctrl-D), interrupt, terminate, release, host-made UUIDs, and the host instance
 * on every answer.
 */
import { fileURLToPath } from 'node:url';
import type { ProcessResource } from '../../../src/wire/operator-api';
import { HOST_INSTANCE_HEADER } from '../../../src/wire/operator-api';
import type { ApiResponse } from './api-client';
import { paths } from './api-client';
import type { ApiHost, Finished } from './api-host';
import { b64, expectStatus, finished, listProcesses, startApiHost, startProcess, UUID } from './api-host';

const ENV = 'behaviour-1';

/** The bytes of one stream's output events. */
const bytesOf = (run: Finished, stream: 'stdout' | 'pty'): Buffer =>
  Buffer.concat(
    run.events
      .filter((e) => e.event === 'output')
      .map((e) => JSON.parse(e.data) as { stream: string; chunk: string })
      .filter((d) => d.stream === stream)
      .map((d) => Buffer.from(d.chunk, 'base64')),
  );

describe('operator API: processes', () => {
  let setup: ApiHost;
  const started: ProcessResource[] = [];
  const start = async (request: Parameters<typeof startProcess>[2]): Promise<ProcessResource> => {
    const process = await startProcess(setup.api, ENV, request);
    started.push(process);
    return process;
  };
  const run = async (request: Parameters<typeof startProcess>[2]): Promise<Finished> => finished(setup.api, ENV, (await start(request)).id);

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV });
  });

  it("starts in the executor's home with the request's env laid over the executor's core environment", async () => {
    const environment = expectStatus(await setup.api.get(paths.environment(ENV)), 200) as { info: { userHomeDir: string } };
    const home = fileURLToPath(environment.info.userHomeDir);
    expect(home).toMatch(/^\//);
    expect(await run({ argv: ['pwd'] })).toMatchObject({ stdout: `${home}\n`, stderr: '', exitCode: 0 });
    const env = await run({ argv: ['sh', '-c', 'echo "PATH=$PATH"; echo "HOME=$HOME"; echo "SPEC_VAR=$SPEC_VAR"'], env: { SPEC_VAR: 'seen' } });
    const [path, homeVar, specVar] = env.stdout.split('\n');
    expect(path).toMatch(/^PATH=\S*\/bin/);
    expect(homeVar).toBe(`HOME=${home}`);
    expect(specVar).toBe('SPEC_VAR=seen');
    // The request's env wins over the core set, and a cwd given is used.
    expect(await run({ argv: ['sh', '-c', 'echo "$HOME"; pwd'], env: { HOME: '/tmp' }, cwd: '/' })).toMatchObject({ stdout: '/tmp\n/\n', exitCode: 0 });
  });

  it('gives a tty start without env TERM=xterm-256color and a working PATH; an env TERM wins', async () => {
    const tty = await run({ argv: ['printenv', 'TERM', 'PATH'], tty: true });
    expect(tty.exitCode).toBe(0);
    const [term, path] = tty.pty.split('\r\n');
    expect(term).toBe('xterm-256color');
    expect(path).toMatch(/\/bin/);
    expect((await run({ argv: ['printenv', 'TERM'], tty: true, env: { TERM: 'dumb' } })).pty).toBe('dumb\r\n');
  });

  it('sizes the tty as asked (24x80 when not), listed under its own argv, its input still ended by Ctrl-D', async () => {
    const sized = await start({ argv: ['stty', 'size'], tty: { rows: 40, cols: 100 } });
    expect(sized).toMatchObject({ argv: ['stty', 'size'], tty: true });
    expect(await finished(setup.api, ENV, sized.id)).toMatchObject({ pty: '40 100\r\n', exitCode: 0 });
    expect((await listProcesses(setup.api, ENV)).find((p) => p.id === sized.id)?.argv).toEqual(['stty', 'size']);
    expect(await run({ argv: ['stty', 'size'], tty: true })).toMatchObject({ pty: '24 80\r\n', exitCode: 0 });
    const cat = await start({ argv: ['cat'], tty: { rows: 10, cols: 20 } });
    expect((await setup.api.post(paths.stdin(ENV, cat.id), { writeId: 'w', data: b64('sized\n') })).status).toBe(200);
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).status).toBe(200);
    expect(await finished(setup.api, ENV, cat.id)).toMatchObject({ pty: 'sized\r\nsized\r\n', exitCode: 0 });
  });

  it('writes a pipe in order (distinct writeIds), ends it twice, and lists only the command under its own argv', async () => {
    const before = await listProcesses(setup.api, ENV);
    const cat = await start({ argv: ['cat'], pipeStdin: true });
    expect(cat).toMatchObject({ argv: ['cat'], tty: false, pipeStdin: true, state: 'running', exitCode: null, error: null });
    const listed = await listProcesses(setup.api, ENV);
    expect(listed.length).toBe(before.length + 1);
    expect(listed.find((p) => p.id === cat.id)).toEqual(cat);
    expect(listed.filter((p) => p.argv[0] === 'sh' && p.argv[1] === '-c' && !before.some((b) => b.id === p.id))).toEqual([]);

    const chunks = [Buffer.from('alpha\n'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0x0a]), Buffer.from('omega')];
    for (const [index, chunk] of chunks.entries()) {
      const written = await setup.api.post(paths.stdin(ENV, cat.id), { writeId: `chunk-${index}`, data: chunk.toString('base64') });
      expect(written.body).toEqual({ writeId: `chunk-${index}`, status: 'accepted' });
    }
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).body).toEqual({ status: 'ended' });
    expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).body).toEqual({ status: 'ended' });
    const done = await finished(setup.api, ENV, cat.id);
    expect(done.exitCode).toBe(0);
    expect(bytesOf(done, 'stdout')).toEqual(Buffer.concat(chunks));
    expect((await setup.api.get(paths.process(ENV, cat.id))).body).toMatchObject({ argv: ['cat'], state: 'closed', exitCode: 0 });
  });

  it('ends a tty `cat` with Ctrl-D, after a line and after a partial line', async () => {
    for (const [text, echoed] of [
      ['hello\n', 'hello\r\nhello\r\n'],
      ['partial', 'partialpartial'],
    ] as const) {
      const cat = await start({ argv: ['cat'], tty: true });
      expect((await setup.api.post(paths.stdin(ENV, cat.id), { writeId: 'line', data: b64(text) })).status).toBe(200);
      expect((await setup.api.post(paths.stdinEnd(ENV, cat.id))).body).toEqual({ status: 'ended' });
      const done = await finished(setup.api, ENV, cat.id);
      expect({ text, exitCode: done.exitCode, echoed: done.pty.startsWith(echoed) }).toEqual({ text, exitCode: 0, echoed: true });
    }
  });

  it('interrupts (exit 130) and terminates (running true, exit 137; then running false)', async () => {
    const interrupted = await start({ argv: ['sleep', '30'] });
    const terminated = await start({ argv: ['sleep', '30'] });
    const interrupt = await setup.api.post(paths.interrupt(ENV, interrupted.id));
    expect({ status: interrupt.status, body: interrupt.body }).toEqual({ status: 200, body: { status: 'interrupted' } });
    expect((await finished(setup.api, ENV, interrupted.id)).exitCode).toBe(130);
    expect((await setup.api.post(paths.terminate(ENV, terminated.id))).body).toEqual({ running: true });
    expect((await finished(setup.api, ENV, terminated.id)).exitCode).toBe(137);
    expect((await setup.api.post(paths.terminate(ENV, terminated.id))).body).toEqual({ running: false });
  });

  it('releases a closed process: 204, then 404 and off the list', async () => {
    const done = await start({ argv: ['echo', 'bye'] });
    expect((await finished(setup.api, ENV, done.id)).stdout).toBe('bye\n');
    const released = await setup.api.delete(paths.process(ENV, done.id));
    expect({ status: released.status, text: released.text }).toEqual({ status: 204, text: '' });
    expect((await setup.api.get(paths.process(ENV, done.id))).status).toBe(404);
    expect((await setup.api.get(paths.events(ENV, done.id))).status).toBe(404);
    expect((await listProcesses(setup.api, ENV)).map((p) => p.id)).not.toContain(done.id);
  });

  it('names every process with a host-made UUID, distinct, in its environment', () => {
    expect(started.length).toBeGreaterThanOrEqual(10);
    for (const process of started) expect({ id: process.id, environmentId: process.environmentId }).toEqual({ id: expect.stringMatching(UUID), environmentId: ENV });
    expect(new Set(started.map((p) => p.id)).size).toBe(started.length);
  });

  it('names the host instance on every answer: success, problem, empty, event stream, the document', async () => {
    const api = setup.api;
    const sleeper = await start({ argv: ['sleep', '30'] });
    const interrupted = await start({ argv: ['sleep', '30'] });
    const answers = {
      host: await api.get(paths.host),
      created: await api.post(paths.processes(ENV), { argv: ['true'] }),
      interrupted: await api.post(paths.interrupt(ENV, interrupted.id)),
      openapi: await api.get(paths.openapi, { token: null }),
      head: await api.request('HEAD', paths.openapi, { token: null }),
      unauthorized: await api.get(paths.host, { token: null }),
      notFound: await api.get(paths.environment('nope')),
      routeNotFound: await api.get('/api/v1/nope'),
      notAllowed: await api.request('PUT', paths.host),
      invalidId: await api.get(paths.environment('..')),
      malformed: await api.post(paths.processes(ENV), undefined, { body: '{', headers: { 'content-type': 'application/json' } }),
      unsupported: await api.post(paths.processes(ENV), undefined, { body: '{}', headers: { 'content-type': 'text/plain' } }),
      conflict: await api.delete(paths.process(ENV, sleeper.id)),
    };
    const closed = await start({ argv: ['true'] });
    await finished(api, ENV, closed.id);
    const released = await api.delete(paths.process(ENV, closed.id));
    const overview = await api.events(paths.overview);
    if (!('stream' in overview)) throw new Error(`overview refused: ${overview.refused.text}`);
    await overview.stream.next((e) => e.event === 'overview');
    await overview.stream.close();
    const headers: [string, { readonly headers: ApiResponse['headers'] }][] = [...Object.entries(answers), ['released', released], ['overview', overview.stream]];
    const instances = Object.fromEntries(headers.map(([name, answer]) => [name, answer.headers[HOST_INSTANCE_HEADER]]));
    expect(instances).toEqual(Object.fromEntries(Object.keys(instances).map((name) => [name, setup.host.instanceId])));
    expect((answers.host.body as { hostInstance: string }).hostInstance).toBe(setup.host.instanceId);
    expect(Object.values(answers).map((a) => a.status)).toEqual([200, 201, 200, 200, 200, 401, 404, 404, 405, 400, 400, 415, 409]);
    expect(released.status).toBe(204);
    expect((await setup.api.post(paths.terminate(ENV, sleeper.id))).body).toEqual({ running: true });
  });
});
