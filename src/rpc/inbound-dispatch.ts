/**
 * What each inbound message does on a connection: a reply settles its call, a notification is routed, a
 * server request reaches its handler, and what belongs to nothing is a diagnostic; `messages$` sees each
 * parsed message first.
 */
import type { Subject } from 'rxjs';
import type { DecodeError } from '../errors';
import type { Inbound, RequestId } from '../wire/jsonrpc';
import { UNATTRIBUTED_ERROR_ID } from '../wire/jsonrpc';
import type { OutputSink } from '../wire/output-scanner';
import type { Diagnostic } from './diagnostics';
import type { FrameHandlers } from './frame-reader';
import type { NotificationRouter } from './notification-router';
import type { PendingCalls, Reply } from './pending-calls';
import { toRpcError } from './rpc-error';
import type { ServerRequests } from './server-requests';

/** The {@link FrameHandlers} of one `RpcConnection`: where `readFrame` puts each frame it read. */
export class InboundDispatch implements FrameHandlers {
  constructor(
    private readonly pending: PendingCalls,
    private readonly router: NotificationRouter,
    private readonly serverRequests: ServerRequests,
    /** The connection's diagnostics (`diagnostics$`). */
    private readonly diagnostics: Subject<Diagnostic>,
    /** The connection's messages (`messages$`): each parsed message goes there before it is acted on. */
    private readonly messages: Subject<Inbound>,
    /** Whether the connection closed (a `messages$` subscriber may close it). */
    private readonly closed: () => boolean,
  ) {}

  /** A frame that does not parse: a diagnostic. */
  unparsable(error: DecodeError): void {
    this.diagnostics.next({ type: 'unparsableFrame', error });
  }

  /** A `process/output` notification the scanner read: routed to its process (a field: `readFrame` passes it on unbound). */
  readonly output: OutputSink = (processId, event) => this.router.output(processId, event);

  /** A notification read on the fast path: routed. */
  notification(method: string, params: unknown, ascii: boolean): void {
    this.router.dispatch(method, params, ascii);
  }

  /** A success response read on the fast path: settles its call, or is a diagnostic. */
  response(id: RequestId, result: unknown): void {
    if (!this.pending.settleResult(id, result)) this.diagnostics.next({ type: 'unknownResponse', id });
  }

  /** Any other message: `messages$` sees it first, then it is acted on unless that closed the connection. */
  message(message: Inbound, ascii: boolean): void {
    if (this.messages.observed) {
      this.messages.next(message);
      // A subscriber closed the connection: nothing is left to act on this message.
      if (this.closed()) return;
    }
    switch (message.type) {
      case 'response':
      case 'error':
        return this.onReply(message);
      case 'notification':
        return this.router.dispatch(message.method, message.params, ascii);
      case 'request':
        return this.serverRequests.handle(message.id, message.method, message.params);
    }
  }

  private onReply(reply: Reply): void {
    if (this.pending.settle(reply)) return;
    if (reply.type === 'error' && reply.id === UNATTRIBUTED_ERROR_ID) {
      this.diagnostics.next({ type: 'unattributedError', error: toRpcError('(unattributed)', reply.error) });
      return;
    }
    this.diagnostics.next({ type: 'unknownResponse', id: reply.id });
  }
}
