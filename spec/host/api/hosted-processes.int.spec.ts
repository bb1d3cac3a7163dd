/**
 * What the operator API keeps of each process it started (its stdin and FIFO helper) goes with the
 * process when it leaves its environment's list, released or evicted, without any client listing
 * processes (real executor, `HostedProcesses` driven directly).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, of } from 'rxjs';
import type { Environment } from '../../../src';
import { EnvironmentManager } from '../../../src';
import { HostedProcesses } from '../../../src/host/api/hosted-processes';
import { startDigestOf, startFingerprintOf } from '../../../src/host/api/keyed-starts';
import { DiskStateStore } from '../../../src/store/disk/disk-state-store';
import { STARTS_DIR } from '../../../src/store/disk/start-records';
import { MemoryStateStore } from '../../../src/store/memory/memory-state-store';
import { startListeningExecutor } from '../../support/executor';

const ENV = 'hosted-1';

describe('HostedProcesses (real executor)', () => {
  let manager: EnvironmentManager;
  let environment: Environment;

  beforeAll(async () => {
    const executor = await startListeningExecutor();
    // Two ended processes stay listed at most: a third to end evicts the oldest.
    manager = await EnvironmentManager.connect(ENV, executor.url ?? '', { clientName: 'exec-rx-spec', keepClosed: 2 });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
  });
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
  });

  it('drops the extras of a pipeStdin process, and stops its stdin, once it is released: no list call needed', async () => {
    const processes = new HostedProcesses({ state: new MemoryStateStore() });
    const { hosted } = await processes.start(ENV, environment, { argv: ['cat'], cwd: '/tmp', pipeStdin: true }, undefined);
    const stdin = hosted.stdin;
    if (stdin === undefined) throw new Error('no stdin');
    const disposed = jest.spyOn(stdin, 'dispose');
    expect({ pipeStdin: hosted.pipeStdin, kept: processes.extrasKept }).toEqual({ pipeStdin: true, kept: 1 });
    await stdin.write('1', new Uint8Array(Buffer.from('through the fifo\n')));
    await stdin.end();
    expect(await hosted.process.collect()).toEqual({ stdout: 'through the fifo\n', stderr: '', pty: '', exitCode: 0 });
    // Listed while it stays so (closed, not released yet): the API still knows its stdin.
    expect(processes.get(ENV, environment, hosted.process.processId)).toBe(hosted);
    const disposedBefore = disposed.mock.calls.length;
    hosted.process.release();
    expect({ kept: processes.extrasKept, listed: environment.getProcess(hosted.process.processId) }).toEqual({ kept: 0, listed: undefined });
    expect(disposed.mock.calls.length).toBe(disposedBefore + 1);
  });

  it('drops the extras of processes evicted from the list (keepClosed), keeping those still listed', async () => {
    const processes = new HostedProcesses({ state: new MemoryStateStore() });
    const started = [];
    for (const word of ['one', 'two', 'three']) {
      const { hosted } = await processes.start(ENV, environment, { argv: ['echo', word], cwd: '/tmp' }, undefined);
      expect(await firstValueFrom(hosted.process.exitCode$)).toBe(0);
      await hosted.process.collect();
      started.push(hosted);
    }
    const [first, second, third] = started.map((hosted) => hosted.process.processId);
    expect({ kept: processes.extrasKept, first: environment.getProcess(first ?? ''), listed: [second, third].map((id) => environment.getProcess(id ?? '')?.processId) }).toEqual({
      kept: 2,
      first: undefined,
      listed: [second, third],
    });
    for (const hosted of started) hosted.process.release();
    expect(processes.extrasKept).toBe(0);
  });

  it('answers a start from the process it returned, and says when it was a replay of the same Idempotency-Key', async () => {
    const processes = new HostedProcesses({ state: new MemoryStateStore() });
    const request = { argv: ['sh', '-c', 'read line; echo "$line"'], cwd: '/tmp', pipeStdin: true };
    const idempotency = { tokenId: 'token-1', key: 'key-1' };
    const first = await processes.start(ENV, environment, request, idempotency);
    const again = await processes.start(ENV, environment, request, idempotency);
    expect({ replayed: [first.replayed, again.replayed], same: again.hosted === first.hosted }).toEqual({ replayed: [false, true], same: true });
    const resource = await processes.startedResource(environment, first);
    expect(resource).toEqual({ id: first.hosted.process.processId, environmentId: ENV, argv: request.argv, tty: false, pipeStdin: true, state: 'running', exitCode: null, error: null, startedAt: expect.stringMatching(/^\d{4}-/) as unknown, exitedAt: null, startedBy: null });
    await first.hosted.stdin?.end();
    await first.hosted.process.collect();
    expect(await processes.startedResource(environment, again)).toEqual({ ...resource, state: 'closed', exitCode: 0, exitedAt: expect.stringMatching(/^\d{4}-/) as unknown });
    first.hosted.process.release();
    await expect(processes.startedResource(environment, again)).rejects.toMatchObject({ status: 404, code: 'PROCESS_NOT_FOUND' });
  });

  it('sends no start before the executor\'s session is on the disk (a host restarted after the start takes it back from there)', async () => {
    let recordWritten: () => void = () => undefined;
    const written = new Promise<void>((resolve) => {
      recordWritten = resolve;
    });
    let markAsked: (id: string) => void = () => undefined;
    const asked = new Promise<string>((resolve) => {
      markAsked = resolve;
    });
    const processes = new HostedProcesses({
      state: new MemoryStateStore(),
      environments: {
        epochOf: () => 0,
        takenBackStdin: () => undefined,
        takeBackSettled: () => of(undefined),
        sessionRecorded: (id) => {
          markAsked(id);
          return written;
        },
      },
    });
    const spy = jest.spyOn(environment.getExecBackend(), 'start');
    try {
      const starting = processes.start(ENV, environment, { argv: ['true'], cwd: '/tmp' }, undefined);
      expect(await asked).toBe(ENV);
      // The start now waits on the session's record alone, which nothing writes yet.
      await new Promise((resolve) => setImmediate(resolve));
      expect(spy.mock.calls.length).toBe(0);
      recordWritten();
      const { hosted } = await starting;
      expect(spy.mock.calls.length).toBe(1);
      await hosted.process.collect();
      hosted.process.release();
    } finally {
      spy.mockRestore();
    }
  });

  describe('with a data dir: keyed starts recorded before they are sent', () => {
    let dataDir: string;
    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-hosted-starts-'));
    });
    afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

    it('has the record on the disk before process/start goes out, and marks it started once answered', async () => {
      const state = await DiskStateStore.open(dataDir);
      const processes = new HostedProcesses({ state });
      const digest = startDigestOf('token-1', ENV, 'key-recorded');
      const backend = environment.getExecBackend();
      const original = backend.start.bind(backend);
      const recordedAtSend: boolean[] = [];
      const spy = jest.spyOn(backend, 'start').mockImplementation((params, options) => {
        recordedAtSend.push(existsSync(join(dataDir, STARTS_DIR, `${digest}.json`)));
        return original(params, options);
      });
      try {
        const { hosted } = await processes.start(ENV, environment, { argv: ['true'], cwd: '/tmp' }, { tokenId: 'token-1', key: 'key-recorded' });
        expect(recordedAtSend).toEqual([true]);
        await hosted.process.collect();
        hosted.process.release();
        // markStarted runs in the background: a reopen reads it once written.
        await state.close();
        const reopened = await DiskStateStore.open(dataDir);
        expect(await reopened.start(digest)).toMatchObject({ environmentId: ENV, processId: hosted.process.processId });
        await reopened.close();
      } finally {
        spy.mockRestore();
        await state.close();
      }
    });

    it('a restarted host (new HostedProcesses, reloaded records) replays a listed process, and answers START_UNKNOWN for one its executor lacks', async () => {
      const request = { argv: ['sh', '-c', 'read line'], cwd: '/tmp', pipeStdin: true };
      const stateBefore = await DiskStateStore.open(dataDir);
      const before = new HostedProcesses({ state: stateBefore });
      const first = await before.start(ENV, environment, request, { tokenId: 'token-1', key: 'key-listed' });
      await stateBefore.close(); // marked started in the background: the close waits for it
      const state = await DiskStateStore.open(dataDir);
      // A start recorded, never sent (the host crashed between the record and the send).
      await state.recordStart({ digest: startDigestOf('token-1', ENV, 'key-unsent'), environmentId: ENV, processId: 'never-sent', fingerprint: startFingerprintOf(request) }, 0);
      const after = new HostedProcesses({ state });

      const replayed = await after.start(ENV, environment, request, { tokenId: 'token-1', key: 'key-listed' });
      expect({ replayed: replayed.replayed, processId: replayed.hosted.process.processId, argv: replayed.argv }).toEqual({ replayed: true, processId: first.hosted.process.processId, argv: request.argv });
      await expect(after.start(ENV, environment, { ...request, argv: ['other'] }, { tokenId: 'token-1', key: 'key-listed' })).rejects.toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
      await expect(after.start(ENV, environment, request, { tokenId: 'token-1', key: 'key-unsent' })).rejects.toMatchObject({ status: 409, code: 'START_UNKNOWN' });

      // Its stdin's record went to the store of before, closed now: the process is stopped, not written to.
      await first.hosted.process.terminate();
      await first.hosted.process.collect();
      first.hosted.process.release();
      // It started, and has left the list since: 404, not a second start.
      await expect(new HostedProcesses({ state }).start(ENV, environment, request, { tokenId: 'token-1', key: 'key-listed' })).rejects.toMatchObject({ status: 404, code: 'PROCESS_NOT_FOUND' });
      await state.close();
    });
  });
});
