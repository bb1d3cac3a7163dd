/**
 * `exec-rx run`: runs one command on an executor, streams its stdout and stderr live, forwards stdin
 * (with end-of-file, see `./stdin-fifo`), and resolves with the command's exit code (128+n when it was
 * signalled, as the executor reports it).
 */
import { resolve as resolvePath } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ExecProcess, StartParams } from '../index';
import { SpawnError } from '../index';
import type { RunOptions } from './cli-args';
import { reportConnection } from './connection-reporter';
import type { HostedEnvironmentInfo } from './hosted-environments';
import type { OpenTarget } from './run-target';
import { openTarget } from './run-target';
import { CannotStartError, startWithStdinFifo } from './stdin-fifo';
import type { StdinSink } from './stdin-relay';
import { ptySink } from './stdin-relay';
import { supervise } from './run-supervisor';

/** This process's stdio, environment and directory (injectable). */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable & { readonly isTTY?: boolean; readonly columns?: number; readonly rows?: number };
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** Exit status when the program is missing (as a shell). */
export const EXIT_NOT_FOUND = 127;
/** Exit status when the program is not executable (as a shell). */
export const EXIT_NOT_EXECUTABLE = 126;
/** Exit status when exec-rx itself failed: no executor, a lost connection, a failed process. */
export const EXIT_EXEC_RX_FAILED = 255;

/** A started command and where its stdin goes. */
export interface Launched {
  readonly process: ExecProcess;
  readonly sink: StdinSink | undefined;
  readonly tty: boolean;
}

/** The environment of remote commands: the executor's own, less codex's default excludes (`*KEY*`, `*SECRET*`, `*TOKEN*`). */
const inheritExecutorEnv = (): NonNullable<StartParams['envPolicy']> => ({ inherit: 'all', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] });

/**
 * Runs the command and resolves with the exit status to use. Never rejects: every failure is written
 * to stderr as one `exec-rx: ...` line (no stack) and mapped to 127/126/255. Tears down everything it
 * opened (executor, host, stdin) before resolving.
 */
export async function runCommand(options: RunOptions, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.stderr.write(`exec-rx: ${line}\n`);
  let target: OpenTarget;
  try {
    target = await openTarget(options.target, options.verbose ? say : undefined);
  } catch (error: unknown) {
    say(messageOf(error));
    io.stdin.destroy();
    return EXIT_EXEC_RX_FAILED;
  }
  const reporting = reportConnection(target.environment.connectionState$, say, { verbose: options.verbose });
  try {
    const launched = await launch(target, options, io);
    return await supervise(launched, target, io, say);
  } catch (error: unknown) {
    io.stdin.destroy();
    return reportStartFailure(error, options, say);
  } finally {
    reporting.unsubscribe();
    await target.close();
  }
}

function reportStartFailure(error: unknown, options: RunOptions, say: (line: string) => void): number {
  const program = options.argv[0] ?? '';
  if (error instanceof CannotStartError) {
    say(`cannot start ${program}: ${error.message}`);
    return error.exitCode;
  }
  if (error instanceof SpawnError) {
    say(`cannot start ${program}: ${error.rpcMessage}${options.cwd === undefined ? '' : ` (or its directory ${options.cwd} is missing)`}`);
    return error.kind === 'spawnPermissionDenied' ? EXIT_NOT_EXECUTABLE : EXIT_NOT_FOUND;
  }
  say(messageOf(error));
  return EXIT_EXEC_RX_FAILED;
}

async function launch(target: OpenTarget, options: RunOptions, io: CliIo): Promise<Launched> {
  const info = await target.environment.info();
  const params = startParams(options, target.local, info, io);
  const backend = target.environment.getExecBackend();
  if (options.tty) {
    const { process } = await backend.start({ ...params, tty: true });
    return { process, sink: ptySink(process), tty: true };
  }
  if (info.platformOs === 'windows') {
    // No sh or mkfifo there: the command runs without stdin.
    const { process } = await backend.start(params);
    return { process, sink: undefined, tty: false };
  }
  const { process, feeder } = await startWithStdinFifo(backend, params, executorTempDir(info));
  return { process, sink: feeder, tty: false };
}

function startParams(options: RunOptions, local: boolean, info: HostedEnvironmentInfo, io: CliIo): StartParams {
  const terminal: Record<string, string> = {};
  if (options.tty) {
    if (io.stdout.isTTY === true && io.stdout.columns !== undefined && io.stdout.rows !== undefined) {
      Object.assign(terminal, { COLUMNS: String(io.stdout.columns), LINES: String(io.stdout.rows) });
    }
    if (!local) terminal['TERM'] = io.env['TERM'] ?? 'xterm-256color';
  }
  const localEnv: Record<string, string> = {};
  if (local) for (const [name, value] of Object.entries(io.env)) if (value !== undefined) localEnv[name] = value;
  const env = { ...localEnv, ...terminal, ...options.env };
  const defaultCwd = local ? io.cwd : (info.cwd ?? info.userHomeDir ?? 'file:///');
  const cwd = options.cwd === undefined ? defaultCwd : local ? resolvePath(io.cwd, options.cwd) : options.cwd;
  return { argv: [...options.argv], cwd, env, ...(local ? {} : { envPolicy: inheritExecutorEnv() }) };
}

function executorTempDir(info: HostedEnvironmentInfo): string {
  try {
    return info.tempDir === undefined ? '/tmp' : fileURLToPath(info.tempDir);
  } catch {
    return '/tmp';
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
