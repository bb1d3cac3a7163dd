/**
 * `exec-rx run --host URL --environment ID -- cmd …`: the command runs in an environment of a running
 * exec-rx host, through its operator API (HostClient). Its stdin is streamed with end of input when ours
 * is not a terminal (`pipeStdin`), goes raw to its pty with `--tty`, and is not read otherwise; its output
 * comes live and exactly once across dropped connections (the client resumes by seq).
 */
import { HostClient } from '../../client/host-client';
import type { ProcessResource, StartRequest } from '../../client/host-types';
import type { RunOptions, RunTarget } from '../args';
import { reportConnection } from '../connection-reporter';
import { EXIT_FAILED } from '../exit-codes';
import type { CliIo } from '../io';
import { lineEnd } from '../terminal/stdin-relay';
import { terminalSize } from '../terminal/terminal-size';
import { describeHostError, spawnFailureOf } from './host-errors';
import type { StdinMode } from './remote-supervisor';
import { superviseRemote } from './remote-supervisor';
import { watchedFetch } from './watched-fetch';

/**
 * How long a host that never answered may stay unreachable before the start gives up; once the process
 * runs, the client's own bound (90 s: a host restart of up to 60 s is ridden through) applies to the events and the calls.
 */
const START_OFFLINE_MS = 5_000;

/** How the command gets its stdin: raw to its pty with `--tty`, streamed when ours is not a terminal, else none. */
export function stdinModeOf(tty: boolean, stdin: CliIo['stdin']): StdinMode {
  if (tty) return 'pty';
  return (stdin as { readonly isTTY?: boolean }).isTTY === true ? 'none' : 'pipe';
}

/** The start request: argv, cwd, env (TERM from ours for a pty), pty size or a piped stdin. */
function startRequest(options: RunOptions, mode: StdinMode, io: CliIo): StartRequest {
  const terminal: Record<string, string> = mode === 'pty' ? { TERM: io.env['TERM'] ?? 'xterm-256color' } : {};
  return {
    argv: [...options.argv],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { ...terminal, ...options.env },
    ...(mode === 'pty' ? { tty: terminalSize(io) ?? true } : {}),
    ...(mode === 'pipe' ? { pipeStdin: true } : {}),
  };
}

/**
 * Starts the command in `target`'s environment and supervises it to its end. Resolves with its exit
 * code (128+n when signalled), 127/126 when its program cannot start, 141 when our stdout's reader went
 * away, 255 when exec-rx failed (one `exec-rx: …` line on stderr). Never rejects; reads stdin no more
 * once it resolves.
 */
export async function remoteRunCommand(options: RunOptions, target: Extract<RunTarget, { readonly kind: 'host' }>, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.stderr.write(`exec-rx: ${line}${lineEnd()}`);
  const { access, environmentId } = target;
  const watch = watchedFetch();
  const reporting = reportConnection(watch.states$, say, { verbose: options.verbose, peer: 'the host' });
  // The binary event stream: output as bytes (an older host answers SSE, read as such).
  const client = new HostClient({ url: access.urls ?? access.url, token: access.token, fetch: watch.fetch, binaryEvents: true });
  const starter = new HostClient({ url: access.urls ?? access.url, token: access.token, fetch: watch.fetch, retry: { maxOfflineMs: START_OFFLINE_MS } });
  const mode = stdinModeOf(options.tty, io.stdin);
  const request = startRequest(options, mode, io);
  try {
    let started: ProcessResource;
    try {
      started = await starter.start(environmentId, request);
    } catch (error: unknown) {
      io.stdin.destroy();
      const spawn = spawnFailureOf(error, options.argv[0] ?? '', options.cwd);
      say(spawn?.line ?? describeHostError(error, access.url));
      return spawn?.exitCode ?? EXIT_FAILED;
    }
    if (options.verbose) say(`started process ${started.id} in environment ${environmentId} (exec-rx logs --environment ${environmentId} ${started.id})`);
    return await superviseRemote({ client, environmentId, processId: started.id, mode, sized: typeof request.tty === 'object' }, io, {
      say,
      verbose: options.verbose,
      describe: (error) => describeHostError(error, access.url),
      finished: () => watch.finish(),
    });
  } finally {
    watch.finish();
    reporting.unsubscribe();
  }
}
