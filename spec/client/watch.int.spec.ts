/**
 * HostClient.watch$, host() and logUrl() against a real host and the real executor (issue 23's one
 * connection per tab): the overview and a process's events on one stream, cut by a proxy several times
 * mid-output, must give every output byte once, in order (sha256 of what the process says it wrote),
 * seqs contiguous and unique, a `connection` event at each drop and each open, and the overview must go
 * on after the process closed. A process that is not there is a `processFailed` event, not an error; a
 * refusal is. `host()` says who the token is; `logUrl()` gives a url that downloads without a token, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import type { Observable, Subscription } from 'rxjs';
import type { ApiHost } from './client-setup';
import { connected, expectWhole, GroundTruth, hostClient, OPERATOR_TOKEN, pacedScript, PATH_ENV, portOf, startApiHost, Transcript, within } from './client-setup';
import type { HostProcessEvent, WatchEvent } from '../../src/client';
import { HostApiError, HostClient } from '../../src/client';
import { FAULT_SEED, mulberry32, randomInt } from '../faults/fault-kit';
import { trackForCleanup } from '../support/executor';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(90_000);

const TOTAL_BYTES = 2 * 1024 * 1024;
const CUTS = 5;
/** Below what the 2 MiB make as SSE (base64 plus framing, plus overview snapshots). */
const CUT_RANGE: readonly [number, number] = [16 * 1024, 2 * 1024 * 1024];
const VIEW_TOKEN = 'watch-spec-view-token-do-not-print';
const SCOPED_TOKEN = 'watch-spec-scoped-token-do-not-print';
const ENV = 'client-watch';
const TOKENS = [
  { name: 'ops', secret: OPERATOR_TOKEN },
  { name: 'watcher', role: 'view', secret: VIEW_TOKEN },
  { name: 'elsewhere', environments: ['watch-other'], secret: SCOPED_TOKEN },
] as const;

const isProcessEvent = (event: WatchEvent): event is HostProcessEvent => event.type === 'output' || event.type === 'exited' || event.type === 'closed' || event.type === 'truncated';

/** What one watch$ subscription emitted, with a way to await a condition on it. */
class Watched {
  readonly events: WatchEvent[] = [];
  error: unknown;
  private readonly subscription: Subscription;
  private waiters: { readonly test: () => boolean; readonly resolve: () => void }[] = [];

  constructor(
    events$: Observable<WatchEvent>,
    private readonly onEvent: (event: WatchEvent) => void = () => undefined,
  ) {
    this.subscription = events$.subscribe({
      next: (event) => {
        this.events.push(event);
        this.onEvent(event);
        this.waiters = this.waiters.filter((w) => (w.test() ? void w.resolve() : true));
      },
      error: (error: unknown) => {
        this.error = error;
        this.waiters = this.waiters.filter((w) => (w.test() ? void w.resolve() : true));
      },
    });
  }

  when(test: () => boolean, what: string): Promise<void> {
    if (test()) return Promise.resolve();
    return within(new Promise<void>((resolve) => this.waiters.push({ test, resolve })), 30_000, what);
  }

  /** Resolves once an overview lists process `id`. */
  lists(id: string): Promise<void> {
    return this.when(() => this.events.some((e) => e.type === 'overview' && e.environments.some((env) => env.processes.some((p) => p.id === id))), `an overview listing ${id}`);
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}

describe(`HostClient.watch$, host() and logUrl() [seed ${FAULT_SEED}]`, () => {
  let setup: ApiHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-client-watch-'));
    setup = await startApiHost({ environmentId: ENV, tokens: TOKENS, host: { outputLog: { dataDir: join(work, 'data') } } });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const as = (token: string): HostClient => new HostClient({ url: setup.host.url, token });

  it('host() says who the token is; a wrong token is UNAUTHORIZED', async () => {
    expect(await hostClient(setup.host.url).host()).toEqual({ hostInstance: setup.host.instanceId, caller: { name: 'ops', role: 'operate', environments: null } });
    expect(await as(VIEW_TOKEN).host()).toEqual({ hostInstance: setup.host.instanceId, caller: { name: 'watcher', role: 'view', environments: null } });
    expect(await as(SCOPED_TOKEN).host()).toMatchObject({ caller: { name: 'elsewhere', role: 'operate', environments: ['watch-other'] } });
    await expect(as('watch-spec-wrong-token-do-not-print').host()).rejects.toMatchObject({ name: 'HostApiError', code: 'UNAUTHORIZED', status: 401 });
  });

  it(`gives every byte once across ${CUTS} cuts of its one connection, and the overview goes on after the close [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED ^ 0x3a7c);
    const offsets = Array.from({ length: CUTS }, () => randomInt(random, CUT_RANGE[0], CUT_RANGE[1])).sort((a, b) => a - b);
    const context = `seed ${FAULT_SEED}, cuts at ${offsets.join(',')}`;
    const { host } = setup;
    const proxy = trackForCleanup(await startSseProxy(portOf(host.url)));
    const direct = hostClient(host.url);
    const resource = await direct.start(ENV, { argv: ['/bin/sh', '-c', pacedScript(work, TOTAL_BYTES)], cwd: work, env: PATH_ENV });
    const process = (await connected(host, ENV)).getProcess(resource.id);
    if (process === undefined) throw new Error(`process ${resource.id} is not listed`);
    const truth = new GroundTruth(process);
    proxy.cutAt(offsets);

    // The process's events go on to a Transcript (the events$ specs' checks); the rest is kept here.
    const processPart = new Subject<HostProcessEvent>();
    const transcript = new Transcript(processPart);
    /** The last seq emitted when the proxy had seen n requests. */
    const hadAtRequests = new Map<number, number>();
    const watched = new Watched(hostClient(proxy.origin).watch$({ environmentId: ENV, processId: resource.id }), (event) => {
      if (!isProcessEvent(event)) return;
      if (event.type !== 'truncated') hadAtRequests.set(proxy.log.length, event.seq);
      processPart.next(event);
      if (event.type === 'closed') processPart.complete();
    });
    expect(await within(transcript.done, 60_000, 'the process part')).toBeUndefined();
    await truth.done;
    expectWhole(transcript, truth, TOTAL_BYTES, context);

    // One request per connection, each resuming after the last seq emitted before it.
    expect({ cuts: proxy.cuts, requests: proxy.log.length, context }).toEqual({ cuts: CUTS, requests: CUTS + 1, context });
    let had = 0;
    for (const [i, request] of proxy.log.entries()) {
      had = Math.max(had, ...[...hadAtRequests].filter(([n]) => n <= i).map(([, seq]) => seq));
      expect({ i, path: request.path, after: request.after, below: request.atOrBelowResume, context }).toEqual({ i, path: '/api/v1/overview', after: had, below: [], context });
    }
    expect(proxy.log.filter((r) => r.cutInsideFrame).length).toBeGreaterThan(0);
    // The connection's own story: open, then reconnecting (with why) and open again at each cut.
    const connection = watched.events.flatMap((e) => (e.type === 'connection' ? [e] : []));
    expect(connection.map((e) => e.state)).toEqual(['open', ...Array.from({ length: CUTS }, () => ['reconnecting', 'open'] as const).flat()]);
    for (const drop of connection.filter((e) => e.state === 'reconnecting')) expect(drop.reason).toMatch(/^(the connection dropped: |the host ended the stream)/);
    globalThis.process.stdout.write(`watch cuts: reasons ${connection.flatMap((e) => (e.reason === undefined ? [] : [e.reason])).join(' / ')}\n`);
    expect(watched.events.some((e) => e.type === 'processFailed')).toBe(false);

    // After the close, the overview goes on (and a reconnect now asks for the overview alone).
    const next = await direct.start(ENV, { argv: ['/bin/true'], cwd: '/tmp', env: PATH_ENV });
    await watched.lists(next.id);
    expect(proxy.cutAll()).toBe(1);
    await watched.when(() => proxy.log.length === CUTS + 2 && watched.events.at(-1)?.type !== 'connection', 'a reconnect after the close');
    expect(proxy.log.at(-1)?.path).toBe('/api/v1/overview');
    expect(proxy.log.at(-1)?.after).toBeUndefined();
    expect(watched.error).toBeUndefined();
    watched.stop();
  });

  it('says a process that is not there with processFailed, and the overview goes on', async () => {
    const watched = new Watched(as(VIEW_TOKEN).watch$({ environmentId: ENV, processId: 'no-such-process' }));
    await watched.when(() => watched.events.some((e) => e.type === 'processFailed'), 'processFailed');
    expect(watched.events.find((e) => e.type === 'processFailed')).toMatchObject({ type: 'processFailed', code: 'PROCESS_NOT_FOUND' });
    const next = await hostClient(setup.host.url).start(ENV, { argv: ['/bin/true'], cwd: '/tmp', env: PATH_ENV });
    await watched.lists(next.id);
    expect(watched.error).toBeUndefined();
    // Without a selection it is the overview alone.
    const plain = new Watched(as(VIEW_TOKEN).watch$());
    await plain.lists(next.id);
    expect(plain.events.filter((e) => e.type !== 'overview').map((e) => e.type)).toEqual(['connection']);
    watched.stop();
    plain.stop();
  });

  it('errors when the host refuses: a wrong token, a token of other environments', async () => {
    const wrong = new Watched(as('watch-spec-wrong-token-do-not-print').watch$());
    const scoped = new Watched(as(SCOPED_TOKEN).watch$({ environmentId: ENV, processId: 'any' }));
    await wrong.when(() => wrong.error !== undefined, 'the refusal');
    await scoped.when(() => scoped.error !== undefined, 'the refusal');
    expect(wrong.error).toBeInstanceOf(HostApiError);
    expect(wrong.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(scoped.error).toMatchObject({ code: 'FORBIDDEN_ENVIRONMENT', status: 403 });
  });

  it('logUrl() gives a view token a url that downloads the bytes once, without a token', async () => {
    const ran = await hostClient(setup.host.url).run(ENV, { argv: ['/bin/sh', '-c', 'echo out; echo err >&2'], cwd: '/tmp', env: PATH_ENV });
    const viewer = as(VIEW_TOKEN);
    const url = await viewer.logUrl(ENV, ran.processId, { stream: 'stdout' });
    expect(url.startsWith(`${setup.host.url}/api/v1/environments/${ENV}/processes/${ran.processId}/log?ticket=`)).toBe(true);
    expect(url.endsWith('&stream=stdout')).toBe(true);
    expect(url).not.toContain(VIEW_TOKEN);
    const download = await fetch(url);
    expect({ status: download.status, disposition: download.headers.get('content-disposition'), text: await download.text() }).toEqual({ status: 200, disposition: `attachment; filename="${ran.processId}.log"`, text: 'out\n' });
    const again = await fetch(url);
    expect(again.status).toBe(401);
    await again.body?.cancel();
    const both = await fetch(await viewer.logUrl(ENV, ran.processId));
    expect(await both.text()).toMatch(/^(out\nerr\n|err\nout\n)$/);
    await expect(viewer.logUrl(ENV, 'no-such-process')).rejects.toMatchObject({ code: 'PROCESS_NOT_FOUND', status: 404 });
  });
});
