/**
 * A host restart costs nothing (issue 21): a direct-mode executor dialled a loopback acceptor, the host
 * "dies" (its manager closes without terminating anything: the executor keeps the session 80 s), the
 * executor dials in again, and a new manager takes the session over from what the host persisted: the
 * session id, and per process its last seq and next writeId.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import type { AdoptedEnvironment, ConnectionState, Environment, EnvironmentManagerOptions, ExecProcess, HistoryFactory, HistoryInput, ProcessEvent, SessionAdoption } from '../../src';
import { EnvironmentManager, memoryHistories, RpcError } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { acceptedFixture } from '../support/accepted-fixture';
import { ScriptedPeer } from '../support/scripted-peer';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import { waitForFile } from '../support/wait-for-file';
import type { DisconnectableProxy } from '../support/ws-proxy';
import { startDisconnectableProxy } from '../support/ws-proxy';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
/**
 * The history holds every event of these processes (4002 lines at most): under load the start response
 * and hundreds of output notifications can arrive in one read, before the spec subscribes, and the
 * default 256 events would drop the first lines (a truncated marker), which is not what these specs test.
 */
const OPTIONS: EnvironmentManagerOptions = { clientName: 'exec-rx-adopt-spec', initializeTimeoutMs: 10_000, processHistory: { historyEvents: 10_000 } };

/** Rejects when `promise` has not settled within `ms`: every wait of this file is bounded. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

interface Executor {
  readonly acceptor: Acceptor;
  readonly environmentId: string;
  /** Between the executor and the acceptor: pausing it drops the executor's socket. */
  readonly proxy: DisconnectableProxy;
}

/** A direct-mode executor registered at a stub, dialling a fresh acceptor through a proxy. */
async function startExecutor(environmentId: string): Promise<Executor> {
  const acceptor = trackForCleanup(await startAcceptor());
  const proxy = trackForCleanup(await startDisconnectableProxy(acceptor.url));
  const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => proxy.url }));
  await startDirectExecutor({ remoteUrl: registry.url, environmentId });
  return { acceptor, environmentId, proxy };
}

/** The first host: a manager from the executor's first socket. */
async function firstHost(executor: Executor): Promise<{ manager: EnvironmentManager; environment: Environment }> {
  const socket = await within(executor.acceptor.nextAccepted(), 20_000, 'the executor to dial in');
  const manager = await EnvironmentManager.fromAcceptedWebsocket(executor.environmentId, socket, OPTIONS);
  trackForCleanup({ stop: () => manager.close() });
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no default environment');
  return { manager, environment };
}

/** The host dies: its manager closes without terminating; resolves with the executor's next socket. */
async function hostDies(executor: Executor, manager: EnvironmentManager): Promise<Awaited<ReturnType<Acceptor['nextAccepted']>>> {
  const redialled = executor.acceptor.nextAccepted();
  await manager.close();
  return within(redialled, 20_000, 'the executor to dial in again');
}

/** The restarted host takes the session over; the manager is closed (terminating) after the test. */
async function adopt(executor: Executor, socket: Awaited<ReturnType<Acceptor['nextAccepted']>>, adoption: SessionAdoption, options = OPTIONS): Promise<AdoptedEnvironment> {
  const adopted = await within(EnvironmentManager.adoptAcceptedWebsocket(executor.environmentId, socket, adoption, options), 20_000, 'the adoption');
  trackForCleanup({ stop: () => adopted.manager.close({ terminateProcesses: true }) });
  return adopted;
}

const sessionIdOf = (environment: Environment): string => {
  const sessionId = environment.client.sessionId;
  if (sessionId === undefined) throw new Error('no session id');
  return sessionId;
};

const onlyProcess = (adopted: AdoptedEnvironment): ExecProcess => {
  const [process] = adopted.processes;
  if (process === undefined || adopted.processes.length !== 1) throw new Error(`expected one adopted process, got ${adopted.processes.length}`);
  return process;
};

/** Everything a host would have seen of a process: the events as they are published. */
function follow(process: ExecProcess): { readonly events: ProcessEvent[]; readonly lastSeq: () => number } {
  const events: ProcessEvent[] = [];
  process.events$.subscribe((event) => events.push(event));
  return { events, lastSeq: () => events.reduce((last, e) => ('seq' in e ? Math.max(last, e.seq) : last), 0) };
}

const allEvents = (process: ExecProcess): Promise<ProcessEvent[]> => within(lastValueFrom(process.events$.pipe(toArray())), 30_000, `process ${process.processId} to close`);
const seqsOf = (events: readonly ProcessEvent[]): number[] => events.flatMap((e) => ('seq' in e ? [e.seq] : []));
const outputOf = (events: readonly ProcessEvent[]): Buffer => Buffer.concat(events.flatMap((e) => (e.type === 'output' ? [Buffer.from(e.chunk)] : [])));
const exitCodes = (events: readonly ProcessEvent[]): number[] => events.flatMap((e) => (e.type === 'exited' ? [e.exitCode] : []));

describe('EnvironmentManager.adoptAcceptedWebsocket against the real executor', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-adopt-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('resumes the session: the adopted process goes on from lastSeq + 1, every line once, in order, then its exit code', async () => {
    const executor = await startExecutor('env-adopt-1');
    const { manager, environment } = await firstHost(executor);
    const gate = join(work, 'GATE-1');
    const script = `echo "pid $$"; i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; while [ ! -f '${gate}' ]; do sleep 0.02; done; while [ $i -lt 4000 ]; do echo "line $i"; i=$((i+1)); done; echo "pid $$"; exit 3`;
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });
    const before = follow(process);
    await within(firstValueFrom(process.lines$('stdout').pipe(filter((line) => line === 'line 1999'))), 20_000, 'line 1999');

    const record = { processId: process.processId, lastSeq: before.lastSeq(), nextWriteId: process.nextWriteId };
    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [record] };
    const socket = await hostDies(executor, manager);
    writeFileSync(gate, ''); // the rest is written while nobody is attached, and after
    const adopted = await adopt(executor, socket, persisted);

    expect(adopted.resumed).toBe(true);
    expect(adopted.lost).toEqual([]);
    const again = onlyProcess(adopted);
    expect(again.processId).toBe(process.processId);
    expect(adopted.manager.defaultEnvironment()?.getProcess(process.processId)).toBe(again);
    const after = await allEvents(again);
    const lastSeq = record.lastSeq;
    // The last event whole: a `failed` one shows its error (a clean-clone run under load 10 ended `failed` once).
    const last = after.at(-1);
    expect({ last: last?.type, error: last?.type === 'failed' ? last.error.message : undefined, count: after.length }).toMatchObject({ last: 'closed', error: undefined });
    expect(seqsOf(after)).toEqual(seqsOf(after).map((_, i) => lastSeq + 1 + i));
    expect(exitCodes(after)).toEqual([3]);

    const kept = before.events.filter((e) => 'seq' in e && e.seq <= lastSeq);
    const lines = Buffer.concat([outputOf(kept), outputOf(after)]).toString().split('\n');
    const pid = lines[0] ?? '';
    expect(pid).toMatch(/^pid \d+$/);
    expect(lines).toEqual([pid, ...Array.from({ length: 4000 }, (_, i) => `line ${i}`), pid, '']);
  });

  it('a write after adoption goes on with the persisted writeId and arrives once', async () => {
    const executor = await startExecutor('env-adopt-2');
    const { manager, environment } = await firstHost(executor);
    const { process } = await environment.getExecBackend().start({ argv: ['cat'], cwd: work, env: PATH_ENV, pipeStdin: true });
    const before = follow(process);
    await expect(process.write('one\n')).resolves.toBeUndefined();
    await within(firstValueFrom(process.lines$('stdout').pipe(filter((line) => line === 'one'))), 20_000, 'the echo of one');
    expect(process.nextWriteId).toBe(2);

    const record = { processId: process.processId, lastSeq: before.lastSeq(), nextWriteId: process.nextWriteId };
    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [record] };
    const adopted = await adopt(executor, await hostDies(executor, manager), persisted);
    const again = onlyProcess(adopted);
    expect(again.nextWriteId).toBe(2);
    const echoed = within(firstValueFrom(again.lines$('stdout').pipe(filter((line) => line === 'two'))), 20_000, 'the echo of two');
    await expect(again.write('two\n')).resolves.toBeUndefined();
    await echoed;
    expect(again.nextWriteId).toBe(3);
    await again.terminate();
    const after = await allEvents(again);
    expect(outputOf(before.events).toString() + outputOf(after).toString()).toBe('one\ntwo\n');
  });

  it('a session the executor no longer has: resumed false, a new working session, every record lost', async () => {
    const executor = await startExecutor('env-adopt-3');
    const socket = await within(executor.acceptor.nextAccepted(), 20_000, 'the executor to dial in');
    const sessionId = randomUUID();
    const adopted = await adopt(executor, socket, {
      sessionId,
      processes: [
        { processId: 'gone-1', lastSeq: 12, nextWriteId: 1 },
        { processId: 'gone-2', lastSeq: 0, nextWriteId: 4 },
      ],
    });

    expect(adopted.resumed).toBe(false);
    expect(adopted.processes).toEqual([]);
    const reason = `the executor no longer has session ${sessionId} (its 80 s retention passed); the process was killed with it`;
    expect(adopted.lost).toEqual([
      { processId: 'gone-1', reason },
      { processId: 'gone-2', reason },
    ]);
    const environment = adopted.manager.defaultEnvironment();
    expect(environment?.client.sessionId).toEqual(expect.any(String));
    expect(environment?.client.sessionId).not.toBe(sessionId);
    expect(environment?.getProcess('gone-1')).toBeUndefined();
    const started = await environment?.getExecBackend().start({ argv: ['echo', 'fresh'], cwd: work, env: PATH_ENV });
    expect(await within(started?.process.collect() ?? Promise.reject(new Error('no environment')), 20_000, 'echo')).toEqual({ stdout: 'fresh\n', stderr: '', pty: '', exitCode: 0 });
  });

  it('a process the resumed session no longer knows is lost; the others are adopted', async () => {
    const executor = await startExecutor('env-adopt-4');
    const { manager, environment } = await firstHost(executor);
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', 'echo up; exec sleep 30'], cwd: work, env: PATH_ENV });
    await within(firstValueFrom(process.lines$('stdout')), 20_000, 'up');
    const persisted: SessionAdoption = {
      sessionId: sessionIdOf(environment),
      processes: [
        { processId: 'never-started', lastSeq: 3, nextWriteId: 1 },
        { processId: process.processId, lastSeq: process.lastPublishedSeq, nextWriteId: process.nextWriteId },
      ],
    };
    const adopted = await adopt(executor, await hostDies(executor, manager), persisted);

    expect(adopted.resumed).toBe(true);
    expect(adopted.lost).toEqual([{ processId: 'never-started', reason: expect.stringMatching(/^the executor no longer knows process never-started in session .* \(unknown process id never-started\)$/) }]);
    const again = onlyProcess(adopted);
    expect(again.processId).toBe(process.processId);
    expect(adopted.manager.defaultEnvironment()?.getProcess('never-started')).toBeUndefined();
    expect(await again.terminate()).toBe(true);
    expect(exitCodes(await allEvents(again))).toEqual([137]);
  });

  it('when the executor no longer holds lastSeq + 1: ONE truncated marker with the counts, then the rest', async () => {
    const executor = await startExecutor('env-adopt-5');
    const { manager, environment } = await firstHost(executor);
    const gate = join(work, 'GATE-5');
    const done = join(work, 'DONE-5');
    const total = 3_000_000;
    const script = `echo ready; while [ ! -f '${gate}' ]; do sleep 0.02; done; head -c ${total} /dev/zero; touch '${done}'`;
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });
    const before = follow(process);
    await within(firstValueFrom(process.lines$('stdout')), 20_000, 'ready');
    const lastSeq = before.lastSeq();
    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [{ processId: process.processId, lastSeq, nextWriteId: process.nextWriteId }] };

    const socket = await hostDies(executor, manager);
    writeFileSync(gate, '');
    await waitForFile(done); // all of it was written while nobody was attached: more than the executor's 1 MiB window
    // A history larger than the executor's window: its marker then counts only what the executor evicted.
    const adopted = await adopt(executor, socket, persisted, { ...OPTIONS, processHistory: { historyEvents: 4096, historyBytes: 8 * 1024 * 1024 } });
    const after = await allEvents(onlyProcess(adopted));

    const [marker, ...rest] = after;
    const firstSeq = seqsOf(rest)[0] ?? 0;
    expect(firstSeq).toBeGreaterThan(lastSeq + 1);
    expect(marker).toEqual({ type: 'truncated', nextSeq: firstSeq, droppedEvents: firstSeq - lastSeq - 1, droppedBytes: 0 });
    expect(after.filter((e) => e.type === 'truncated')).toHaveLength(1);
    expect(seqsOf(rest)).toEqual(seqsOf(rest).map((_, i) => firstSeq + i));
    expect(exitCodes(rest)).toEqual([0]);
    expect(rest.at(-1)?.type).toBe('closed');
    const output = outputOf(rest);
    expect(output.length).toBeGreaterThan(0);
    expect(output.length).toBeLessThan(total);
    const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    expect(sha256(output)).toBe(sha256(Buffer.alloc(output.length)));
  });

  it('the adopted manager is like any other: a dropped socket is replaced, the process carries on, close ends it', async () => {
    const executor = await startExecutor('env-adopt-6');
    const { manager, environment } = await firstHost(executor);
    const gate = join(work, 'GATE-6');
    const script = `echo first; while [ ! -f '${gate}' ]; do sleep 0.02; done; echo second`;
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });
    await within(firstValueFrom(process.lines$('stdout')), 20_000, 'first');
    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [{ processId: process.processId, lastSeq: process.lastPublishedSeq, nextWriteId: process.nextWriteId }] };
    const adopted = await adopt(executor, await hostDies(executor, manager), persisted);
    const again = onlyProcess(adopted);
    const adoptedEnvironment = adopted.manager.defaultEnvironment();
    if (adoptedEnvironment === undefined) throw new Error('no default environment');
    const states: ConnectionState['state'][] = [];
    adoptedEnvironment.connectionState$.subscribe((state) => states.push(state.state));
    const stateIs = (state: ConnectionState['state']): Promise<ConnectionState> => within(firstValueFrom(adoptedEnvironment.connectionState$.pipe(filter((s) => s.state === state))), 20_000, state);

    const disconnected = stateIs('disconnected');
    executor.proxy.pause();
    await disconnected;
    const next = executor.acceptor.nextAccepted();
    executor.proxy.resume();
    const socket = await within(next, 20_000, 'the executor to dial in again');
    const connected = stateIs('connected');
    await adopted.manager.replaceAcceptedWebsocket(executor.environmentId, socket);
    await connected;
    expect(states).toEqual(['connected', 'disconnected', 'connected']);

    const rest = allEvents(again);
    writeFileSync(gate, '');
    const events = await rest;
    expect(outputOf(events).toString()).toBe('second\n');
    expect(exitCodes(events)).toEqual([0]);
    await adopted.manager.close();
    expect(states.at(-1)).toBe('closed');
  });
});

/** The wire, step by step, with a scripted executor (what the real one cannot be made to do on demand). */
describe('EnvironmentManager.adoptAcceptedWebsocket on the wire', () => {
  const fixture = acceptedFixture();
  const scripted: EnvironmentManagerOptions = { clientName: 'host-test', initializeTimeoutMs: 5_000, keepalive: false };

  /** A history factory that records what each process appends. */
  function recordingHistories(): { readonly factory: HistoryFactory; readonly appended: Map<string, HistoryInput[]> } {
    const appended = new Map<string, HistoryInput[]>();
    const memory = memoryHistories({});
    const factory: HistoryFactory = (processId) => {
      const history = memory(processId);
      const inputs: HistoryInput[] = [];
      appended.set(processId, inputs);
      const append = history.append.bind(history);
      history.append = (event: HistoryInput): void => {
        inputs.push(event);
        append(event);
      };
      return history;
    };
    return { factory, appended };
  }

  async function dialIn(): Promise<{ peer: ScriptedPeer; socket: Awaited<ReturnType<Acceptor['nextAccepted']>> }> {
    const peer = await ScriptedPeer.dial(fixture.acceptor().url);
    fixture.peers.push(peer);
    return { peer, socket: await within(fixture.acceptor().nextAccepted(), 5_000, 'the accepted socket') };
  }

  it('resumes first with the routes in place: output sent during initialize is kept, the read starts after lastSeq', async () => {
    const { peer, socket } = await dialIn();
    const { factory, appended } = recordingHistories();
    const adopting = EnvironmentManager.adoptAcceptedWebsocket('environment-1', socket, { sessionId: 'session-1', processes: [{ processId: 'p1', lastSeq: 7, nextWriteId: 5 }] }, { ...scripted, outputHistory: factory });
    const initialize = await peer.expectRequest('initialize');
    expect(initialize.params).toEqual({ clientName: 'host-test', resumeSessionId: 'session-1' });
    peer.send({ method: 'process/output', params: { processId: 'p1', seq: 9, stream: 'stdout', chunk: Buffer.from('nine').toString('base64') } });
    peer.reply(initialize.id, { sessionId: 'session-1' });
    expect(await peer.receive()).toEqual({ method: 'initialized', params: {} });
    const read = await peer.expectRequest('process/read');
    expect(read.params).toEqual({ processId: 'p1', afterSeq: 7, maxBytes: null, waitMs: 0 });
    peer.reply(read.id, { chunks: [{ seq: 8, stream: 'stdout', chunk: Buffer.from('eight').toString('base64') }], nextSeq: 10, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false });
    const adopted = await within(adopting, 5_000, 'the adoption');
    fixture.managers.push(adopted.manager);

    expect(adopted.resumed).toBe(true);
    const process = onlyProcess(adopted);
    expect(process.nextWriteId).toBe(5);
    expect(process.lastPublishedSeq).toBe(9);
    expect(appended.get('p1')?.map((e) => ('seq' in e ? e.seq : e.type))).toEqual([8, 9]);
    const write = process.write('x');
    const sent = await peer.expectRequest('process/write');
    expect(sent.params).toEqual({ processId: 'p1', chunk: Buffer.from('x').toString('base64'), writeId: '5' });
    peer.reply(sent.id, { status: 'accepted' });
    await expect(write).resolves.toBeUndefined();
    expect(process.nextWriteId).toBe(6);
  });

  it('an unknown session: a plain initialize follows on the same socket; the records are lost and their histories untouched', async () => {
    const { peer, socket } = await dialIn();
    const { factory, appended } = recordingHistories();
    const adopting = EnvironmentManager.adoptAcceptedWebsocket('environment-1', socket, { sessionId: 'session-old', processes: [{ processId: 'p1', lastSeq: 3, nextWriteId: 1 }] }, { ...scripted, outputHistory: factory });
    const first = await peer.expectRequest('initialize');
    peer.replyError(first.id, -32600, 'unknown session id session-old');
    await peer.completeInitialize('host-test', 'session-new');
    const adopted = await within(adopting, 5_000, 'the adoption');
    fixture.managers.push(adopted.manager);

    expect(adopted).toMatchObject({ resumed: false, processes: [], lost: [{ processId: 'p1', reason: 'the executor no longer has session session-old (its 80 s retention passed); the process was killed with it' }] });
    expect(adopted.manager.defaultEnvironment()?.client.sessionId).toBe('session-new');
    expect(appended.get('p1')).toEqual([]);
  });

  it('any other handshake failure rejects with the typed error and closes the socket; nothing is appended', async () => {
    const { peer, socket } = await dialIn();
    const { factory, appended } = recordingHistories();
    const adopting = EnvironmentManager.adoptAcceptedWebsocket('environment-1', socket, { sessionId: 'session-1', processes: [{ processId: 'p1', lastSeq: 3, nextWriteId: 1 }] }, { ...scripted, outputHistory: factory });
    const initialize = await peer.expectRequest('initialize');
    peer.replyError(initialize.id, -32603, 'internal error');

    const error = await adopting.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: 'RPC_ERROR', method: 'initialize', rpcCode: -32603 });
    await within(peer.closed, 5_000, 'the socket to close');
    expect(appended.get('p1')).toEqual([]);
  });
});
