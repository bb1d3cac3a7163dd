/**
 * HostClient.environments$ and processes$(envId) against a real host and the real executor, through
 * the cutting proxy: the first snapshot, a process appearing, its state moving to closed (driven through
 * the client's own start, write and endStdin), and the overview stream reconnecting by itself after its
 * connection is cut.
 */
import type { Subscription } from 'rxjs';
import type { EnvironmentOverview, ProcessResource } from '../../src/client';
import type { ApiHost } from './client-setup';
import { hostClient, PATH_ENV, portOf, startApiHost, within } from './client-setup';
import { trackForCleanup } from '../support/executor';
import type { SseProxy } from '../support/sse-proxy';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(60_000);

/** What an Observable emitted so far, with a way to await a condition on it. */
class Seen<T> {
  readonly values: T[] = [];
  error: unknown;
  private waiters: { readonly test: (values: readonly T[]) => boolean; readonly resolve: () => void }[] = [];

  push(value: T): void {
    this.values.push(value);
    this.waiters = this.waiters.filter((w) => (w.test(this.values) ? void w.resolve() : true));
  }

  /** Resolves once `test` holds on what was seen (within 15 s). */
  when(test: (values: readonly T[]) => boolean, what: string): Promise<void> {
    if (test(this.values)) return Promise.resolve();
    return within(new Promise<void>((resolve) => this.waiters.push({ test, resolve })), 15_000, what);
  }

  get last(): T | undefined {
    return this.values.at(-1);
  }
}

const stateOf = (list: readonly ProcessResource[] | undefined, id: string): string | undefined => list?.find((p) => p.id === id)?.state;

describe('HostClient.environments$ and processes$', () => {
  let setup: ApiHost;
  let proxy: SseProxy;
  const subscriptions: Subscription[] = [];

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: 'client-overview' });
    proxy = trackForCleanup(await startSseProxy(portOf(setup.host.url)));
  });
  afterAll(() => {
    for (const subscription of subscriptions) subscription.unsubscribe();
  });

  function watch(): { readonly environments: Seen<readonly EnvironmentOverview[]>; readonly processes: Seen<readonly ProcessResource[]>; readonly other: Seen<readonly ProcessResource[]> } {
    const client = hostClient(proxy.origin);
    const environments = new Seen<readonly EnvironmentOverview[]>();
    const processes = new Seen<readonly ProcessResource[]>();
    const other = new Seen<readonly ProcessResource[]>();
    subscriptions.push(client.environments$.subscribe({ next: (v) => environments.push(v), error: (e: unknown) => (environments.error = e) }));
    subscriptions.push(client.processes$(setup.environmentId).subscribe({ next: (v) => processes.push(v), error: (e: unknown) => (processes.error = e) }));
    subscriptions.push(client.processes$('no-such-environment').subscribe({ next: (v) => other.push(v), error: (e: unknown) => (other.error = e) }));
    return { environments, processes, other };
  }

  it('shows the first snapshot, a process appearing, and its state moving to closed', async () => {
    const { environments, processes, other } = watch();
    await environments.when((v) => v.length > 0, 'the first snapshot');
    const [first] = environments.values;
    expect(first).toEqual([expect.objectContaining({ id: setup.environmentId, state: 'connected', generation: 1, error: null, processCount: 0, processes: [] })]);
    expect(first?.[0]?.info).not.toBeNull();
    await processes.when((v) => v.length > 0, 'the first process list');
    expect(processes.values).toEqual([[]]);

    const direct = hostClient(setup.host.url);
    const cat = await direct.start(setup.environmentId, { argv: ['/bin/cat'], cwd: '/tmp', env: PATH_ENV, pipeStdin: true });
    expect(cat).toEqual(expect.objectContaining({ environmentId: setup.environmentId, argv: ['/bin/cat'], pipeStdin: true, tty: false, state: 'running', exitCode: null }));
    await processes.when((v) => stateOf(v.at(-1), cat.id) === 'running', 'the process running');
    expect(processes.last).toEqual([cat]);
    expect(environments.last?.[0]).toEqual(expect.objectContaining({ processCount: 1, processes: [cat] }));

    await direct.write(setup.environmentId, cat.id, 'hello through the client\n');
    await direct.endStdin(setup.environmentId, cat.id);
    await processes.when((v) => stateOf(v.at(-1), cat.id) === 'closed', 'the process closed');
    expect(processes.last).toEqual([{ ...cat, state: 'closed', exitCode: 0, exitedAt: expect.stringMatching(/^\d{4}-/) as unknown }]);
    // Every list it went through, in order, each different from the one before.
    const states = processes.values.map((list) => stateOf(list, cat.id) ?? 'none');
    expect(states[0]).toBe('none');
    expect(states.at(-1)).toBe('closed');
    expect(states.filter((s, i) => i > 0 && s === states[i - 1] && JSON.stringify(processes.values[i]) === JSON.stringify(processes.values[i - 1]))).toEqual([]);
    expect(states.filter((s) => s !== 'none' && s !== 'running' && s !== 'exited' && s !== 'closed')).toEqual([]);
    // Another environment's processes: none, once.
    expect(other.values).toEqual([[]]);

    // The process's own events, as the host holds them now.
    const events: string[] = [];
    await new Promise<void>((resolve, reject) => direct.events$(setup.environmentId, cat.id, { follow: false }).subscribe({ next: (e) => events.push(e.type === 'output' ? `output:${new TextDecoder().decode(e.chunk)}` : e.type), error: reject, complete: resolve }));
    expect(events.filter((e) => e.startsWith('output')).join('')).toBe('output:hello through the client\n');
    expect(events.at(-1)).toBe('closed');
    for (const seen of [environments, processes, other]) expect(seen.error).toBeUndefined();
  });

  it('reconnects by itself when its connection is cut, and goes on with the changes', async () => {
    const { environments, processes } = watch();
    await environments.when((v) => v.length > 0, 'the first snapshot');
    await processes.when((v) => v.length > 0, 'the first process list');
    const overviewRequests = (): number => proxy.log.filter((r) => r.path === '/api/v1/overview').length;
    const before = overviewRequests();
    const snapshots = environments.values.length;
    const lists = processes.values.length;

    expect(proxy.cutAll()).toBeGreaterThanOrEqual(1);
    // A new connection brings a new first snapshot.
    await environments.when((v) => v.length > snapshots, 'a snapshot after the cut');
    expect(overviewRequests()).toBeGreaterThan(before);
    // The same list again is not a change.
    expect(processes.values.length).toBe(lists);

    const exiter = await hostClient(setup.host.url).start(setup.environmentId, { argv: ['/bin/sh', '-c', 'exit 3'], cwd: '/tmp', env: PATH_ENV });
    await processes.when((v) => stateOf(v.at(-1), exiter.id) === 'closed', 'the new process closed, seen after the reconnect');
    expect(processes.last?.find((p) => p.id === exiter.id)).toEqual({ ...exiter, state: 'closed', exitCode: 3, exitedAt: expect.stringMatching(/^\d{4}-/) as unknown });
    expect(environments.error).toBeUndefined();
    expect(processes.error).toBeUndefined();
    for (const request of proxy.log) expect({ path: request.path, reused: request.bytesAfterRequest }).toEqual({ path: request.path, reused: 0 });
  });
});
