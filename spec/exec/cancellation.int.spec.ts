/**
 * `wait()` and cancellation on the real 0.171.0 executor: an aborted wait or collect leaves the process
 * running; an aborted start that went out is terminated on the executor.
 */
import { firstValueFrom } from 'rxjs';
import { filter, scan, take } from 'rxjs/operators';
import type { ExecProcess } from '../../src';
import '../support/executor';
import { useListeningEnvironment } from '../support/listening-environment';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Resolves once the process's stdout contains `text` (awaits the output event, no timer). */
const stdoutContains = (process: ExecProcess, text: string): Promise<string> =>
  firstValueFrom(
    process.text$('stdout').pipe(
      scan((all, part) => all + part, ''),
      filter((all) => all.includes(text)),
      take(1),
    ),
  );

const rejection = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'resolved', (error: unknown) => error);

describe('wait() and cancellation (real executor)', () => {
  const executor = useListeningEnvironment('cancellation');

  it('wait() resolves with the exit code, and at once again once the process closed', async () => {
    const { process } = await executor.backend.start({ argv: ['sh', '-c', 'exit 3'], cwd: '/tmp', env: PATH_ENV });
    expect(await process.wait()).toEqual({ exitCode: 3 });
    await firstValueFrom(process.state$.pipe(filter((s) => s === 'closed')));
    expect(await process.wait()).toEqual({ exitCode: 3 });
  });

  it('an aborted wait and an aborted collect reject with the reason and leave the process running; terminate then ends it', async () => {
    const { process } = await executor.backend.start({ argv: ['sh', '-c', 'echo started; exec sleep 60'], cwd: '/tmp', env: PATH_ENV });
    await stdoutContains(process, 'started');
    const controller = new AbortController();
    const waiting = rejection(process.wait({ signal: controller.signal }));
    const collecting = rejection(process.collect({ signal: controller.signal }));
    const reason = new Error('stop waiting');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    expect(await collecting).toBe(reason);
    expect(process.state).toBe('running');
    expect(await process.terminate()).toBe(true);
    expect(await process.collect()).toEqual({ stdout: 'started\n', stderr: '', pty: '', exitCode: 137 });
  });

  it('a start aborted after process/start went out rejects with the reason, and the process is terminated on the executor', async () => {
    const rpc = executor.environment.client.liveRpc();
    if (rpc === undefined) throw new Error('not connected');
    const controller = new AbortController();
    const send = rpc.port.send.bind(rpc.port);
    const spy = jest.spyOn(rpc.port, 'send').mockImplementation((frame: string) => {
      send(frame);
      // Aborted the moment the start is on the wire: the executor starts it, nobody holds it.
      if (frame.includes('"process/start"') && frame.includes('aborted-start')) controller.abort();
    });
    try {
      const processId = `aborted-start-${Date.now()}`;
      const error = await rejection(executor.backend.start({ processId, argv: ['sleep', '60'], cwd: '/tmp', env: PATH_ENV }, { signal: controller.signal }));
      expect(error).toBe(controller.signal.reason);
      expect((error as DOMException).name).toBe('AbortError');
      expect(executor.environment.getProcess(processId)).toBeUndefined();
      // The executor started it and got a terminate: its retained events end with exit 137.
      let afterSeq = 0;
      for (;;) {
        const read = await rpc.call('process/read', { processId, afterSeq, maxBytes: null, waitMs: 5_000 });
        if (read.exited) {
          expect(read.exitCode).toBe(137);
          break;
        }
        afterSeq = read.nextSeq - 1;
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('a start with an already-aborted signal starts nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = executor.environment.facts();
    expect(await rejection(executor.backend.start({ argv: ['sleep', '60'], cwd: '/tmp', env: PATH_ENV }, { signal: controller.signal }))).toBe(controller.signal.reason);
    expect(executor.environment.facts()).toEqual(before);
  });
});
