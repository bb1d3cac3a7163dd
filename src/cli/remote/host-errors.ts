/**
 * What the commands that talk to a host say when it fails: one line for the user (never a token: the
 * host's errors carry none, and the url has neither a query nor a fragment), and, for a start that could
 * not spawn its program, the exit status a shell would give.
 */
import { HostApiError } from '../../client/host-api-error';
import { rootReason } from './watched-fetch';
import { EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND } from '../exit-codes';
import { messageOf } from '../../errors';

/** What the host said of the problem: its detail, else the whole message. */
const detailOf = (error: HostApiError): string => error.detail ?? error.message;

/** One line (without the `exec-rx: ` prefix) for an error of a call to the host at `url`. */
export function describeHostError(error: unknown, url: string): string {
  if (!(error instanceof HostApiError)) return messageOf(error);
  if (error.code === 'UNAUTHORIZED') return `the host at ${url} refused the operator token (401): check EXEC_RX_TOKEN or --token-file`;
  if (error.code === 'HOST_UNREACHABLE') return `cannot reach the host at ${url}: ${rootReason(error.cause ?? error)}`;
  if (error.code === 'PROCESS_GONE') return `the host at ${url} no longer knows the process (it restarted): ${error.message}`;
  if (error.status === undefined) return error.message;
  const hint = error.code === 'ENVIRONMENT_NOT_FOUND' ? '; exec-rx ls lists the environments' : '';
  return `${detailOf(error)} (${error.code})${hint}`;
}

/** A program that could not start: the status to exit with and the line to say. */
export interface SpawnFailure {
  readonly exitCode: 126 | 127;
  readonly line: string;
}

/**
 * When `error` is the host's 422 `SPAWN_FAILED`: 126 when the program is not executable, 127 otherwise
 * (missing program, or missing directory), with a line like a local start's. `undefined` for any other error.
 */
export function spawnFailureOf(error: unknown, program: string, cwd: string | undefined): SpawnFailure | undefined {
  if (!(error instanceof HostApiError) || error.code !== 'SPAWN_FAILED') return undefined;
  const detail = detailOf(error).replace(/\s+/g, ' ').trim();
  if (/Permission denied|os error 13/.test(detail)) return { exitCode: EXIT_NOT_EXECUTABLE, line: `cannot start ${program}: Permission denied` };
  // The host's own checks say it in full: `cannot start in DIR: …`, `cannot start PROGRAM: …`.
  if (detail.startsWith('cannot start ')) return { exitCode: EXIT_NOT_FOUND, line: detail.slice(0, 300) };
  const missing = /No such file or directory|os error 2|No viable candidates/.test(detail);
  const reason = missing ? 'No such file or directory' : detail.replace(/^exec-server rejected process\/start \(-?\d+\): /, '').slice(0, 300);
  return { exitCode: EXIT_NOT_FOUND, line: `cannot start ${program}: ${reason}${cwd === undefined ? '' : ` (or its directory ${cwd} is missing)`}` };
}
