import { ProtocolError } from '../errors';
import type { ExecClientError } from '../errors';
import type { RequestId } from '../wire/jsonrpc';
import { encodeErrorResponse, encodeResponse, ErrorCodes } from '../wire/jsonrpc';
import type { Diagnostic } from './diagnostics';

/** What a server-to-client request handler answers: a result, or a JSON-RPC error. */
export type ServerRequestOutcome =
  | {
      /** The result to answer with (its wire form). */
      readonly result: unknown;
    }
  | {
      /** A JSON-RPC error to answer with instead. */
      readonly error: {
        /** The JSON-RPC error code, e.g. -32602 for invalid params. */
        readonly code: number;
        /** What went wrong. */
        readonly message: string;
      };
    };

/** Answers server-to-client requests (only `network/policyRequest` exists in 0.171.0). */
export type ServerRequestHandler = (method: string, params: unknown) => Promise<ServerRequestOutcome> | undefined;

/** What {@link ServerRequests} needs from its connection. */
export interface ServerRequestsPeer {
  /** Sends an answer; answers to a socket that has closed meanwhile are dropped. */
  readonly send: (frame: string) => void;
  /** Closes the connection (the peer broke the protocol). */
  readonly close: (reason: string) => void;
  /** Reports what went wrong to the connection's diagnostics. */
  readonly diagnose: (diagnostic: Diagnostic) => void;
}

/**
 * Answers the server-to-client requests of one connection. A method the handler returns `undefined`
 * for (or every method, without a handler) gets -32601 at once; a handler's outcome is sent as a result
 * or a JSON-RPC error; a handler that rejects gets -32603 and a `serverRequestFailed` diagnostic. An id
 * that arrives again while its first request is still being handled is a protocol error: reported, and
 * the connection is closed, as codex closes the transport.
 */
export class ServerRequests {
  private readonly inFlight = new Set<RequestId>();

  constructor(
    private readonly handler: ServerRequestHandler | undefined,
    private readonly peer: ServerRequestsPeer,
  ) {}

  /** Handles one inbound request. */
  handle(id: RequestId, method: string, params: unknown): void {
    if (this.inFlight.has(id)) {
      this.report(method, new ProtocolError(`duplicate in-flight server request id ${String(id)} for ${method}`));
      this.peer.close('duplicate server request id');
      return;
    }
    const outcome = this.handler?.(method, params);
    if (outcome === undefined) {
      this.peer.send(encodeErrorResponse(id, ErrorCodes.MethodNotFound, `exec-server client does not implement \`${method}\` yet`));
      return;
    }
    this.inFlight.add(id);
    outcome.then(
      (answer) => {
        this.inFlight.delete(id);
        this.peer.send('result' in answer ? encodeResponse(id, answer.result) : encodeErrorResponse(id, answer.error.code, answer.error.message));
      },
      (error: unknown) => {
        this.inFlight.delete(id);
        this.peer.send(encodeErrorResponse(id, ErrorCodes.InternalError, `exec-server client failed to handle \`${method}\``));
        this.report(method, new ProtocolError(`server request handler for ${method} failed: ${String(error)}`));
      },
    );
  }

  /** The connection closed: forgets the ids in flight (their answers, if they come, are dropped by `send`). */
  clear(): void {
    this.inFlight.clear();
  }

  private report(method: string, error: ExecClientError): void {
    this.peer.diagnose({ type: 'serverRequestFailed', method, error });
  }
}
