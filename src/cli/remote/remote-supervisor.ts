/**
 * The running part of `exec-rx run --host`: the process's events to our stdout/stderr as they come
 * and no faster than those take them (a slow reader holds the host back, not our memory), our stdin to
 * it (each chunk written in order, then end of input), Ctrl-C to it, our terminal's size to its pty,
 * and its exit code once it closed.
 */
import type { HostClient } from '../../client/host-client';
import { HostApiError } from '../../client/host-api-error';
import type { CliIo } from '../io';
import { forwardSignals } from '../terminal/forward-signals';
import type { StdinSink } from '../terminal/stdin-relay';
import { rawTerminal, relayStdin } from '../terminal/stdin-relay';
import type { SizeTarget } from '../terminal/terminal-size';
import { followTerminalSize } from '../terminal/terminal-size';
import { EVENTS_AHEAD, pipeEvents } from './event-output';
import { EXIT_BROKEN_PIPE, EXIT_FAILED } from '../exit-codes';
import { messageOf } from '../../errors';
import { endAfter, LostOutput } from '../lost-output';

/** Where the command's stdin comes from: streamed (`pipeStdin`), raw to its pty, or not at all. */
export type StdinMode = 'pipe' | 'pty' | 'none';

/** A process started on the host. */
export interface RemoteProcess {
  readonly client: HostClient;
  readonly environmentId: string;
  readonly processId: string;
  readonly mode: StdinMode;
  /** Whether its pty got our terminal's size (then it follows our resizes). */
  readonly sized: boolean;
}

/** How the supervisor talks. */
export interface RemoteReporting {
  /** Writes one `exec-rx: …` line on stderr. */
  readonly say: (line: string) => void;
  readonly verbose: boolean;
  /** One line for an error of the host. */
  readonly describe: (error: unknown) => string;
  /** Called as soon as `closed` came: the event stream's end that follows is no lost connection. */
  readonly finished: () => void;
}

/** Our stdin to the process: each chunk a write (retried with its writeId), then end of input. */
function hostSink(remote: RemoteProcess, reporting: RemoteReporting): StdinSink {
  const { client, environmentId, processId } = remote;
  const failed = (error: unknown): false => {
    // The process ended (its stdin closed with it): nothing to say.
    const quiet = error instanceof HostApiError && (error.code === 'STDIN_CLOSED' || error.code === 'PROCESS_NOT_FOUND');
    if (reporting.verbose && !quiet) reporting.say(`stdin: ${reporting.describe(error)}`);
    return false;
  };
  return {
    write: (chunk) => client.write(environmentId, processId, chunk).then(() => true, failed),
    end: () => client.endStdin(environmentId, processId).then(() => undefined, (error: unknown) => void failed(error)),
    dispose: () => Promise.resolve(),
  };
}

/** The host's pty of `remote`, as {@link followTerminalSize} sends our terminal's size to it; every failure worth saying. */
function hostPty(remote: RemoteProcess): SizeTarget {
  return {
    resize: (size) => remote.client.resize(remote.environmentId, remote.processId, size),
    describe: (error) => `resize: ${messageOf(error)}`,
  };
}

/** The exit code of the closed process `remote` from the host's wait; undefined after one line saying why not. */
async function exitFromHost(remote: RemoteProcess, reporting: RemoteReporting): Promise<number | undefined> {
  try {
    return (await remote.client.wait(remote.environmentId, remote.processId)).exitCode;
  } catch (error: unknown) {
    reporting.say(`the command closed, but its exit status is not known: ${reporting.describe(error)}`);
    return undefined;
  }
}

/**
 * Runs until the process closed and resolves with its exit code — 254 after a line naming it and what
 * was lost when the host no longer held some of the output (a `truncated` marker); 141 (after terminating it) when our
 * stdout or stderr is a pipe whose reader went away; 255 after one line when the events failed (the host
 * unreachable past its bound, the process gone or failed). The exit code is the `exited` event's, or, when
 * no event carried it (it fell in a hole of the output), the host's wait's. Restores the terminal and stops reading
 * stdin before resolving. Never rejects.
 */
export async function superviseRemote(remote: RemoteProcess, io: CliIo, reporting: RemoteReporting): Promise<number> {
  const { client, environmentId, processId } = remote;
  const terminal = remote.mode === 'pty' ? rawTerminal(io.stdin) : undefined;
  const relay = remote.mode === 'none' ? undefined : relayStdin(io.stdin, hostSink(remote, reporting), terminal);
  if (relay === undefined) io.stdin.destroy();
  const terminate = (): Promise<boolean> => client.terminate(environmentId, processId);
  const signals = forwardSignals({ interrupt: () => client.interrupt(environmentId, processId), terminate }, (signal, action) => {
    if (reporting.verbose) reporting.say(`${signal}: ${action === 'interrupt' ? 'interrupting the command (Ctrl-C again terminates it)' : 'terminating the command'}`);
  });
  const sizing = remote.sized ? followTerminalSize(io, hostPty(remote), reporting.say) : undefined;
  try {
    let exitCode: number | undefined;
    const lost = new LostOutput();
    const events = client.eventStream(environmentId, processId, { afterSeq: 0, follow: true, highWaterMark: EVENTS_AHEAD });
    const end = await pipeEvents(events, io, reporting.say, (event) => {
      if (event.type === 'exited') exitCode = event.exitCode;
      if (event.type === 'truncated') lost.add(event);
      if (event.type === 'closed') reporting.finished();
    });
    if (end.kind === 'brokenPipe') {
      void terminate().catch(() => undefined);
      return EXIT_BROKEN_PIPE;
    }
    if (end.kind === 'error') {
      reporting.say(reporting.describe(end.error));
      return EXIT_FAILED;
    }
    // The exit can lie in a hole of the output (a marker may cover a seq it cannot place): the host's wait
    // answers at once for a closed process, with its exit code, as HostClient.run asks it.
    exitCode ??= await exitFromHost(remote, reporting);
    if (exitCode === undefined) return EXIT_FAILED;
    const ran = endAfter(exitCode, lost);
    if (ran.line !== undefined) reporting.say(ran.line);
    return ran.status;
  } finally {
    signals.dispose();
    sizing?.dispose();
    terminal?.restore();
    relay?.stop();
  }
}
