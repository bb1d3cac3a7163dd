/**
 * The one start's choices that need no real executor (`ExecBackend.start`): FIFO stdin on a Windows
 * executor, FIFO stdin with a tty, and what goes on the wire. The FIFO itself: stdin-fifo.int.spec.ts.
 */
import { ExecBackend } from '../../src/exec/exec-backend';
import type { ProcessTable } from '../../src/exec/process-table';
import { executorTempDir } from '../../src/exec/temp-dir';
import type { ExecClient } from '../../src/session/exec-client';
import type { EnvironmentInfo } from '../../src/wire/environment';
import { FakeSocketPort } from '../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../support/scripted-client';

/** An executor that answers initialize and every process/start. */
const executor = (): FakeSocketPort =>
  new FakeSocketPort((frame, peer) => {
    const method = frame['method'];
    if (method === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
  });

const info = (platformOs: string, tempDir?: string): EnvironmentInfo => ({ platformOs, ...(tempDir === undefined ? {} : { tempDir }) }) as unknown as EnvironmentInfo;

async function backendOn(platformOs: string): Promise<{ client: ExecClient; port: FakeSocketPort; backend: ExecBackend; table: ProcessTable }> {
  const port = executor();
  const { client } = await connectedClient(port);
  // The list ends with the client, as an Environment's does (no 80 s timer left for the failed processes).
  const table = listEndingWith(client);
  return { client, port, backend: new ExecBackend(client, () => ({}), table, () => Promise.resolve(info(platformOs))), table };
}

const starts = (port: FakeSocketPort): Record<string, unknown>[] => port.sent.filter((f) => f['method'] === 'process/start').map((f) => f['params'] as Record<string, unknown>);

describe('ExecBackend.start: the choice of stdin', () => {
  it("runs a command asked for stdin: 'fifo' on a Windows executor without stdin: one process/start as asked, no feeder, a reason", async () => {
    const { client, port, backend, table } = await backendOn('windows');
    const started = await backend.start({ processId: 'w', argv: ['cmd', '/c', 'sort'], cwd: 'file:///C:/', stdin: 'fifo' });
    expect({ feeder: started.feeder, sized: started.sized, reason: started.noStdinReason }).toEqual({ feeder: undefined, sized: false, reason: expect.stringContaining('without stdin') });
    expect(starts(port)).toEqual([expect.objectContaining({ processId: 'w', argv: ['cmd', '/c', 'sort'], tty: false })]);
    expect(starts(port)[0]).not.toHaveProperty('stdin');
    expect(starts(port)[0]).not.toHaveProperty('pipeStdin', true);
    expect(table.get('w')).toBe(started.process);
    client.close();
  });

  it("ignores stdin: 'fifo' with a tty (a pty is written to directly): one process/start, no helper, no feeder", async () => {
    const { client, port, backend } = await backendOn('linux');
    const started = await backend.start({ processId: 't', argv: ['sh'], cwd: '/tmp', tty: true, stdin: 'fifo' });
    expect({ feeder: started.feeder, reason: started.noStdinReason }).toEqual({ feeder: undefined, reason: undefined });
    expect(starts(port)).toEqual([expect.objectContaining({ processId: 't', argv: ['sh'], tty: true })]);
    expect(starts(port)[0]).not.toHaveProperty('stdin');
    client.close();
  });

  it('sends a plain start as it is, with no stdin key on the wire', async () => {
    const { client, port, backend } = await backendOn('linux');
    const started = await backend.start({ processId: 'p', argv: ['true'], cwd: '/tmp', pipeStdin: true });
    expect({ feeder: started.feeder, reason: started.noStdinReason, sized: started.sized }).toEqual({ feeder: undefined, reason: undefined, sized: false });
    expect(starts(port)).toEqual([{ processId: 'p', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false, pipeStdin: true }]);
    client.close();
  });
});

describe('executorTempDir', () => {
  it('is the temp dir of the info as a POSIX path, else /tmp', () => {
    const cases: [EnvironmentInfo | undefined, string][] = [
      [undefined, '/tmp'],
      [info('linux'), '/tmp'],
      [info('linux', 'file:///var/tmp'), '/var/tmp'],
      [info('linux', 'file:///tmp/a%20b/'), '/tmp/a b/'],
      [info('linux', 'file://host/share'), '/tmp'],
      [info('linux', 'http://example.com/tmp'), '/tmp'],
      [info('linux', 'not a url'), '/tmp'],
    ];
    expect(cases.map(([given]) => executorTempDir(given))).toEqual(cases.map(([, expected]) => expected));
  });
});
