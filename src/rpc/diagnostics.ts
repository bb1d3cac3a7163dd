import type { DecodeError, ExecClientError, RpcError } from '../errors';
import type { RequestId } from '../wire/jsonrpc';

/**
 * Something wrong on a connection that belongs to no call: it is reported here and the connection stays
 * up. Nothing already received is lost because of it.
 */
export type Diagnostic =
  /** A frame that is not JSON, or not a JSON-RPC message. */
  | { readonly type: 'unparsableFrame'; readonly error: DecodeError }
  /** An error with id -1: the executor could not parse something we sent. */
  | { readonly type: 'unattributedError'; readonly error: RpcError }
  /** A reply to an id with no pending call (never sent, already answered, timed out or cancelled). */
  | { readonly type: 'unknownResponse'; readonly id: RequestId }
  /** A notification whose params failed their codec and that names no process to repair. */
  | { readonly type: 'malformedNotification'; readonly method: string; readonly error: DecodeError }
  /** A notification method exec-rx does not know: ignored. */
  | { readonly type: 'unknownNotification'; readonly method: string }
  /** A server-to-client request we could not answer well (handler failed, duplicate id). */
  | { readonly type: 'serverRequestFailed'; readonly method: string; readonly error: ExecClientError };
