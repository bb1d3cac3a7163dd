/**
 * Starting the command of `exec-rx run` on the executor with the library's one start: with a pty
 * (`--tty`), else reading a FIFO fed from our stdin (`stdin: 'fifo'`), which a Windows executor (no
 * `sh`) cannot do: the command runs without stdin there.
 */
import { resolve as resolvePath } from 'node:path';
import type { EnvironmentInfo } from '../../wire/environment';
import type { StartParams } from '../../exec/exec-backend';
import type { ExecProcess } from '../../exec/exec-process';
import type { RunOptions } from '../args';
import type { CliIo } from '../io';
import type { OpenTarget } from './run-target';
import type { StdinSink } from '../terminal/stdin-relay';
import { terminalSize } from '../terminal/terminal-size';
import { ptySink } from './pty-sink';

/** A started command and where its stdin goes. */
export interface Launched {
  readonly process: ExecProcess;
  readonly sink: StdinSink | undefined;
  readonly tty: boolean;
}

/** The environment of remote commands: the executor's own, less codex's default excludes (`*KEY*`, `*SECRET*`, `*TOKEN*`). */
const inheritExecutorEnv = (): NonNullable<StartParams['envPolicy']> => ({ inherit: 'all', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] });

/**
 * Starts the command. Rejects with the start's typed error (SpawnError ...) or `CannotStartError` when
 * the program is missing or not executable; nothing is left running then. With `--tty` on a terminal
 * the pty gets our terminal's size; when the executor cannot size it, `say`s so once.
 */
export async function launch(target: OpenTarget, options: RunOptions, io: CliIo, say: (line: string) => void): Promise<Launched> {
  const info = await target.environment.info();
  const params = startParams(options, target.local, info, io);
  const backend = target.environment.getExecBackend();
  if (options.tty) {
    const started = await backend.start({ ...params, tty: terminalSize(io) ?? true });
    if (started.unsizedReason !== undefined) say(`the terminal keeps the executor's default size and does not follow resizes: ${started.unsizedReason}`);
    return { process: started.process, sink: ptySink(started.process), tty: true };
  }
  // Without a feeder (a Windows executor) the command runs without stdin.
  const { process, feeder } = await backend.start({ ...params, stdin: 'fifo' });
  return { process, sink: feeder, tty: false };
}

function startParams(options: RunOptions, local: boolean, info: EnvironmentInfo, io: CliIo): StartParams {
  // No COLUMNS/LINES: the pty has the size, and curses and less would prefer stale variables to it after a resize.
  const terminal: Record<string, string> = {};
  if (options.tty && !local) terminal['TERM'] = io.env['TERM'] ?? 'xterm-256color';
  const localEnv: Record<string, string> = {};
  if (local) for (const [name, value] of Object.entries(io.env)) if (value !== undefined) localEnv[name] = value;
  const env = { ...localEnv, ...terminal, ...options.env };
  const defaultCwd = local ? io.cwd : (info.cwd ?? info.userHomeDir ?? 'file:///');
  const cwd = options.cwd === undefined ? defaultCwd : local ? resolvePath(io.cwd, options.cwd) : options.cwd;
  return { argv: [...options.argv], cwd, env, ...(local ? {} : { envPolicy: inheritExecutorEnv() }) };
}
