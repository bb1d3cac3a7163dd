/**
 * The running part of `exec-rx run`: output to stdout/stderr as it comes, stdin to the command, signals
 * to the command, and the exit status once the command closed (or why it could not).
 */
import { constants } from 'node:os';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, firstValueFrom, from, race, timer } from 'rxjs';
import { ExecutorExitedError, messageOf, ResizeFailedError } from '../../errors';
import type { ExecProcess } from '../../exec/exec-process';
import type { FlowHold } from '../../rpc/connection-flow';
import type { CliIo } from '../io';
import { forwardSignals } from '../terminal/forward-signals';
import type { Launched } from './launch';
import type { OpenTarget } from './run-target';
import { rawTerminal, relayStdin } from '../terminal/stdin-relay';
import type { SizeTarget } from '../terminal/terminal-size';
import { followTerminalSize } from '../terminal/terminal-size';
import { EXIT_BROKEN_PIPE, EXIT_FAILED } from '../exit-codes';
import { endAfter, LostOutput, truncatedNote } from '../lost-output';
import { drainGate } from '../output-mark';

/** How long cleaning up stdin (terminating the FIFO helper), and a pty's temp file, may hold up the exit. */
const DISPOSE_LIMIT_MS = 3_000;

/**
 * The executor's pty of `process`, as {@link followTerminalSize} sends our terminal's size to it
 * (`ExecProcess.resize` coalesces too); a resize that only lost a race with the command's end is not said.
 */
function localPty(process: ExecProcess): SizeTarget {
  return {
    resize: (size) => process.resize(size.rows, size.cols),
    describe: (error) => (error instanceof ResizeFailedError && error.reason === 'ended' ? undefined : messageOf(error)),
  };
}

/**
 * Streams the command's output, forwards stdin, signals and (with a pty) our terminal's size, and
 * resolves with its exit status once it closed (all output written). Resolves 255 after writing one line when the process fails or the
 * executor exits — or 128+n, silently, when that exit follows signal n (the embedded executor shares
 * our process group, so a terminal's Ctrl-C reaches it too and it ends with its processes).
 * Restores the terminal and stops reading stdin before resolving. Never rejects. The cleanup's bounds
 * run on `io.scheduler`.
 */
export async function supervise(launched: Launched, target: OpenTarget, io: CliIo, say: (line: string) => void): Promise<number> {
  const { process, sink } = launched;
  const scheduler = io.scheduler ?? asyncScheduler;
  const terminal = launched.tty ? rawTerminal(io.stdin) : undefined;
  const relay = sink === undefined ? undefined : relayStdin(io.stdin, sink, terminal);
  if (relay === undefined) io.stdin.destroy();
  const signals = forwardSignals({ interrupt: () => process.interrupt(), terminate: () => process.terminate() });
  const sizing = launched.tty && process.ttySize !== undefined ? followTerminalSize(io, localPty(process), say) : undefined;
  const executorGone = firstValueFrom(target.executorExit$).then((message) => Promise.reject(new ExecutorExitedError(message)));
  executorGone.catch(() => undefined);
  const output = pumpOutput(process, io, say);
  try {
    return await Promise.race([output.done, executorGone]);
  } catch (error: unknown) {
    const signal = signals.received();
    if (signal !== undefined) return 128 + constants.signals[signal];
    say(messageOf(error));
    return EXIT_FAILED;
  } finally {
    output.stop();
    signals.dispose();
    sizing?.dispose();
    terminal?.restore();
    relay?.stop();
    // No waiting for a helper on an executor that is gone: its processes went with it.
    if (sink !== undefined) await bounded(Promise.race([sink.dispose(), executorGone]), DISPOSE_LIMIT_MS, scheduler);
    // A sized pty's temp file is removed by a helper once the command ended: let it finish.
    if (launched.tty) await bounded(Promise.race([target.environment.getExecBackend().idle(), executorGone]), DISPOSE_LIMIT_MS, scheduler);
  }
}

/** Waits for `work` at most `ms` on `scheduler` (a lost connection must not hold up the exit). */
async function bounded(work: Promise<unknown>, ms: number, scheduler: SchedulerLike): Promise<void> {
  // Whichever comes first; the other is unsubscribed (the timer cancelled).
  await firstValueFrom(race(from(work.catch(() => undefined)), timer(ms, scheduler)));
}

/**
 * Writes each output chunk as it comes: while more than `OUTPUT_MARK_BYTES` wait in our stdout or
 * stderr, the connection is held paused until its 'drain' (memory stays bounded, nothing is lost; every
 * process on the executor waits meanwhile). `done` resolves with the exit code at `closed` — or, when a
 * `truncated` marker said output was lost, 254 after a line saying what and the command's exit code —
 * or with 141 (128+SIGPIPE, after terminating the command) when our stdout or stderr is a pipe whose
 * reader went away; it rejects at `failed`. `stop()` detaches and releases the holds.
 */
function pumpOutput(process: ExecProcess, io: CliIo, say: (line: string) => void): { readonly done: Promise<number>; stop(): void } {
  let stop = (): void => undefined;
  const done = new Promise<number>((resolve, reject) => {
    let exitCode: number | undefined;
    const lost = new LostOutput();
    const onBrokenPipe = (): void => {
      void process.terminate().catch(() => undefined);
      resolve(EXIT_BROKEN_PIPE);
    };
    io.stdout.once('error', onBrokenPipe);
    io.stderr.once('error', onBrokenPipe);
    const hold = (): FlowHold => process.holdConnection();
    const stdout = drainGate(io.stdout, hold);
    const stderr = drainGate(io.stderr, hold);
    const subscription = process.events$.subscribe((event) => {
      switch (event.type) {
        case 'output':
          (event.stream === 'stderr' ? stderr : stdout).write(event.chunk);
          return;
        case 'exited':
          exitCode = event.exitCode;
          return;
        case 'closed': {
          // The exit can lie in a hole of the output: the process keeps its exit code all the same.
          const code = exitCode ?? process.exitCode;
          if (code === undefined) {
            say('the command closed, but its exit status is not known');
            return resolve(EXIT_FAILED);
          }
          const end = endAfter(code, lost);
          if (end.line !== undefined) say(end.line);
          return resolve(end.status);
        }
        case 'failed':
          return reject(event.error);
        case 'truncated':
          lost.add(event);
          say(truncatedNote(event));
          return;
      }
    });
    stop = () => {
      subscription.unsubscribe();
      stdout.stop();
      stderr.stop();
      io.stdout.off('error', onBrokenPipe);
      io.stderr.off('error', onBrokenPipe);
    };
  });
  return { done, stop: () => stop() };
}
