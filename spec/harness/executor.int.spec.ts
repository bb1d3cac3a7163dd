/**
 * The executor harness against the real codex 0.171.0 binary, spoken to in raw JSON (no library code):
 * listen mode (with and without a capability token), stdio mode and the direct remote transport.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ExecutorStartError } from '../../src/errors';
import { resolveCodexBinary, spawnExecutor } from '../../src/executor/spawn-executor';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, startListeningExecutor, startStdioExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import { startDisconnectableProxy } from '../support/ws-proxy';
import type { RawPeer } from './raw-peer';
import { dial, dialOpen, initialize, paramsOf, stdioPeer, wrapSocket } from './raw-peer';

const base64 = (text: string): string => Buffer.from(text).toString('base64');
const startParams = (processId: string, script: string) => ({
  processId,
  argv: ['/bin/sh', '-c', script],
  cwd: 'file:///tmp',
  env: { PATH: '/usr/bin:/bin' },
  tty: false,
});

/** `R`/`S`/… for a live process, `Z` for a zombie, `gone` once reaped (pid 1 here reaps after 1–2 s). */
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return 'gone';
  }
}

/** Resolves once none of `pids` is running (zombie or reaped); polls with setImmediate for at most 2 s. */
async function expectNotRunning(pids: readonly number[]): Promise<void> {
  const dead = (): boolean => pids.every((pid) => ['Z', 'gone'].includes(processState(pid)));
  for (const deadline = Date.now() + 2_000; !dead() && Date.now() < deadline; ) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  expect(pids.map(processState).map((state) => (state === 'gone' ? 'Z' : state))).toEqual(pids.map(() => 'Z'));
}

/** The CODEX_HOME an executor runs with (read from /proc). */
function codexHomeOf(pid: number): string {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('CODEX_HOME='));
  return entry?.slice('CODEX_HOME='.length) ?? '';
}

/** Resumes `sessionId`, retrying on -32010 (the executor has not yet detached the old connection). */
async function resume(peer: RawPeer, sessionId: string): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    const reply = await peer.request('initialize', { clientName: 'spec', resumeSessionId: sessionId });
    const error = reply['error'];
    if (error === undefined || attempt === 50) {
      const result = reply['result'];
      if (typeof result !== 'object' || result === null || !('sessionId' in result)) {
        throw new Error(`resume failed: ${JSON.stringify(reply)}`);
      }
      peer.notify('initialized', {});
      return String(result.sessionId);
    }
    if (typeof error !== 'object' || error === null || !('code' in error) || error.code !== -32010) {
      throw new Error(`resume failed: ${JSON.stringify(error)}`);
    }
  }
}

describe('resolveCodexBinary / spawnExecutor failures', () => {
  it('finds the native binary of the platform package, not the npm wrapper', () => {
    const binary = resolveCodexBinary();
    expect(binary).toMatch(/@openai\/codex-linux-(x64|arm64)\/vendor\/[^/]+-unknown-linux-musl\/bin\/codex$/);
    expect(existsSync(binary)).toBe(true);
  });

  it('rejects with ExecutorStartError, naming the binary, when it cannot be spawned', async () => {
    const starting = spawnExecutor({ mode: 'stdio', binary: '/nonexistent/codex' });
    await expect(starting).rejects.toThrow('failed to start codex exec-server (/nonexistent/codex): spawn /nonexistent/codex ENOENT');
    await expect(starting).rejects.toBeInstanceOf(ExecutorStartError);
    await expect(starting).rejects.toMatchObject({ code: 'EXECUTOR_START_FAILED' });
  });
});

describe('listen mode', () => {
  it('prints a loopback URL, initializes, is ready, runs a process and stops cleanly', async () => {
    const executor = await startListeningExecutor();
    expect(executor.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const codexHome = codexHomeOf(executor.pid);
    expect(existsSync(codexHome)).toBe(true);

    const client = trackForCleanup(await dialOpen(executor.url ?? ''));
    const sessionId = await initialize(client.peer);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await client.peer.call('environment/status')).toEqual({ status: 'ready' });

    const closed = client.peer.notification('process/closed', (p) => p['processId'] === 'hi');
    expect(await client.peer.call('process/start', startParams('hi', 'echo hi'))).toEqual({
      processId: 'hi',
      sandboxType: 'none',
    });
    await closed;
    const events = client.peer.notifications.filter((n) => paramsOf(n)['processId'] === 'hi');
    expect(events.map((n) => [n['method'], paramsOf(n)['seq']])).toEqual(
      expect.arrayContaining([
        ['process/exited', expect.any(Number)],
        ['process/closed', 3],
      ]),
    );
    expect(events.find((n) => n['method'] === 'process/output')?.['params']).toEqual({
      processId: 'hi',
      seq: expect.any(Number),
      stream: 'stdout',
      chunk: base64('hi\n'),
    });
    expect(events.find((n) => n['method'] === 'process/exited')?.['params']).toMatchObject({ exitCode: 0 });

    await executor.stop();
    expect(await executor.exited).toEqual({ code: 0, signal: null });
    expect(await client.closed).toBe(1006);
    expect(existsSync(codexHome)).toBe(false);
  });

  it('stop() kills the processes the executor started, with their children', async () => {
    const executor = await startListeningExecutor();
    const client = trackForCleanup(await dialOpen(executor.url ?? ''));
    await initialize(client.peer);
    const output = client.peer.notification('process/output', (p) => p['processId'] === 'long');
    await client.peer.call('process/start', startParams('long', "trap '' TERM; sleep 1000 & echo $$ $!; wait"));
    const chunk = paramsOf(await output)['chunk'];
    const pids = Buffer.from(String(chunk), 'base64').toString().trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    expect(pids.map(processState)).not.toContain('Z');

    await executor.stop();
    await expectNotRunning(pids);
  });

  it('with --ws-auth capability-token accepts the right bearer token and answers 401 otherwise', async () => {
    const executor = await startListeningExecutor({ wsAuthToken: 'harness-token' });
    const url = executor.url ?? '';
    expect(await dial(url, { authorization: 'Bearer wrong' })).toEqual({
      kind: 'refused',
      status: 401,
      body: 'invalid websocket bearer token',
    });
    expect(await dial(url)).toEqual({ kind: 'refused', status: 401, body: 'missing websocket bearer token' });
    const client = trackForCleanup(await dialOpen(url, { authorization: 'Bearer harness-token' }));
    await initialize(client.peer);
    expect(await client.peer.call('environment/status')).toEqual({ status: 'ready' });
  });
});

describe('stdio mode', () => {
  it('speaks newline-delimited JSON and exits with status 0 on stop()', async () => {
    const executor = await startStdioExecutor();
    const { stdin, stdout } = executor;
    if (stdin === undefined || stdout === undefined) throw new Error('stdio executor without pipes');
    const peer = stdioPeer(stdin, stdout);
    await initialize(peer);
    expect(await peer.call('environment/status')).toEqual({ status: 'ready' });
    await executor.stop();
    expect(await executor.exited).toEqual({ code: 0, signal: null });
  });
});

describe('direct mode', () => {
  it('registers once, dials through the proxy, re-dials the same URL after a drop and resumes the session', async () => {
    const acceptor = trackForCleanup(await startAcceptor());
    const proxy = trackForCleanup(await startDisconnectableProxy(`${acceptor.url}direct/env-harness`));
    const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => proxy.url }));
    await startDirectExecutor({ remoteUrl: registry.url, environmentId: 'env-harness' });

    const [post] = await registry.waitForPosts(1);
    expect(post).toMatchObject({
      method: 'POST',
      path: '/cloud/environment/env-harness/direct/register',
      body: '{"transport":"direct_jsonrpc_v1"}',
    });
    expect(post?.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );

    const first = wrapSocket(await acceptor.nextAccepted());
    const sessionId = await initialize(first.peer);
    const ready = first.peer.notification('process/output', (p) => p['processId'] === 'keep');
    await first.peer.call('process/start', startParams('keep', 'echo ready; exec sleep 1000'));
    await ready;

    const connections = proxy.connectionCount;
    proxy.pause();
    expect(await first.closed).toBe(1006);
    proxy.resume();
    await proxy.waitForConnection(connections + 1);
    const second = wrapSocket(await acceptor.nextAccepted());

    expect(await resume(second.peer, sessionId)).toBe(sessionId);
    expect(await second.peer.call('process/read', { processId: 'keep', afterSeq: 0, waitMs: 0 })).toMatchObject({
      chunks: [{ seq: 1, stream: 'stdout', chunk: base64('ready\n') }],
      exited: false,
      closed: false,
    });
    expect(registry.posts).toHaveLength(1);
    expect(await second.peer.call('process/terminate', { processId: 'keep' })).toEqual({ running: true });
  });

  it('exits with status 1 when registration fails at startup, the reason in stderrLines()', async () => {
    const registry = trackForCleanup(
      await startRegistryStub({
        acceptorUrl: () => 'ws://127.0.0.1:9/unused',
        respond: () => ({ status: 503, body: { error: 'unavailable' } }),
      }),
    );
    const executor = await startDirectExecutor({ remoteUrl: registry.url, environmentId: 'env-503' });
    expect(await executor.exited).toEqual({ code: 1, signal: null });
    expect(executor.stderrLines().join('\n')).toContain('environment registry request failed (503 Service Unavailable)');
  });
});

