import type { Subscriber } from 'rxjs';
import { Observable, Subject } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import type { SequencedEvent } from '../wire/process-event';
import { decodeWith } from '../wire/decode';
import { ProcessClosedNotification, ProcessExitedNotification, decodeProcessOutput } from '../wire/process';
import { NOTIFICATIONS } from '../wire/methods';
import type { Diagnostic } from './diagnostics';

/** A process's wire event: a decoded sequenced event, or a notification that failed its codec (a hole to fill). */
export type ProcessWireEvent =
  | SequencedEvent
  | {
      /** The event's kind: a notification for this process that failed its codec. */
      readonly type: 'malformed';
      /** The notification's method (`process/output`, `process/exited` or `process/closed`). */
      readonly method: string;
      /** What failed to decode. */
      readonly error: DecodeError;
    };

const decodeExited = decodeWith(ProcessExitedNotification);
const decodeClosed = decodeWith(ProcessClosedNotification);

/**
 * Routes notifications: process notifications by processId through one Map lookup (never one filter per
 * process), the others by method. Notifications for processes nobody routes are ignored, as codex does.
 */
export class NotificationRouter {
  private readonly processes = new Map<string, Subscriber<ProcessWireEvent>>();
  private readonly methods = new Map<string, Subject<unknown>>();
  private completed = false;

  constructor(private readonly diagnose: (diagnostic: Diagnostic) => void) {}

  get processRouteCount(): number {
    return this.processes.size;
  }

  byProcess(processId: string): Observable<ProcessWireEvent> {
    return new Observable<ProcessWireEvent>((subscriber) => {
      if (this.completed) {
        subscriber.complete();
        return undefined;
      }
      this.processes.get(processId)?.complete();
      this.processes.set(processId, subscriber);
      return () => {
        if (this.processes.get(processId) === subscriber) this.processes.delete(processId);
      };
    });
  }

  byMethod(method: string): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      if (this.completed) {
        subscriber.complete();
        return undefined;
      }
      let subject = this.methods.get(method);
      if (subject === undefined) {
        subject = new Subject<unknown>();
        this.methods.set(method, subject);
      }
      const inner = subject.subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        if (subject !== undefined && !subject.observed) this.methods.delete(method);
      };
    });
  }

  dispatch(method: string, params: unknown): void {
    switch (method) {
      case 'process/output': {
        const decoded = decodeProcessOutput(params);
        return E.isRight(decoded)
          ? this.toProcess(decoded.right.processId, { type: 'output', seq: decoded.right.seq, stream: decoded.right.stream, chunk: decoded.right.chunk })
          : this.malformed(method, params, decoded.left);
      }
      case 'process/exited': {
        const decoded = decodeExited(params);
        return E.isRight(decoded)
          ? this.toProcess(decoded.right.processId, { type: 'exited', seq: decoded.right.seq, exitCode: decoded.right.exitCode, sandboxDenied: decoded.right.sandboxDenied ?? false })
          : this.malformed(method, params, decoded.left);
      }
      case 'process/closed': {
        const decoded = decodeClosed(params);
        return E.isRight(decoded) ? this.toProcess(decoded.right.processId, { type: 'closed', seq: decoded.right.seq }) : this.malformed(method, params, decoded.left);
      }
      default:
        return this.toMethod(method, params);
    }
  }

  complete(): void {
    this.completed = true;
    for (const subscriber of [...this.processes.values()]) subscriber.complete();
    this.processes.clear();
    for (const subject of [...this.methods.values()]) subject.complete();
    this.methods.clear();
  }

  private toProcess(processId: string, event: ProcessWireEvent): void {
    this.processes.get(processId)?.next(event);
  }

  private toMethod(method: string, params: unknown): void {
    const codec = (NOTIFICATIONS as Readonly<Record<string, { readonly decode: (u: unknown) => E.Either<unknown, unknown> } | undefined>>)[method];
    if (codec === undefined) {
      this.diagnose({ type: 'unknownNotification', method });
      return;
    }
    const decoded = decodeWith(codec as Parameters<typeof decodeWith>[0])(params);
    if (E.isLeft(decoded)) {
      this.diagnose({ type: 'malformedNotification', method, error: decoded.left });
      return;
    }
    this.methods.get(method)?.next(decoded.right);
  }

  /** A malformed process notification leaves a hole in that process's seq run: report it to the process. */
  private malformed(method: string, params: unknown, error: DecodeError): void {
    const processId = typeof params === 'object' && params !== null && 'processId' in params ? params.processId : undefined;
    const route = typeof processId === 'string' ? this.processes.get(processId) : undefined;
    if (route === undefined) this.diagnose({ type: 'malformedNotification', method, error });
    else route.next({ type: 'malformed', method, error });
  }
}
