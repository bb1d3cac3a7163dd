/**
 * Direct mode against the real executor (upstream's headline scenario): the executor registers, dials our
 * acceptor through a disconnectable proxy, loses its socket, keeps running, dials in again, and the host
 * recovers everything.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import type { ConnectionState, Environment, ProcessEvent } from '../../src';
import { EnvironmentManager } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import type { RegistryStub } from '../support/registry-stub';
import { waitForFile } from '../support/wait-for-file';
import type { DisconnectableProxy } from '../support/ws-proxy';
import { startDisconnectableProxy } from '../support/ws-proxy';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

interface DirectSetup {
  readonly acceptor: Acceptor;
  readonly proxy: DisconnectableProxy;
  readonly registry: RegistryStub;
  readonly manager: EnvironmentManager;
  readonly environment: Environment;
}

async function directSetup(environmentId: string): Promise<DirectSetup> {
  const acceptor = trackForCleanup(await startAcceptor());
  const proxy = trackForCleanup(await startDisconnectableProxy(acceptor.url));
  const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => proxy.url }));
  await startDirectExecutor({ remoteUrl: registry.url, environmentId });
  const manager = await EnvironmentManager.fromAcceptedWebsocket(environmentId, await acceptor.nextAccepted(), { clientName: 'exec-rx-direct-spec' });
  trackForCleanup({ stop: () => manager.close({ terminateProcesses: true }) });
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no default environment');
  return { acceptor, proxy, registry, manager, environment };
}

const stateIs = (environment: Environment, state: ConnectionState['state']): Promise<ConnectionState> =>
  firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === state)));

/** Drops the executor's connection and waits until the host sees it. */
async function drop(setup: DirectSetup): Promise<void> {
  const disconnected = stateIs(setup.environment, 'disconnected');
  setup.proxy.pause();
  await disconnected;
}

/** Lets the executor dial in again and adopts its socket as the replacement. */
async function redial(setup: DirectSetup, beforeAdopt: () => void = () => undefined): Promise<void> {
  const next = setup.acceptor.nextAccepted();
  setup.proxy.resume();
  const socket = await next;
  beforeAdopt();
  const connected = stateIs(setup.environment, 'connected');
  await setup.manager.replaceAcceptedWebsocket(setup.manager.defaultEnvironment()?.id ?? '', socket);
  await connected;
}

const outputText = (events: readonly ProcessEvent[]): string => events.map((e) => (e.type === 'output' ? Buffer.from(e.chunk).toString() : '')).join('');
const seqsOf = (events: readonly ProcessEvent[]): number[] => events.flatMap((e) => ('seq' in e ? [e.seq] : []));

describe('direct mode against the real executor', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-direct-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('recovers a running process across a dropped and re-dialled socket (upstream scenario)', async () => {
    const setup = await directSetup('env-direct-1');
    const { environment, registry } = setup;
    expect(registry.posts.map((p) => [p.method, p.path, JSON.parse(p.body)])).toEqual([['POST', '/cloud/environment/env-direct-1/direct/register', { transport: 'direct_jsonrpc_v1' }]]);

    expect((await environment.forceInfo()).executorVersion).toBe('0.171.0');
    const content = randomBytes(128 * 1024);
    writeFileSync(join(work, 'blob.bin'), content);
    expect(Buffer.compare(await environment.getFilesystem().readFile(join(work, 'blob.bin')), content)).toBe(0);

    const gate = join(work, 'GATE');
    const emitted = join(work, 'EMITTED');
    const script = `echo "ready:$$"; while [ ! -f '${gate}' ]; do sleep 0.02; done; echo "during:$$"; touch '${emitted}'; read line; echo "after:$$:$line"; exit 7`;
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV, pipeStdin: true });
    const allEvents = lastValueFrom(process.events$.pipe(toArray()));
    const ready = await firstValueFrom(process.lines$('stdout'));
    const pid = ready.replace('ready:', '');
    expect(ready).toBe(`ready:${pid}`);

    await drop(setup);
    writeFileSync(gate, '');
    await waitForFile(emitted);
    const lastSeq = process.lastPublishedSeq;
    let readSettled = false;
    const pendingRead = process.read(lastSeq, null, 0).finally(() => {
      readSettled = true;
    });

    await redial(setup, () => expect(readSettled).toBe(false));
    expect(setup.manager.defaultEnvironment()).toBe(environment);
    const read = await pendingRead;
    expect(read.chunks.map((c) => Buffer.from(c.chunk).toString()).join('')).toBe(`during:${pid}\n`);

    await expect(process.write('hello\n')).resolves.toBeUndefined();
    const events = await allEvents;
    expect(seqsOf(events)).toEqual(seqsOf(events).map((_, i) => i + 1));
    expect(events.at(-1)?.type).toBe('closed');
    expect(events.filter((e) => e.type !== 'output').map((e) => (e.type === 'exited' ? `exited:${e.exitCode}` : e.type))).toEqual(['exited:7', 'closed']);
    expect(outputText(events)).toBe(`ready:${pid}\nduring:${pid}\nafter:${pid}:hello\n`);
  });

  it('delivers every line exactly once, in order, across five drops', async () => {
    const setup = await directSetup('env-direct-2');
    const gate = join(work, 'GATE-2');
    const script = `i=0; while [ ! -f '${gate}' ]; do i=$((i+1)); echo "line $i"; sleep 0.02; done; echo end`;
    const { process } = await setup.environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });
    const linesPromise = lastValueFrom(process.lines$('stdout').pipe(toArray()));
    for (let drop_ = 0; drop_ < 5; drop_ += 1) {
      const after = process.lastPublishedSeq;
      await firstValueFrom(process.events$.pipe(filter((e) => e.type === 'output' && e.seq > after)));
      await drop(setup);
      await redial(setup);
    }
    writeFileSync(gate, '');
    const lines = await linesPromise;
    expect(lines.at(-1)).toBe('end');
    const numbered = lines.slice(0, -1);
    expect(numbered.length).toBeGreaterThan(5);
    expect(numbered).toEqual(numbered.map((_, i) => `line ${i + 1}`));
  });

  it('fails the environment and its processes with "recovery timed out" when the executor stays away past the deadline', async () => {
    const setup = await directSetup('env-direct-3');
    const { process } = await setup.environment.getExecBackend().start({ argv: ['sleep', '60'], cwd: work, env: PATH_ENV });
    const processEvents = lastValueFrom(process.events$.pipe(toArray()));
    await drop(setup);
    const pendingCall = setup.environment.forceInfo().then(() => undefined, (e: unknown) => e);
    const failed = await stateIs(setup.environment, 'failed');
    expect(failed).toMatchObject({ state: 'failed', error: { code: 'RESUME_FAILED', reason: 'timeout' } });
    expect(String(failed.state === 'failed' ? failed.error.message : '')).toContain('failed to resume exec-server session: recovery timed out after 25s');
    expect(await pendingCall).toMatchObject({ code: 'RESUME_FAILED' });
    expect((await processEvents).at(-1)).toMatchObject({ type: 'failed', error: { code: 'PROCESS_FAILED' } });
    setup.proxy.resume();
  }, 60_000);
});
