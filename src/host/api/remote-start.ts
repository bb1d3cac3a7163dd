/**
 * What a start through the operator API sends: a host-generated UUID (the executor's process id too) and
 * the defaults a remote start needs (the executor's home as the cwd, its core environment, `TERM` for a
 * tty), with a tty's cwd checked first (the executor would run it elsewhere when it is missing).
 */
import { randomUUID } from 'node:crypto';
import type { Environment } from '../../environment/environment';
import { NotFoundError } from '../../errors';
import type { StartParams } from '../../exec/exec-backend';
import type { StartProcessRequest } from '../../wire/operator-api';
import { ApiProblem } from './problem';

/** The environment a process inherits: the executor's core set (PATH, HOME ...), the request's on top. */
const CORE_ENV: NonNullable<StartParams['envPolicy']> = { inherit: 'core', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] };

/** A start as the API sends it. */
export interface RemoteStart {
  /** The process id the host chose. */
  readonly processId: string;
  /** The raw start's params (the request's argv: what the process is listed with). */
  readonly params: StartParams;
  /** Whether it runs on a pty (sized or not). */
  readonly tty: boolean;
  /** What `ExecBackend.start` is given. */
  readonly start: StartParams;
}

/**
 * The start of `request` on `environment` (see the module's doc). Rejects with 422 `SPAWN_FAILED` for a
 * tty whose cwd is not a directory on the executor, or with the environment's errors.
 */
export async function remoteStartOf(environment: Environment, request: StartProcessRequest): Promise<RemoteStart> {
  const info = await environment.info();
  const size = typeof request.tty === 'object' ? { rows: request.tty.rows, cols: request.tty.cols } : undefined;
  const tty = request.tty === true || size !== undefined;
  const processId = randomUUID();
  const params: StartParams = {
    processId,
    argv: [...request.argv],
    cwd: request.cwd ?? info.userHomeDir ?? info.cwd ?? 'file:///',
    env: { ...(tty ? { TERM: 'xterm-256color' } : {}), ...request.env },
    envPolicy: CORE_ENV,
  };
  // The executor runs a tty command in its own directory when the cwd asked for is missing (it
  // fails any other start): check it, so every kind of start refuses a missing cwd alike.
  if (tty && request.cwd !== undefined) await requireDirectory(environment, request.cwd);
  // A size goes through the sizing wrapper (docs/cli.md, exec-rx run, --tty); the start still succeeds unsized where
  // the executor cannot size a pty. `pipeStdin` is the FIFO, which the start ignores with a tty (written
  // to directly) and cannot make on a Windows executor: no feeder, the resource says `pipeStdin: false`.
  const fifo = request.pipeStdin === true ? { stdin: 'fifo' as const } : {};
  return { processId, params, tty, start: { ...params, tty: size ?? tty, ...fifo } };
}

/** Throws 422 `SPAWN_FAILED` unless `cwd` is a directory on the executor. */
async function requireDirectory(environment: Environment, cwd: string): Promise<void> {
  const metadata = await environment
    .getFilesystem()
    .getMetadata(cwd)
    .catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
  if (metadata === undefined || !metadata.isDirectory) throw new ApiProblem(422, 'SPAWN_FAILED', `cannot start in ${cwd}: no such directory on the executor`);
}
