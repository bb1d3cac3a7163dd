/**
 * The sizing wrapper changes nothing but the size (real executor): exit codes, interrupts, argv and
 * output, and a program that cannot start fails exactly as it does without a size.
 */
import { firstValueFrom } from 'rxjs';
import type { ExecProcess, TtySize } from '../../src';
import { SpawnError } from '../../src';
import '../support/executor';
import { useListeningEnvironment } from '../support/listening-environment';
import { PATH_ENV, waitForText } from './tty-support';

const SIZE: TtySize = { rows: 33, cols: 111 };

describe('the tty sizing wrapper (real executor)', () => {
  const executor = useListeningEnvironment('tty-wrapper');

  /** Runs `argv` on a pty, sized or not, to its end; `interrupt` sends SIGINT once `ready` was printed. */
  async function run(argv: readonly string[], tty: true | TtySize, interrupt = false): Promise<{ readonly pty: string; readonly exitCode: number; readonly sized: boolean }> {
    const started = await executor.backend.start({ argv: [...argv], cwd: '/tmp', env: PATH_ENV, tty });
    const process: ExecProcess = started.process;
    if (interrupt) {
      await waitForText(process, 'ready');
      await process.interrupt();
    }
    const { pty, exitCode } = await process.collect();
    process.release();
    return { pty, exitCode, sized: started.sized };
  }

  it('keeps exit codes: 0, 7, 130 from a command that exits 130 on an interrupt, and the executor’s own code for one killed by it', async () => {
    const cases: [readonly string[], boolean, number][] = [
      [['sh', '-c', 'exit 0'], false, 0],
      [['sh', '-c', 'echo out; exit 7'], false, 7],
      [['sh', '-c', 'trap "exit 130" INT; echo ready; while :; do sleep 1 & wait $!; done'], true, 130],
      // A pty command killed by a signal: the 0.171.0 executor reports 1 there (not 128+n).
      [['sh', '-c', 'echo ready; exec sleep 30'], true, 1],
    ];
    for (const [argv, interrupt, expected] of cases) {
      const sized = await run(argv, SIZE, interrupt);
      const plain = await run(argv, true, interrupt);
      expect({ argv, exitCode: sized.exitCode, pty: sized.pty, sized: sized.sized }).toEqual({ argv, exitCode: expected, pty: plain.pty, sized: true });
      expect(plain.exitCode).toBe(expected);
    }
  });

  it('passes argv with spaces, quotes, globs and empty words through untouched, and adds no output', async () => {
    const argv = ['printf', '[%s]\\n', 'a b', "it's", '"quoted"', '$HOME', '*', '', '--', '-n'];
    const sized = await run(argv, SIZE);
    const plain = await run(argv, true);
    expect(sized).toEqual({ pty: '[a b]\r\n[it\'s]\r\n["quoted"]\r\n[$HOME]\r\n[*]\r\n[]\r\n[--]\r\n[-n]\r\n', exitCode: 0, sized: true });
    expect(plain).toEqual({ ...sized, sized: false });
  });

  it('keeps the pid: the command replaces the wrapper (exec), so its parent is the executor, as without a size', async () => {
    const argv = ['sh', '-c', 'echo "parent $(cat /proc/$PPID/comm)"; tr "\\0" " " </proc/$$/cmdline; echo'];
    const sized = await run(argv, SIZE);
    const plain = await run(argv, true);
    expect(sized).toEqual({ ...plain, sized: true });
    expect(sized.pty).toMatch(/^parent (?!sh\r)\S+\r\nsh -c echo /);
  });

  it('refuses a missing program, or a directory, with the same SpawnError as a start without a size, listing nothing', async () => {
    const before = await firstValueFrom(executor.environment.processes$);
    for (const program of ['no-such-program-exec-rx', '/tmp']) {
      const plain = await executor.backend.start({ argv: [program, 'arg'], cwd: '/tmp', env: PATH_ENV, tty: true }).catch((e: unknown) => e);
      const sized = await executor.backend.start({ argv: [program, 'arg'], cwd: '/tmp', env: PATH_ENV, tty: SIZE }).catch((e: unknown) => e);
      expect(plain).toBeInstanceOf(SpawnError);
      expect(sized).toBeInstanceOf(SpawnError);
      const { code, kind, message, rpcCode } = plain as SpawnError;
      expect(sized).toMatchObject({ code, kind, message, rpcCode });
    }
    expect(await firstValueFrom(executor.environment.processes$)).toEqual(before);
  });
});
