/**
 * An operable host: its probes (`/healthz`, `/readyz`) and its Prometheus metrics on `metricsPort`,
 * against real hosts and a real executor. Two hosts run at once, each with its own registry: one with a
 * data dir (processes, output logs, a dropped socket, a refused registration), one without (an event
 * stream whose reader stalls: only memory histories pause a replay for a reader).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { HostRoutes } from '../../src/host/api/host-routes';
import { startHostServer } from '../../src/host/host-server';
import { SILENT_LOGGER } from '../../src/host/host-logger';
import { probeRoutes } from '../../src/host/api/routes-public';
import { listenOnLoopback } from '../support/listen-on-loopback';
import type { PromExposition } from '../support/prom-text';
import { getText, sampleValue, scrape } from '../support/prom-text';
import { openSse } from '../support/sse-reader';
import type { ApiHost } from './api/api-host';
import { EXECUTOR_CREDENTIALS, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api/api-host';
import { paths, within } from './api/api-client';
import { register } from './signed-client';

jest.setTimeout(90_000);

const P = 'exec_rx_host_';

/** The value of `name` (summed over the samples whose labels include `labels`) in a fresh scrape of `setup`. */
async function metric(setup: ApiHost, name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
  return sampleValue(await scrapeOf(setup), name, labels);
}

async function scrapeOf(setup: ApiHost): Promise<PromExposition> {
  const url = setup.host.metricsUrl;
  if (url === undefined) throw new Error('the host has no metrics endpoint');
  return scrape(url);
}

/** Scrapes until `name` reaches `atLeast` (each scrape follows the answer of the last); rejects after 10 s. */
async function untilMetric(setup: ApiHost, name: string, labels: Readonly<Record<string, string>>, atLeast: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await metric(setup, name, labels);
    if (value >= atLeast) return value;
    if (Date.now() > deadline) throw new Error(`${name}${JSON.stringify(labels)} stayed at ${value} (< ${atLeast}) for 10 s`);
  }
}

describe('an operable host: probes and metrics', () => {
  let dataDir: string;
  let withDisk: ApiHost;
  let inMemory: ApiHost;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-metrics-'));
    withDisk = await startApiHost({ environmentId: 'metrics-disk', host: { metricsPort: 0, outputLog: { dataDir } } });
    inMemory = await startApiHost({
      environmentId: 'metrics-memory',
      host: { metricsPort: 0, manager: { processHistory: { historyEvents: 65_536, historyBytes: 64 * 1024 * 1024 } } },
      operator: { sse: { bufferBytes: 256 * 1024 }, stallMs: 300 },
    });
  });

  afterAll(async () => {
    await withDisk.host.close();
    await inMemory.host.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers /healthz and /readyz without a token, as JSON naming nothing but the status', async () => {
    for (const setup of [withDisk, inMemory]) {
      const health = await getText(`${setup.host.url}/healthz`);
      const ready = await getText(`${setup.host.url}/readyz`);
      expect([health.status, JSON.parse(health.text)]).toEqual([200, { status: 'ok' }]);
      expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ready' }]);
      expect(ready.contentType).toBe('application/json');
    }
  });

  it('serves /metrics in the Prometheus text format, every line of it parsing, on its own port only', async () => {
    const url = withDisk.host.metricsUrl ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(url.startsWith(withDisk.host.url)).toBe(false);
    const served = await getText(url);
    expect(served.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const exposition = await scrapeOf(withDisk);
    expect(exposition.types.get(`${P}environments`)).toBe('gauge');
    expect(exposition.types.get(`${P}rpc_call_duration_seconds`)).toBe('histogram');
    expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('counter');
    // The take-back invariant's counter is served, at 0, before any take-back.
    expect(exposition.types.get(`${P}take_back_unaccounted_total`)).toBe('counter');
    expect(sampleValue(exposition, `${P}take_back_unaccounted_total`, {})).toBe(0);
    expect(sampleValue(exposition, `${P}environments`, { state: 'connected' })).toBe(1);
    expect((await getText(`${withDisk.host.url}/metrics`)).status).not.toBe(200);
    expect((await getText(url.replace(/\/metrics$/, '/other'))).status).toBe(404);
    // No id, argv or token in any label value.
    const values = exposition.samples.flatMap((sample) => Object.values(sample.labels));
    expect(values.filter((value) => value.includes('metrics-') || value.includes(OPERATOR_TOKEN) || value.includes(EXECUTOR_CREDENTIALS.accessKeyId))).toEqual([]);
  });

  it('counts a process from its start to its exit: states, the duration histogram, output bytes and events, calls, the output log', async () => {
    const before = await scrapeOf(withDisk);
    const resource = await startProcess(withDisk.api, withDisk.environmentId, { argv: ['/bin/sh', '-c', 'printf hello-metrics; printf oops >&2'] });
    const done = await finished(withDisk.api, withDisk.environmentId, resource.id);
    expect(done.stdout).toBe('hello-metrics');
    const after = await scrapeOf(withDisk);
    const delta = (name: string, labels: Readonly<Record<string, string>> = {}): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect({
      durations: delta(`${P}process_duration_seconds_count`),
      stdoutBytes: delta(`${P}output_bytes_total`, { stream: 'stdout' }),
      stderrBytes: delta(`${P}output_bytes_total`, { stream: 'stderr' }),
      stdoutEvents: delta(`${P}output_events_total`, { stream: 'stdout' }) >= 1,
      starts: delta(`${P}rpc_calls_total`, { method: 'process/start', outcome: 'ok' }),
      closed: sampleValue(after, `${P}processes`, { state: 'closed' }) >= 1,
      logBytes: sampleValue(after, `${P}output_log_bytes`) > 0,
      segments: sampleValue(after, `${P}output_log_segments`) >= 1,
    }).toEqual({ durations: 1, stdoutBytes: 'hello-metrics'.length, stderrBytes: 'oops'.length, stdoutEvents: true, starts: 1, closed: true, logBytes: true, segments: true });
    expect(sampleValue(after, `${P}rpc_call_duration_seconds_count`, { method: 'process/start' })).toBeGreaterThanOrEqual(1);
    // The log is synced within its interval (1 s) after the output came, and at the process's close.
    const syncs = sampleValue(before, `${P}output_log_fsync_duration_seconds_count`);
    expect(await untilMetric(withDisk, `${P}output_log_fsync_duration_seconds_count`, {}, syncs + 1)).toBeGreaterThan(syncs);
  });

  it('counts a dropped socket, its replacement and the resumed session', async () => {
    const before = await scrapeOf(withDisk);
    const states: string[] = [];
    const watching = withDisk.host.monitor.events$.subscribe((event) => {
      if (event.type === 'state') states.push(event.state);
    });
    const resumed = firstValueFrom(withDisk.host.monitor.events$.pipe(filter((event) => event.type === 'state' && event.state === 'connected')));
    expect(withDisk.host.dropSocket(withDisk.environmentId)).toBe(true);
    await within(resumed, 30_000, 'the session resumed');
    watching.unsubscribe();
    const after = await scrapeOf(withDisk);
    const delta = (name: string, labels: Readonly<Record<string, string>> = {}): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(states.at(0)).toBe('disconnected');
    expect({ disconnects: delta(`${P}disconnects_total`), reconnects: delta(`${P}reconnects_total`), replacements: delta(`${P}upgrades_total`, { outcome: 'replacement' }), resumes: delta(`${P}resumes_total`), failures: delta(`${P}resume_failures_total`) }).toEqual({
      disconnects: 1,
      reconnects: 1,
      replacements: 1,
      resumes: 1,
      failures: 0,
    });
  });

  it('counts a registration refused for a bad signature (401), on that host only', async () => {
    const before = await metric(withDisk, `${P}registrations_total`, { outcome: '401' });
    const refused = await register(withDisk.host.url, 'metrics-intruder', { ...EXECUTOR_CREDENTIALS, secretAccessKey: 'not-the-secret' });
    expect(refused.status).toBe(401);
    expect(await untilMetric(withDisk, `${P}registrations_total`, { outcome: '401' }, before + 1)).toBe(before + 1);
    expect(await metric(inMemory, `${P}registrations_total`, { outcome: '401' })).toBe(0);
    expect(await metric(inMemory, `${P}registrations_total`, { outcome: 'accepted' })).toBe(1);
  });

  it('counts an event stream and its end when its reader stalls', async () => {
    const resource = await startProcess(inMemory.api, inMemory.environmentId, { argv: ['/bin/sh', '-c', 'head -c 16777216 /dev/zero'] });
    await finished(inMemory.api, inMemory.environmentId, resource.id, 60_000);
    const opened = await metric(inMemory, `${P}event_streams_opened_total`);
    const stalledBefore = await metric(inMemory, `${P}event_streams_ended_total`, { reason: 'stalled' });
    const bytesBefore = await metric(inMemory, `${P}event_stream_bytes_total`);
    const reader = await openSse({ url: `${inMemory.host.url}${paths.events(inMemory.environmentId, resource.id)}`, token: OPERATOR_TOKEN });
    reader.pause();
    try {
      expect(await untilMetric(inMemory, `${P}event_streams_ended_total`, { reason: 'stalled' }, stalledBefore + 1)).toBe(stalledBefore + 1);
      expect(await metric(inMemory, `${P}event_streams_opened_total`)).toBe(opened + 1);
      // What was written to it before it paused: at least half its buffer bound (it pauses there).
      expect(await metric(inMemory, `${P}event_stream_bytes_total`)).toBeGreaterThan(bytesBefore + 128 * 1024);
      expect(await metric(inMemory, `${P}event_streams`)).toBe(0);
    } finally {
      await reader.close();
    }
  });

  it('keeps one registry per host: both scrape, each with its own figures', async () => {
    const [disk, memory] = await Promise.all([scrapeOf(withDisk), scrapeOf(inMemory)]);
    expect(sampleValue(disk, `${P}output_log_segments`)).toBeGreaterThanOrEqual(1);
    expect(memory.types.has(`${P}output_log_segments`)).toBe(false);
    expect(sampleValue(memory, `${P}output_bytes_total`, { stream: 'stdout' })).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    expect(sampleValue(disk, `${P}output_bytes_total`, { stream: 'stdout' })).toBeLessThan(1024);
  });
});

describe('/readyz while the host stops', () => {
  it('a real host held mid-stop answers /readyz 503 stopping on its metrics port (which closes last), /healthz 200; its own port no longer listens', async () => {
    const host = await startHostServer({ credentials: new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]), metricsPort: 0 });
    const probes = (host.metricsUrl ?? '').replace(/\/metrics$/, '');
    expect((await getText(`${probes}/readyz`)).status).toBe(200);
    const seen: { step: string; ready: number; reason: unknown; health: number; ownPort: string }[] = [];
    await host.close({
      onStep: async (step) => {
        if (step !== 'flushing output logs' && step !== 'closing executor sockets') return;
        const ready = await getText(`${probes}/readyz`);
        const health = await getText(`${probes}/healthz`);
        const ownPort = await fetch(`${host.url}/readyz`).then(
          (r) => String(r.status),
          () => 'refused',
        );
        seen.push({ step, ready: ready.status, reason: (JSON.parse(ready.text) as { reason?: unknown }).reason, health: health.status, ownPort });
      },
    });
    expect(seen).toEqual([
      { step: 'flushing output logs', ready: 503, reason: 'stopping', health: 200, ownPort: 'refused' },
      { step: 'closing executor sockets', ready: 503, reason: 'stopping', health: 200, ownPort: 'refused' },
    ]);
    await expect(getText(`${probes}/readyz`)).rejects.toThrow();
  });

  it('answers 503 with the reason once the route table stops, while /healthz still answers 200', async () => {
    const routes = new HostRoutes(probeRoutes('instance', () => Promise.resolve('stopping')), undefined, 'instance', SILENT_LOGGER);
    const server = createServer((req, res) => routes.handle(req, res));
    const url = `http://127.0.0.1:${await listenOnLoopback(server, 'the probe server')}`;
    try {
      routes.stop();
      const ready = await getText(`${url}/readyz`);
      expect([ready.status, JSON.parse(ready.text)]).toEqual([503, { status: 'not ready', reason: 'stopping' }]);
      expect((await getText(`${url}/healthz`)).status).toBe(200);
      expect((await getText(`${url}/elsewhere`)).status).not.toBe(200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
