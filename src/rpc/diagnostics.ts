import type { DecodeError, ExecClientError, RpcError } from '../errors';
import type { RequestId } from '../wire/jsonrpc';
import type { NotificationMethod } from '../wire/methods';

/**
 * Something wrong on a connection that belongs to no call: it is reported here and the connection stays
 * up. Nothing already received is lost because of it.
 */
export type Diagnostic =
  /** A frame that is not JSON, or not a JSON-RPC message. */
  | {
      /** The kind of problem. */
      readonly type: 'unparsableFrame';
      /** What failed to parse. */
      readonly error: DecodeError;
    }
  /** An error with id -1: the executor could not parse something we sent. */
  | {
      /** The kind of problem. */
      readonly type: 'unattributedError';
      /** The executor's error. */
      readonly error: RpcError;
    }
  /** A reply to an id with no pending call (never sent, already answered, timed out or cancelled). */
  | {
      /** The kind of problem. */
      readonly type: 'unknownResponse';
      /** The id the reply carried. */
      readonly id: RequestId;
    }
  /**
   * A notification whose params failed their codec and that names no process to repair. It reached no
   * subscriber: those of `RpcConnection.notifications` only ever get params that decoded.
   */
  | {
      /** The kind of problem. */
      readonly type: 'malformedNotification';
      /** The notification's method: one exec-rx knows (an unknown one is `unknownNotification`). */
      readonly method: NotificationMethod;
      /** What failed to decode. */
      readonly error: DecodeError;
    }
  /** A notification method exec-rx does not know: ignored. */
  | {
      /** The kind of problem. */
      readonly type: 'unknownNotification';
      /** The unknown method. */
      readonly method: string;
    }
  /** A server-to-client request we could not answer well (handler failed, duplicate id). */
  | {
      /** The kind of problem. */
      readonly type: 'serverRequestFailed';
      /** The request's method. */
      readonly method: string;
      /** What went wrong. */
      readonly error: ExecClientError;
    };
