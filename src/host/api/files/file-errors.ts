/**
 * What the executor's `fs/*` errors mean to a client of the file routes: each a problem+json with a code
 * of its own (docs/operator-api.md, "Files"). The executor answers a filesystem failure with a JSON-RPC
 * error whose message is Rust's `io::Error` text (`No such file or directory (os error 2)`) or its own
 * words (`path \`…\` is not a file`); the message, not the JSON-RPC code, tells most of them apart
 * (docs/protocol.md#error-codes, docs/protocol.md#filesystem-methods; the same errno comes as -32600 or
 * -32603, so the message decides). What is not recognised falls back to the library's code (`problemOf`).
 */
import { NotFoundError, RpcError } from '../../../errors';
import { ApiProblem, problemOf } from '../problem';

/** One recognised failure: how its message reads, and the answer it gets. */
interface Known {
  readonly match: RegExp;
  readonly status: number;
  readonly code: 'FILE_NOT_FOUND' | 'IS_A_DIRECTORY' | 'NOT_A_DIRECTORY' | 'DIRECTORY_NOT_EMPTY' | 'FILE_EXISTS' | 'FILE_FORBIDDEN' | 'INSUFFICIENT_STORAGE' | 'INVALID_PATH';
  readonly says: string;
}

/** The executor's messages (and a helper process's stderr, `cp`/`mv`/`rm` in the C locale), first match wins. */
const KNOWN: readonly Known[] = [
  { match: /No such file or directory|os error 2\)/i, status: 404, code: 'FILE_NOT_FOUND', says: 'no such file or directory' },
  { match: /is not a file|Is a directory|os error 21\)/i, status: 409, code: 'IS_A_DIRECTORY', says: 'a directory where a file is meant' },
  { match: /Not a directory|os error 20\)/i, status: 409, code: 'NOT_A_DIRECTORY', says: 'a file where a directory is meant' },
  { match: /Directory not empty|os error 39\)/i, status: 409, code: 'DIRECTORY_NOT_EMPTY', says: 'the directory is not empty' },
  { match: /File exists|os error 17\)/i, status: 409, code: 'FILE_EXISTS', says: 'the path exists already' },
  { match: /Read-only file system|os error 30\)/i, status: 403, code: 'FILE_FORBIDDEN', says: 'the file system there is read-only' },
  { match: /Permission denied|Operation not permitted|os error (1|13)\)/i, status: 403, code: 'FILE_FORBIDDEN', says: 'the executor may not do that' },
  { match: /No space left on device|Disk quota exceeded|os error (28|122)\)/i, status: 507, code: 'INSUFFICIENT_STORAGE', says: "the executor's disk is full" },
  { match: /File ?name too long|os error 36\)/i, status: 400, code: 'INVALID_PATH', says: 'a name is too long for the executor' },
  { match: /Symbolic link loop|os error 40\)|contains a symbolic link/i, status: 400, code: 'INVALID_PATH', says: 'a symbolic link loop' },
  { match: /invalid URI|is invalid on '/i, status: 400, code: 'INVALID_PATH', says: 'the executor refused the path' },
];

/** The problem a failure message stands for, when it is one {@link KNOWN} names. */
export function knownFailure(message: string, path: string): ApiProblem | undefined {
  const known = KNOWN.find((entry) => entry.match.test(message));
  if (known === undefined) return undefined;
  return new ApiProblem(known.status, known.code, `${path}: ${known.says} (${message.slice(0, 300)})`);
}

/**
 * The problem `error` (what a `RemoteFileSystem` call rejected with) stands for on `path`: NotFoundError
 * (-32004) → 404 `FILE_NOT_FOUND`; an RpcError whose message {@link KNOWN} names → that answer; anything
 * else as the rest of the API answers it (`problemOf`: a lost connection 503, a timeout 504, …).
 */
export function fileProblemOf(error: unknown, path: string): ApiProblem {
  if (error instanceof ApiProblem) return error;
  if (error instanceof NotFoundError) return new ApiProblem(404, 'FILE_NOT_FOUND', `${path}: no such file or directory`);
  if (error instanceof RpcError) return knownFailure(error.rpcMessage, path) ?? problemOf(error);
  return problemOf(error);
}

/** Runs `call`, turning what it rejects with into the file routes' problem for `path` (see {@link fileProblemOf}). */
export async function onPath<T>(path: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error: unknown) {
    throw fileProblemOf(error, path);
  }
}
