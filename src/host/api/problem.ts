/**
 * Errors of the operator API as RFC 9457 problem details (`application/problem+json`): each carries the
 * library's error `code` (or one of the API's own, see `OperatorApiErrorCode`) and the host instance.
 * Details are library messages or the API's own words; they never carry a token or a process's env.
 */
import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { ExecClientErrorCode } from '../../errors';
import { CannotStartError, ExecClientError, OutputLogReadError } from '../../errors';
import { isTransientErrno } from '../../store/errno';
import type { Problem } from '../../wire/operator-api';
import { HOST_INSTANCE_HEADER } from '../../wire/operator-api';

/** A problem a handler throws (or returns); the API answers it as problem+json. */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  constructor(
    readonly status: number,
    readonly code: ExecClientErrorCode,
    readonly detail?: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail ?? code);
  }
}

/** The HTTP status for a library error that reached the API; 500 for any other code. */
const LIBRARY_STATUS: Readonly<Partial<Record<ExecClientErrorCode, number>>> = {
  SPAWN_FAILED: 422,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 504,
  ENVIRONMENT_RECOVERING: 503,
  ENVIRONMENT_FAILED: 503,
  RESUME_FAILED: 503,
  TRANSPORT_CLOSED: 503,
  CLOSED: 503,
  RPC_ERROR: 502,
  DECODE_FAILED: 502,
  PROTOCOL_ERROR: 502,
  FRAME_TOO_LARGE: 502,
  PROCESS_FAILED: 409,
  PROCESS_GAP: 409,
  RESIZE_FAILED: 409,
  INVALID_TTY_SIZE: 400,
  // With replicas: another replica owns the environment now (this one finds out on its write); it answers.
  STALE_EPOCH: 503,
  STALE_CLAIM: 503,
  STORE_UNAVAILABLE: 503,
  // The store answered what the host cannot use: an upstream's bad answer, as the executor's is.
  STORE_SCRIPT_FAILED: 502,
  // HTTP through an environment: a target the allow list refuses, a body over the limit, a reader that fell behind.
  HTTP_TARGET_REFUSED: 403,
  HTTP_REQUEST_TOO_LARGE: 413,
  HTTP_BODY_OVERFLOW: 502,
};

const statusOf = (error: ExecClientError): number => LIBRARY_STATUS[error.code] ?? 500;

/**
 * Any thrown value as a problem: ApiProblems as they are, library errors by their code, a program a
 * wrapper found missing (`CannotStartError`) as 422 `SPAWN_FAILED` like any other spawn failure, a log
 * read that failed for now (`LOG_READ_FAILED` with a passing errno: Redis unreachable) as 503, the rest 500.
 */
export function problemOf(error: unknown): ApiProblem {
  if (error instanceof ApiProblem) return error;
  if (error instanceof CannotStartError) return new ApiProblem(422, 'SPAWN_FAILED', `cannot start ${error.program}: ${error.message}`);
  // A log its store could not read for now (Redis unreachable, a timeout): the client reads again later.
  if (error instanceof OutputLogReadError && isTransientErrno(error.errno)) return new ApiProblem(503, error.code, error.message, { 'retry-after': '1' });
  if (error instanceof ExecClientError) {
    const status = statusOf(error);
    return new ApiProblem(status, error.code, error.message, status === 503 ? { 'retry-after': '1' } : {});
  }
  return new ApiProblem(500, 'HOST_ERROR', 'the host failed to handle the request');
}

/** The body of a problem answer. A 401 carries no detail. */
export function problemBody(problem: ApiProblem, hostInstance: string): Problem {
  const title = STATUS_CODES[problem.status] ?? 'Error';
  const body: Problem = { type: 'about:blank', title, status: problem.status, code: problem.code, hostInstance };
  // A 401 says nothing more, but for a preview link, whose holder is told why it opens nothing (expired, revoked …).
  const silent = problem.status === 401 && problem.code !== 'PREVIEW_LINK_INVALID';
  return problem.detail === undefined || silent ? body : { ...body, detail: problem.detail };
}

/** Answers `problem` as problem+json and ends the response (or just ends it when headers went out). */
export function sendProblem(res: ServerResponse, problem: ApiProblem, hostInstance: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(problemBody(problem, hostInstance));
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    [HOST_INSTANCE_HEADER]: hostInstance,
    ...(problem.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
    ...problem.headers,
  });
  res.end(text);
}
