#!/usr/bin/env node
/**
 * The `exec-rx` command: `exec-rx run [options] -- <command...>`, `exec-rx host [options]`, and against a
 * running host `exec-rx ls`, `exec-rx logs`, `exec-rx cp` and `exec-rx files`. Errors are
 * one `exec-rx: ...` line, never a stack; the exit status is set with `process.exitCode` so output flushes.
 */
import { parseHostArgs, parseRunArgs, USAGE, UsageError } from './args';
import { parseLogsArgs, parseLsArgs } from './host-args';
import { hostCommand } from './host-command';
import type { CliIo } from './io';
import { logsCommand } from './remote/logs-command';
import { cpCommand } from './remote/cp-command';
import { filesCommand } from './remote/files-command';
import { parseCpArgs, parseFilesArgs } from './files-args';
import { lsCommand } from './remote/ls-command';
import { remoteRunCommand } from './remote/remote-run';
import { runCommand } from './run/run-command';
import { EXIT_ERROR, EXIT_USAGE } from './exit-codes';
import { messageOf } from '../errors';

/** Runs the CLI with `args` (without `node` and the script) and resolves with the exit status. Never rejects. */
export async function main(args: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = args;
  // `exec-rx <command> --help` (before any `--`) prints the usage, as `exec-rx --help` does.
  if (['run', 'host', 'ls', 'logs', 'cp', 'files'].includes(command ?? '') && asksForHelp(rest)) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    switch (command ?? '') {
      case 'run': {
        // With --host the command runs in a host's environment (remote/), else on an executor we open (run/).
        const options = parseRunArgs(rest, io.env);
        return await (options.target.kind === 'host' ? remoteRunCommand(options, options.target, io) : runCommand(options, options.target, io));
      }
      case 'host':
        return await hostCommand(parseHostArgs(rest), io);
      case 'ls':
        return await lsCommand(parseLsArgs(rest, io.env), io);
      case 'logs':
        return await logsCommand(parseLogsArgs(rest, io.env), io);
      case 'cp':
        return await cpCommand(parseCpArgs(rest, io.env), io);
      case 'files':
        return await filesCommand(parseFilesArgs(rest, io.env), io);
      case '--help':
      case '-h':
      case 'help':
        io.stdout.write(`${USAGE}\n`);
        return 0;
      default:
        throw new UsageError(command === undefined || command === '' ? 'missing command' : `unknown command ${JSON.stringify(command)}`);
    }
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      io.stderr.write(`exec-rx: ${error.message}\n${USAGE}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`exec-rx: ${messageOf(error)}\n`);
    return EXIT_ERROR;
  }
}

function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * Runs the CLI as the `exec-rx` command of this process: its arguments, stdio, environment and directory;
 * the exit status goes to `process.exitCode`. What this file does when node runs it (the package's bin),
 * and what a clone's `bin/exec-rx` calls after loading this file.
 */
export function runAsCommand(): void {
  // A closed stdout/stderr (EPIPE) must not crash the process with a stack; `run` reacts to it itself.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  const io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), exit: (status) => process.exit(status) };
  void main(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
  });
}

if (require.main === module) runAsCommand();
