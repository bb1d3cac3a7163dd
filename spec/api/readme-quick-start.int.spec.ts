/**
 * The accepted-socket path with a bare WebSocket server, run for real: a codex executor in direct mode
 * dials the host, the host starts a process, the proxy drops the socket, the executor dials in again and
 * the output goes on. A real direct-mode executor first POSTs a signed registration and only then dials,
 * so a registry stub (spec/support/registry-stub.ts) stands in front of `quickStart` here: this was the
 * README's quick start until it said so nowhere. The README now shows a listening executor (run verbatim
 * by spec/docs/readme.int.spec.ts) and, for direct mode, `exec-rx/host`, which does the registration.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { EnvironmentManager } from '../../src';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import { startDisconnectableProxy } from '../support/ws-proxy';

function quickStart(port: number, log: (...args: unknown[]) => void): { wss: WebSocketServer; manager: () => Promise<EnvironmentManager> | undefined } {
  const wss = new WebSocketServer({ port, maxPayload: 256 * 1024 * 1024 });
  let manager: Promise<EnvironmentManager> | undefined;

  wss.on('connection', (socket) => {
    if (manager === undefined) {
      // The executor's first socket: a new session.
      manager = EnvironmentManager.fromAcceptedWebsocket('env-1', socket, { clientName: 'my-host' });
      void manager.then(run);
    } else {
      // The executor dialled in again: adopt the socket into the same session; output resumes gap-free.
      void manager.then((m) => m.replaceAcceptedWebsocket('env-1', socket));
    }
  });

  async function run(m: EnvironmentManager): Promise<void> {
    const environment = m.getEnvironment('env-1');
    if (environment === undefined) return;
    environment.connectionState$.subscribe((s) => log('connection:', s.state));
    // Every process of the environment, a new list on each change: what a UI binds its table to.
    environment.processes$.subscribe((list) => log('processes:', list.map((p) => `${p.argv[0] ?? ''} ${p.state}`).join(', ')));
    const { process } = await environment.getExecBackend().start({ argv: ['sh', '-c', 'for i in 1 2 3 4 5; do echo $i; sleep 0.3; done'], cwd: '/tmp' });
    process.lines$('stdout').subscribe((line) => log('out:', line));
    process.exitCode$.subscribe((code) => {
      log('exit', code);
      // A late subscriber gets the retained history, then live output; `afterSeq` resumes after what it
      // already has (one joining past the history bound gets a `truncated` marker first, or an error
      // unless it passes `allowTruncated: true`).
      process.lines$('stdout', { afterSeq: 2 }).subscribe((line) => log('late:', line));
    });
  }
  return { wss, manager: () => manager };
}

describe('accepted sockets behind a registry stub (the former README quick start)', () => {

  it('accepts the executor, streams output, and survives a replacement', async () => {
    const lines: string[] = [];
    let exited: () => void = () => undefined;
    const exit = new Promise<void>((resolve) => {
      exited = resolve;
    });
    let firstLine: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      firstLine = resolve;
    });
    const { wss, manager } = quickStart(0, (...args) => {
      lines.push(args.join(' '));
      if (args[0] === 'out:') firstLine();
      // exited may be sequenced before the last output (docs/protocol.md#sequence-numbers): wait for the close and every late line.
      if (lines.includes('processes: sh closed') && lines.filter((l) => l.startsWith('late:')).length === 3) exited();
    });
    trackForCleanup({
      stop: async () => {
        await (await manager())?.close({ terminateProcesses: true });
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      },
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const proxy = trackForCleanup(await startDisconnectableProxy(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`));
    const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => proxy.url }));
    await startDirectExecutor({ remoteUrl: registry.url, environmentId: 'env-1' });

    await started;
    const connections = proxy.connectionCount;
    proxy.pause();
    proxy.resume();
    await proxy.waitForConnection(connections + 1);
    await exit;
    expect(lines.filter((l) => l.startsWith('out:'))).toEqual(['out: 1', 'out: 2', 'out: 3', 'out: 4', 'out: 5']);
    expect(lines.filter((l) => l.startsWith('connection:'))).toEqual(['connection: connected', 'connection: disconnected', 'connection: connected']);
    expect(lines.filter((l) => l.startsWith('exit'))).toEqual(['exit 0']);
    expect(lines.filter((l) => l.startsWith('late:'))).toEqual(['late: 3', 'late: 4', 'late: 5']);
    expect(lines.filter((l) => l.startsWith('processes:'))).toEqual(['processes: ', 'processes: sh running', 'processes: sh exited', 'processes: sh closed']);
  });
});
