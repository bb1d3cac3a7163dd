import type { Observable } from 'rxjs';
import { Subject } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import type { OutputEvent, SequencedEvent } from '../wire/process-event';
import { outputEventOf } from '../wire/output-event';
import { decodeNotificationParams, isNotificationMethod } from '../wire/methods';
import type { ConnectionNotificationMethod, NotificationMethod, NotificationParamsOf, ProcessNotificationMethod } from '../wire/methods';
import type { Diagnostic } from './diagnostics';

/** A process's wire event: a decoded sequenced event, or a notification that failed its codec (a hole to fill). */
export type ProcessWireEvent =
  | SequencedEvent
  | {
      /** The event's kind: a notification for this process that failed its codec. */
      readonly type: 'malformed';
      /** The notification's method (`process/output`, `process/exited` or `process/closed`). */
      readonly method: ProcessNotificationMethod;
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

/** What the router does with one known notification: its params as parsed, and whether its frame held ASCII only. */
type NotificationHandler = (params: unknown, ascii: boolean) => void;

/** One hot Subject per method routed by method, each typed by its method's params. */
type MethodSubjects = { readonly [N in ConnectionNotificationMethod]: Subject<NotificationParamsOf<N>> };

/**
 * Routes notifications: process notifications by processId through one Map lookup (never one filter per
 * process) straight to the process's {@link ProcessRoute}, the others by method to their subscribers.
 * Each notification is decoded once, by its method's codec (`decodeNotificationParams`); one that fails
 * it reaches no subscriber: it goes to `diagnose`, or to its process's route as a `malformed` hole.
 * Notifications for processes nobody routes are ignored, as codex does. A `process/output` frame makes
 * one object: the event itself. It lives as long as its connection, which calls {@link complete} when it
 * closes.
 */
export class NotificationRouter {
  private readonly processes = new Map<string, ProcessRoute>();
  private readonly subjects: MethodSubjects = {
    'fs/missingChanged': new Subject(),
    'http/request/bodyDelta': new Subject(),
    'network/policyDecision': new Subject(),
  };
  /** One handler per known method: the type makes it exhaustive, and a lookup replaces a switch on the method. */
  private readonly handlers: { readonly [N in NotificationMethod]: NotificationHandler } = {
    'process/output': (params, ascii) => this.outputParams(params, ascii),
    'process/exited': (params) => this.exited(params),
    'process/closed': (params) => this.closed(params),
    'fs/missingChanged': (params) => this.toMethod('fs/missingChanged', params),
    'http/request/bodyDelta': (params) => this.toMethod('http/request/bodyDelta', params),
    'network/policyDecision': (params) => this.toMethod('network/policyDecision', params),
  };
  /** What a method not routed by method gets: nothing, then completion when the router completes. */
  private readonly silent = new Subject<never>();
  private completed = false;

  constructor(private readonly diagnose: (diagnostic: Diagnostic) => void) {}

  /** Routes registered for processes (bookkeeping). */
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

  /**
   * The decoded params of each `method` notification that arrives while subscribed (hot); completes when
   * the router completes (at once, once completed). Params that fail the codec are never emitted.
   */
  byMethod<N extends ConnectionNotificationMethod>(method: N): Observable<NotificationParamsOf<N>> {
    // An untyped caller may pass any string: a method not routed here never emits, and completes on close.
    if (!Object.prototype.hasOwnProperty.call(this.subjects, method)) return this.silent.asObservable();
    const subject: Subject<NotificationParamsOf<N>> = this.subjects[method];
    return subject.asObservable();
  }

  /** Dispatches one notification. `ascii`: its frame held ASCII only (see `decodeCanonical`). */
  dispatch(method: string, params: unknown, ascii = false): void {
    if (isNotificationMethod(method)) this.handlers[method](params, ascii);
    else this.diagnose({ type: 'unknownNotification', method });
  }

  /** The connection closed: ends every process route and completes every subscriber, now and later ones at once. */
  complete(): void {
    this.completed = true;
    const routes = [...this.processes.values()];
    this.processes.clear();
    for (const route of routes) route.complete();
    for (const subject of Object.values(this.subjects)) subject.complete();
    this.silent.complete();
  }

  /** A decoded `process/output` event (the frame scanner's, or {@link outputParams}'): one lookup by processId. */
  output(processId: string, event: OutputEvent): void {
    this.processes.get(processId)?.next(event);
  }

  /** `process/output`: the hand-written decoder, one lookup by processId, nothing allocated but the event (docs/performance.md). */
  private outputParams(params: unknown, ascii: boolean): void {
    const event = outputEventOf(params, ascii);
    const processId = event === undefined ? undefined : processIdOf(params);
    if (event === undefined || processId === undefined) return this.malformedOutput(params);
    this.output(processId, event);
  }

  /** The codec names what failed (the hand-written decoder only said no; it never refuses what the codec accepts). */
  private malformedOutput(params: unknown): void {
    const decoded = decodeNotificationParams('process/output', params);
    if (E.isLeft(decoded)) return this.malformed('process/output', params, decoded.left);
    const { processId, seq, stream, chunk } = decoded.right;
    this.processes.get(processId)?.next({ type: 'output', seq, stream, chunk });
  }

  private exited(params: unknown): void {
    const decoded = decodeNotificationParams('process/exited', params);
    if (E.isLeft(decoded)) return this.malformed('process/exited', params, decoded.left);
    const { processId, seq, exitCode, sandboxDenied } = decoded.right;
    this.processes.get(processId)?.next({ type: 'exited', seq, exitCode, sandboxDenied: sandboxDenied ?? false });
  }

  private closed(params: unknown): void {
    const decoded = decodeNotificationParams('process/closed', params);
    if (E.isLeft(decoded)) return this.malformed('process/closed', params, decoded.left);
    const { processId, seq } = decoded.right;
    this.processes.get(processId)?.next({ type: 'closed', seq });
  }

  /** Decodes once; subscribers get the decoded params, and params that fail the codec go to diagnostics. */
  private toMethod<N extends ConnectionNotificationMethod>(method: N, params: unknown): void {
    const decoded = decodeNotificationParams(method, params);
    if (E.isLeft(decoded)) return this.diagnose({ type: 'malformedNotification', method, error: decoded.left });
    const subject: Subject<NotificationParamsOf<N>> = this.subjects[method];
    subject.next(decoded.right);
  }

  /** A malformed process notification leaves a hole in that process's seq run: report it to the process. */
  private malformed(method: ProcessNotificationMethod, params: unknown, error: DecodeError): void {
    const processId = processIdOf(params);
    const route = processId === undefined ? undefined : this.processes.get(processId);
    if (route === undefined) this.diagnose({ type: 'malformedNotification', method, error });
    else route.next({ type: 'malformed', method, error });
  }
}

/** The `processId` params name, when they are an object whose `processId` is a string. */
function processIdOf(params: unknown): string | undefined {
  return typeof params === 'object' && params !== null && 'processId' in params && typeof params.processId === 'string' ? params.processId : undefined;
}

const noop = (): void => undefined;
