import { Observable, Subject } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import type { SequencedEvent } from '../wire/process-event';
import { decodeWith } from '../wire/decode';
import { outputEventOf } from '../wire/output-event';
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

/**
 * Where one process's wire events go: called synchronously for each, in arrival order. `complete` runs
 * once when the route ends (replaced by another route for the same process, or the connection closed).
 */
export interface ProcessRoute {
  readonly next: (event: ProcessWireEvent) => void;
  readonly complete: () => void;
}

const decodeExited = decodeWith(ProcessExitedNotification);
const decodeClosed = decodeWith(ProcessClosedNotification);

/**
 * Routes notifications: process notifications by processId through one Map lookup (never one filter per
 * process) straight to the process's {@link ProcessRoute}, the others by method. Notifications for
 * processes nobody routes are ignored, as codex does. A `process/output` frame makes one object: the
 * event itself.
 */
export class NotificationRouter {
  private readonly processes = new Map<string, ProcessRoute>();
  private readonly methods = new Map<string, Subject<unknown>>();
  private completed = false;

  constructor(private readonly diagnose: (diagnostic: Diagnostic) => void) {}

  get processRouteCount(): number {
    return this.processes.size;
  }

  /**
   * Routes `processId`'s events to `route` (completing the route it replaces) until the returned
   * function runs or the router completes. Once completed, `route` completes at once.
   */
  route(processId: string, route: ProcessRoute): () => void {
    if (this.completed) {
      route.complete();
      return noop;
    }
    const previous = this.processes.get(processId);
    this.processes.set(processId, route);
    previous?.complete();
    return () => {
      if (this.processes.get(processId) === route) this.processes.delete(processId);
    };
  }

  /** {@link route} as an Observable: one subscriber per process; completes when replaced or closed. */
  byProcess(processId: string): Observable<ProcessWireEvent> {
    return new Observable<ProcessWireEvent>((subscriber) =>
      this.route(processId, { next: (event) => subscriber.next(event), complete: () => subscriber.complete() }),
    );
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

  /** Dispatches one notification. `ascii`: its frame held ASCII only (see `decodeCanonical`). */
  dispatch(method: string, params: unknown, ascii = false): void {
    switch (method) {
      case 'process/output': {
        const event = outputEventOf(params, ascii);
        if (event === undefined) return this.malformedOutput(params);
        // outputEventOf returned an event: params is an object whose processId is a string.
        this.processes.get((params as { readonly processId: string }).processId)?.next(event);
        return;
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
    const routes = [...this.processes.values()];
    this.processes.clear();
    for (const route of routes) route.complete();
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

  /** The codec names what failed (the hot path only said no; it never refuses what the codec accepts). */
  private malformedOutput(params: unknown): void {
    const decoded = decodeProcessOutput(params);
    if (E.isLeft(decoded)) return this.malformed('process/output', params, decoded.left);
    const { processId, seq, stream, chunk } = decoded.right;
    this.toProcess(processId, { type: 'output', seq, stream, chunk });
  }

  /** A malformed process notification leaves a hole in that process's seq run: report it to the process. */
  private malformed(method: string, params: unknown, error: DecodeError): void {
    const processId = typeof params === 'object' && params !== null && 'processId' in params ? params.processId : undefined;
    const route = typeof processId === 'string' ? this.processes.get(processId) : undefined;
    if (route === undefined) this.diagnose({ type: 'malformedNotification', method, error });
    else route.next({ type: 'malformed', method, error });
  }
}

const noop = (): void => undefined;
