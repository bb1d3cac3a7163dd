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
import type { AdoptedEnvironment, Environment, EnvironmentManagerOptions, ExecProcess, ProcessEvent, SessionAdoption } from '../../src';
import { EnvironmentManager } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import { waitForFile } from '../support/wait-for-file';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const OPTIONS: EnvironmentManagerOptions = { clientName: 'exec-rx-adopt-spec', initializeTimeoutMs: 10_000 };

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
}

/** A direct-mode executor registered at a stub, dialling a fresh acceptor. */
async function startExecutor(environmentId: string): Promise<Executor> {
  const acceptor = trackForCleanup(await startAcceptor());
  const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => acceptor.url }));
  await startDirectExecutor({ remoteUrl: registry.url, environmentId });
  return { acceptor, environmentId };
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
async function adopt(executor: Executor, socket: Awaited<ReturnType<Acceptor['nextAccepted']>>, adoption: SessionAdoption): Promise<AdoptedEnvironment> {
  const adopted = await within(EnvironmentManager.adoptAcceptedWebsocket(executor.environmentId, socket, adoption, OPTIONS), 20_000, 'the adoption');
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

    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [{ processId: process.processId, lastSeq: before.lastSeq(), nextWriteId: process.nextWriteId }] };
    const socket = await hostDies(executor, manager);
    writeFileSync(gate, ''); // the rest is written while nobody is attached, and after
    const adopted = await adopt(executor, socket, persisted);

    expect(adopted.resumed).toBe(true);
    expect(adopted.lost).toEqual([]);
    const again = onlyProcess(adopted);
    expect(again.processId).toBe(process.processId);
    expect(adopted.manager.defaultEnvironment()?.getProcess(process.processId)).toBe(again);
    const after = await allEvents(again);
    const lastSeq = persisted.processes[0]?.lastSeq ?? 0;
    expect(seqsOf(after)).toEqual(seqsOf(after).map((_, i) => lastSeq + 1 + i));
    expect(after.at(-1)?.type).toBe('closed');
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
    expect(await process.write('one\n')).toBe('accepted');
    await within(firstValueFrom(process.lines$('stdout').pipe(filter((line) => line === 'one'))), 20_000, 'the echo of one');
    expect(process.nextWriteId).toBe(2);

    const persisted: SessionAdoption = { sessionId: sessionIdOf(environment), processes: [{ processId: process.processId, lastSeq: before.lastSeq(), nextWriteId: process.nextWriteId }] };
    const adopted = await adopt(executor, await hostDies(executor, manager), persisted);
    const again = onlyProcess(adopted);
    expect(again.nextWriteId).toBe(2);
    const echoed = within(firstValueFrom(again.lines$('stdout').pipe(filter((line) => line === 'two'))), 20_000, 'the echo of two');
    expect(await again.write('two\n')).toBe('accepted');
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
    const adopted = await adopt(executor, socket, persisted);
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
});
