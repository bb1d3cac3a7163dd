/**
 * After a host restart on the same data dir, the processes of before are listed and readable, against
 * real hosts and a real codex executor: a process that ran to completion under the first host is listed
 * `closed` with its exit code by the second (its environment `offline` until an executor joins again,
 * then listed beside the live ones), in the environments list and the overview too; its events from
 * seq 0 give all of its output sha256-exact, `?after=` a random seq exactly what follows; and
 * a helper process (the FIFO setup and feeder of a piped stdin) has a log but is never listed; and
 * `GET …/log` gives its bytes as they came: all of them, one stream, the last N lines or bytes, those
 * received since a time; HEAD the headers alone. A host without a data dir answers `/log` with 409.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { HostServer } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import type { ProcessResource } from '../../../src/wire/operator-api';
import { startDirectExecutor, trackForCleanup } from '../../support/executor';
import type { SseEvent } from './api-client';
import { ApiClient, paths, within } from './api-client';
import { decodeEvents, environmentReady, EXECUTOR_CREDENTIALS, expectProblem, expectStatus, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';

jest.setTimeout(90_000);

const ENV = 'restart-1';
const LINES = 30_000;
const SCRIPT = `seq 1 ${LINES}; seq 1 200 | sed 's/^/err /' >&2; printf 'no newline at the end'; exit 3`;

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const outputChunks = (events: readonly SseEvent[], streams: readonly string[] = ['stdout', 'stderr', 'pty'], since = 0): Buffer =>
  Buffer.concat(
    events
      .filter((event) => event.event === 'output')
      .map((event) => JSON.parse(event.data) as { stream: string; chunk: string; time: number })
      .filter((data) => streams.includes(data.stream) && data.time >= since)
      .map((data) => Buffer.from(data.chunk, 'base64')),
  );

/** A host on `dataDir` with the spec's token and executor credentials, but no executor joined. */
async function startBareHost(dataDir: string): Promise<HostServer> {
  return trackForCleanup(
    await startHostServer({
      credentials: new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]),
      log: () => undefined,
      outputLog: { dataDir },
      operator: { tokens: new OperatorTokens([OPERATOR_TOKEN]) },
    }),
  );
}

describe('after a host restart on the same data dir', () => {
  let dataDir: string;
  let before: ProcessResource;
  let piped: ProcessResource;
  let events: readonly SseEvent[];
  let host: HostServer;
  let api: ApiClient;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-restart-'));
    const first = await startApiHost({ environmentId: ENV, host: { outputLog: { dataDir } } });
    before = await startProcess(first.api, ENV, { argv: ['sh', '-c', SCRIPT] });
    expect((await finished(first.api, ENV, before.id, 30_000)).exitCode).toBe(3);
    // A piped stdin runs a helper (the FIFO feeder) with a log of its own, never described: never listed.
    piped = await startProcess(first.api, ENV, { argv: ['cat'], pipeStdin: true });
    expectStatus(await first.api.post(paths.stdin(ENV, piped.id), { writeId: 'w1', data: Buffer.from('piped\n').toString('base64') }), 200);
    expectStatus(await first.api.post(paths.stdinEnd(ENV, piped.id)), 200);
    expect((await finished(first.api, ENV, piped.id)).stdout).toBe('piped\n');
    await first.host.close();
    await first.executor.stop();
    host = await startBareHost(dataDir);
    api = new ApiClient(host.url, OPERATOR_TOKEN);
    const opened = await api.events(`${paths.events(ENV, before.id)}?follow=false`);
    if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}: ${opened.refused.text}`);
    events = await opened.stream.ended(30_000);
  });
  afterAll(async () => {
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the process closed with its exit code, its environment offline, in the lists and the overview', async () => {
    // Its times come from its meta.json (ISO-8601 strings).
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown;
    const stored = { id: before.id, environmentId: ENV, argv: ['sh', '-c', SCRIPT], tty: false, pipeStdin: false, state: 'closed', exitCode: 3, error: null, startedAt: time, exitedAt: time, startedBy: 'token-1' };
    const storedPiped = { id: piped.id, environmentId: ENV, argv: ['cat'], tty: false, pipeStdin: false, state: 'closed', exitCode: 0, error: null, startedAt: time, exitedAt: time, startedBy: 'token-1' };
    // The helpers' logs (the FIFO's setup and its feeder at least) are in the data dir too, but not listed.
    expect(readdirSync(join(dataDir, 'processes', ENV)).length).toBeGreaterThanOrEqual(4);
    expect(expectStatus(await api.get(paths.processes(ENV)), 200)).toEqual({ processes: [stored, storedPiped] });
    expect(expectStatus(await api.get(paths.process(ENV, before.id)), 200)).toEqual(stored);
    const offline = { id: ENV, generation: 0, state: 'offline', error: null, info: null, processCount: 2 };
    expect(expectStatus(await api.get(paths.environments), 200)).toEqual({ hostInstance: host.instanceId, environments: [offline] });
    expect(expectStatus(await api.get(paths.environment(ENV)), 200)).toEqual(offline);
    const overview = await api.events(paths.overview);
    if (!('stream' in overview)) throw new Error(`overview answered ${overview.refused.status}`);
    const snapshot = await overview.stream.next((event) => event.event === 'overview');
    await overview.stream.close();
    expect(JSON.parse(snapshot.data)).toEqual({ hostInstance: host.instanceId, environments: [{ ...offline, processes: [stored, storedPiped] }] });
    expectProblem(await api.get(paths.process(ENV, 'no-such-process')), 404, 'PROCESS_NOT_FOUND', host.instanceId);
  });

  it('gives all of its events from seq 0, sha256-exact, and exactly what follows a random seq', async () => {
    const seqs = events.filter((event) => event.id !== undefined).map((event) => Number(event.id));
    expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
    // `closed` is last; `exited` may come before the last output (docs/protocol.md#sequence-numbers).
    const names = events.map((event) => event.event);
    expect({ last: names[names.length - 1], exited: names.filter((name) => name === 'exited').length }).toEqual({ last: 'closed', exited: 1 });
    const decoded = decodeEvents(events);
    const expected = `${Array.from({ length: LINES }, (_, i) => `${i + 1}\n`).join('')}no newline at the end`;
    expect({ stdout: sha256(decoded.stdout), stderr: sha256(decoded.stderr), exitCode: decoded.exitCode }).toEqual({
      stdout: sha256(expected),
      stderr: sha256(Array.from({ length: 200 }, (_, i) => `err ${i + 1}\n`).join('')),
      exitCode: 3,
    });
    const after = 1 + Math.floor(Math.random() * (seqs.length - 2));
    const opened = await api.events(`${paths.events(ENV, before.id)}?after=${after}`);
    if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
    const rest = await opened.stream.ended(30_000);
    expect(rest.map((event) => [event.id, event.event, event.data])).toEqual(events.slice(after).map((event) => [event.id, event.event, event.data]));
  });

  it('joins a new executor under the same id: the stored process is listed beside the live ones', async () => {
    const ready = environmentReady(host, ENV);
    const executor = await startDirectExecutor({ remoteUrl: host.url, environmentId: ENV, credentials: EXECUTOR_CREDENTIALS });
    try {
      await within(ready, 30_000, `environment ${ENV} joining again`);
      const live = await startProcess(api, ENV, { argv: ['echo', 'again'] });
      await finished(api, ENV, live.id);
      const listed = (expectStatus(await api.get(paths.processes(ENV)), 200) as { processes: ProcessResource[] }).processes;
      expect(listed.map((p) => [p.id, p.state, p.exitCode])).toEqual([
        [live.id, 'closed', 0],
        [before.id, 'closed', 3],
        [piped.id, 'closed', 0],
      ]);
      const environment = expectStatus(await api.get(paths.environment(ENV)), 200) as { state: string; processCount: number; generation: number };
      expect(environment).toMatchObject({ state: 'connected', generation: 1, processCount: 3 });
    } finally {
      await executor.stop();
    }
  });

  describe('GET …/log', () => {
    const log = (query = ''): ReturnType<ApiClient['get']> => api.get(`${paths.process(ENV, before.id)}/log${query}`);

    it('gives every byte as it came, as application/octet-stream; HEAD the headers alone', async () => {
      const all = await log();
      expect({ status: all.status, type: all.headers['content-type'], instance: all.headers['exec-rx-host-instance'] }).toEqual({ status: 200, type: 'application/octet-stream', instance: host.instanceId });
      expect(sha256(all.text)).toBe(sha256(outputChunks(events)));
      const head = await api.request('HEAD', `${paths.process(ENV, before.id)}/log`);
      expect({ status: head.status, type: head.headers['content-type'], text: head.text }).toEqual({ status: 200, type: 'application/octet-stream', text: '' });
    });

    it('gives one stream, or a comma list / repeated streams', async () => {
      expect((await log('?stream=stderr')).text).toBe(Array.from({ length: 200 }, (_, i) => `err ${i + 1}\n`).join(''));
      expect(sha256((await log('?stream=stdout')).text)).toBe(sha256(outputChunks(events, ['stdout'])));
      expect(sha256((await log('?stream=stdout,stderr')).text)).toBe(sha256(outputChunks(events)));
      expect(sha256((await log('?stream=stderr&stream=stdout')).text)).toBe(sha256(outputChunks(events)));
      expect((await log('?stream=pty')).text).toBe('');
    });

    it('gives the last N lines (a last line without its newline counts) or the last N bytes', async () => {
      expect((await log('?stream=stdout&tail=3')).text).toBe(`${LINES - 1}\n${LINES}\nno newline at the end`);
      expect((await log('?stream=stderr&tail=2')).text).toBe('err 199\nerr 200\n');
      expect((await log('?stream=stderr&tail=0')).text).toBe('');
      expect((await log('?stream=stderr&tail=100000')).text).toBe(Array.from({ length: 200 }, (_, i) => `err ${i + 1}\n`).join(''));
      expect((await log('?stream=stdout&tail=11b')).text).toBe(' at the end');
      expect((await log('?stream=stdout&tail=22b')).text).toBe(`${LINES}\nno newline at the end`.slice(-22));
    });

    it('gives what the host received at or after a time (ms since the epoch, or RFC 3339)', async () => {
      const times = events.filter((event) => event.event === 'output').map((event) => (JSON.parse(event.data) as { time: number }).time);
      const middle = times[Math.floor(times.length / 2)] ?? 0;
      expect(sha256((await log(`?since=${middle}`)).text)).toBe(sha256(outputChunks(events, undefined, middle)));
      const iso = new Date(middle).toISOString();
      expect(sha256((await log(`?since=${encodeURIComponent(iso)}`)).text)).toBe(sha256(outputChunks(events, undefined, middle)));
      expect((await log(`?since=${(times[times.length - 1] ?? 0) + 1}`)).text).toBe('');
    });

    it('refuses parameters out of their syntax with 400, and an unknown process with 404', async () => {
      for (const query of ['?stream=stdin', '?tail=-1', '?tail=3x', '?tail=1&tail=2', '?since=yesterday', '?tail=2000000']) {
        expectProblem(await log(query), 400, 'INVALID_REQUEST', host.instanceId);
      }
      expectProblem(await api.get(`${paths.process(ENV, 'no-such-process')}/log`), 404, 'PROCESS_NOT_FOUND', host.instanceId);
    });
  });
});

describe('a host without a data dir', () => {
  it('answers /log with 409 LOG_READ_FAILED for a process it lists', async () => {
    const setup = await startApiHost({ environmentId: 'restart-no-dir' });
    const started = await startProcess(setup.api, setup.environmentId, { argv: ['echo', 'x'] });
    await finished(setup.api, setup.environmentId, started.id);
    expectProblem(await setup.api.get(`${paths.process(setup.environmentId, started.id)}/log`), 409, 'LOG_READ_FAILED', setup.host.instanceId);
    await setup.host.close();
  });
});
