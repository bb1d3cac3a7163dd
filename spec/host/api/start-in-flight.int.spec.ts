/**
 * A start the executor has not answered yet (its log, with its argv, is in the host's log store already):
 * the lists leave it out rather than show it `unknown` (how a process of before a restart that no executor
 * lists is shown), and a wait, a stdin write or a GET that names it waits for the start instead of
 * answering 409 "how it ended is unknown" or 404. The executor answers one request per connection at a
 * time (docs/protocol.md#one-request-at-a-time): an `http/request` to a loopback server that holds its
 * answer holds the start behind it, for as long as the spec wants. Real host on a data dir, real executor.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessResource } from '../../../src/wire/operator-api';
import { listenOnLoopback } from '../../support/listen-on-loopback';
import { paths, within } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectStatus, finished, listProcesses, startApiHost, startProcess } from './api-host';

jest.setTimeout(60_000);

const ENV = 'in-flight-1';

/** A loopback HTTP server that holds every request until `release()`; `arrived` resolves at the first one. */
interface HeldServer {
  readonly url: string;
  readonly arrived: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function heldServer(): Promise<HeldServer> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrive = (): void => undefined;
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const server: Server = createServer((_req, res) => {
    arrive();
    void released.then(() => res.end('released'));
  });
  const port = await listenOnLoopback(server, 'the held server');
  return {
    url: `http://127.0.0.1:${port}/`,
    arrived,
    release,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Resolves with the id of the first process whose log appears under `dir` (not in `known`) with `marker`
 * in its argv (the start's helpers have logs without one): the store's own files, looked at again each
 * turn of the event loop until then (bounded by the caller's `within`).
 */
async function logAppearing(dir: string, known: ReadonlySet<string>, marker: string): Promise<string> {
  for (;;) {
    for (const name of readdirSync(dir).filter((entry) => !known.has(entry))) {
      const meta = join(dir, name, 'meta.json');
      if (!existsSync(meta)) continue;
      const argv = (JSON.parse(readFileSync(meta, 'utf8')) as { argv?: unknown }).argv;
      if (Array.isArray(argv) && argv.includes(marker)) return decodeURIComponent(name);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('operator API: a start in flight', () => {
  let setup: ApiHost;
  let held: HeldServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-start-in-flight-'));
    setup = await startApiHost({ environmentId: ENV, host: { outputLog: { dataDir } } });
    held = await heldServer();
  });

  afterAll(async () => {
    held.release();
    await held.close();
    await setup.host.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is not listed unknown, and a wait, a write and a GET that name it answer once it started', async () => {
    // A first process makes the environment's log directory; the next one to appear there is the held start's.
    const first = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'exit 0'] });
    await finished(setup.api, ENV, first.id);
    const logs = join(dataDir, 'processes', ENV);
    const known = new Set(readdirSync(logs));

    const environment = setup.host.environment(ENV)?.environment;
    if (environment === undefined) throw new Error(`environment ${ENV} is not connected`);
    const holding = environment.getHttpClient().request({ method: 'GET', url: held.url });
    await within(held.arrived, 10_000, 'the held http/request at the loopback server');

    // On a pty: its stdin is written directly, the start is one `process/start` (held). The exit code
    // says what the process read: 4 only if the line was `go` (the output's tail is not the evidence:
    // one clean-clone CI run under load had the pty's echo of the write but not the echo of the script,
    // with exit 4; not reproduced in 340 runs here, nor in the host, which keeps a pty's output after
    // its exit; docs/protocol.md#sequence-numbers point 3).
    const script = 'read line; echo "got $line"; [ "$line" = go ] && exit 4; exit 5';
    const starting = startProcess(setup.api, ENV, { argv: ['sh', '-c', script], tty: true });
    const id = await within(logAppearing(logs, known, script), 10_000, "the held start's log");

    // In flight: its log is kept, but the lists do not show it (before: listed `unknown`).
    const listed = await listProcesses(setup.api, ENV);
    expect(listed.map((p) => ({ id: p.id, state: p.state }))).toEqual([{ id: first.id, state: 'closed' }]);
    const waited = setup.api.post(`${paths.process(ENV, id)}/wait`);
    const written = setup.api.post(paths.stdin(ENV, id), { writeId: 'w1', data: b64('go\n') });
    const shown = setup.api.get(paths.process(ENV, id));

    held.release();
    expect((await within(holding, 10_000, 'the held http/request')).body.toString('utf8')).toBe('released');
    expect((await within(starting, 10_000, 'the start')).id).toBe(id);
    expect(expectStatus(await within(written, 10_000, 'the write'), 200)).toEqual({ writeId: 'w1', status: 'accepted' });
    expect((expectStatus(await within(shown, 10_000, 'the GET'), 200) as ProcessResource).id).toBe(id);
    expect(expectStatus(await within(waited, 10_000, 'the wait'), 200)).toMatchObject({ exitCode: 4 });
    // The pty echoed the write as it arrived.
    expect((await finished(setup.api, ENV, id)).pty).toMatch(/^go\r\n/);
  });
});
