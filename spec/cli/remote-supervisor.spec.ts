/**
 * `exec-rx run --host`'s supervisor, with a stand-in for the host's client: the exit can lie in a hole of
 * the output (a `truncated` marker covers a seq it cannot place, `src/host/api/window-fill.ts`), so a
 * stream that closed with no `exited` takes the exit code from the host's wait, as `HostClient.run` does,
 * and ends 254 after a line naming it; when the wait fails too, 255 after a line saying why, never silently
 * (CI once saw a silent 255 here, from spec/cli/run-host-lost-output.int.spec.ts).
 */
import { PassThrough } from 'node:stream';
import type { HostClient, HostProcessEvent, WaitResult } from '../../src/client';
import { HostApiError } from '../../src/client';
import { superviseRemote } from '../../src/cli/remote/remote-supervisor';

const ENV = 'env-1';
const PROCESS = 'p-1';
const TEXT = new TextEncoder();

/** Output at seq 1, a marker for seqs 2 and 3 (the exit among them), the close at seq 4. */
const EXIT_IN_A_HOLE: HostProcessEvent[] = [
  { type: 'output', seq: 1, stream: 'stdout', chunk: TEXT.encode('before\n') },
  { type: 'truncated', nextSeq: 4, droppedEvents: 2 },
  { type: 'closed', seq: 4 },
];

/** A client whose event stream gives `events`, and whose wait answers `wait()`; the waits it was asked. */
function clientOf(events: readonly HostProcessEvent[], wait: () => Promise<WaitResult>): { client: HostClient; waits: string[] } {
  const waits: string[] = [];
  const stub = {
    eventStream: () =>
      new ReadableStream<HostProcessEvent>({
        start(controller) {
          for (const event of events) controller.enqueue(event);
          controller.close();
        },
      }),
    wait: (environmentId: string, processId: string) => {
      waits.push(`${environmentId}/${processId}`);
      return wait();
    },
    terminate: () => Promise.resolve(true),
    interrupt: () => Promise.resolve(true),
  };
  return { client: stub as unknown as HostClient, waits };
}

async function supervised(client: HostClient): Promise<{ status: number; said: string[]; stdout: string }> {
  const said: string[] = [];
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const io = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: {}, cwd: '/' };
  const reporting = { say: (line: string) => void said.push(line), verbose: false, describe: (error: unknown) => (error instanceof Error ? error.message : String(error)), finished: () => undefined };
  const status = await superviseRemote({ client, environmentId: ENV, processId: PROCESS, mode: 'none', sized: false }, io, reporting);
  return { status, said, stdout: Buffer.concat(chunks).toString('utf8') };
}

describe('exec-rx run --host: a close with no exited event before it', () => {
  it("takes the exit code from the host's wait, and ends 254 naming it and what was lost", async () => {
    const { client, waits } = clientOf(EXIT_IN_A_HOLE, () => Promise.resolve<WaitResult>({ exitCode: 3, exitedAt: null }));
    const run = await supervised(client);
    expect(waits).toEqual([`${ENV}/${PROCESS}`]);
    expect(run.stdout).toBe('before\n');
    expect(run.status).toBe(254);
    expect(run.said.at(-1)).toMatch(/^output was lost: .*; the command exited with 3$/);
  });

  it('says why when the wait fails too, and ends 255', async () => {
    const gone = new HostApiError('PROCESS_NOT_FOUND', 'no process p-1 in env-1', 404, undefined);
    const { client } = clientOf(EXIT_IN_A_HOLE, () => Promise.reject(gone));
    const run = await supervised(client);
    expect(run.status).toBe(255);
    expect(run.said).toContain(`the command closed, but its exit status is not known: ${gone.message}`);
  });

  it('asks nothing more when the exited event came', async () => {
    const events: HostProcessEvent[] = [{ type: 'exited', seq: 1, exitCode: 5 }, { type: 'closed', seq: 2 }];
    const { client, waits } = clientOf(events, () => Promise.reject(new Error('not asked')));
    const run = await supervised(client);
    expect({ status: run.status, waits, said: run.said }).toEqual({ status: 5, waits: [], said: [] });
  });
});
