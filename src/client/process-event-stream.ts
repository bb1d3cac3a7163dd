/**
 * `HostClient.events$`: a process's events from a host, exactly once and in order across dropped
 * connections, resumed by seq; a host unreachable for up to `maxOfflineMs` is waited out with backoff
 * and jitter (and `Retry-After`); a host that restarted and lost the process fails `PROCESS_GONE`.
 */
import * as E from 'fp-ts/lib/Either';
import type * as t from 'io-ts';
import type { Observable } from 'rxjs';
import type { ExecClientErrorCode } from '../errors';
import { HostApiError } from './host-api-error';
import { decodeWith, parseJson } from '../wire/decode';
import { API_PREFIX, ClosedEventData, ExitedEventData, FailedEventData, OutputEventData, TruncatedEventData } from '../wire/operator-api';
import { HOST_INSTANCE_HEADER, HOST_REPLICA_HEADER } from '../wire/operator-api';
import { decodeBase64 } from './base64';
import type { OutputFrame } from './binary-reader';
import type { HostConnection } from './host-connection';
import { errorOf } from './host-connection';
import type { HostProcessEvent } from './host-types';
import type { SseMessage } from './sse-reader';
import type { SseSession } from './sse-session';
import { runSse, sse$ } from './sse-session';

/** Options of `HostClient.events$`. */
export interface ProcessEventsOptions {
  /** Start after this seq (what the subscriber already has). @default 0 */
  readonly afterSeq?: number;
  /** Keep streaming live events (`true`), or stop once what the host holds now was delivered. @default true */
  readonly follow?: boolean;
}

function decoded<A>(codec: t.Type<A, unknown, unknown>, data: string, what: string): A {
  const parsed = parseJson(data);
  const result = E.isRight(parsed) ? decodeWith(codec)(parsed.right) : parsed;
  if (E.isLeft(result)) throw new HostApiError('DECODE_FAILED', `${what}: ${result.left.message}`, undefined, undefined);
  return result.right;
}

/** A `failed` event's data: why the process (or its stream) ended without `closed`. */
export interface ProcessFailure {
  readonly type: 'failed';
  readonly code: ExecClientErrorCode;
  readonly message: string;
}

/**
 * Reads one process's SSE messages into events, once each and in seq order: a repeat (a resumed
 * stream's overlap) gives nothing; a skip without a `truncated` marker is a hole, thrown as
 * `PROCESS_GAP`; a message that does not decode throws `DECODE_FAILED`. Tracks the last seq, to resume after.
 */
export class ProcessEventReader {
  /** `closed` or `failed` came: nothing follows it. */
  ended = false;

  constructor(
    /** The last seq handed on (or to resume after). */
    public lastSeq: number,
  ) {}

  /** Whether `event` is one of a process's event stream's. */
  static carries(event: string): boolean {
    return event === 'output' || event === 'exited' || event === 'closed' || event === 'truncated' || event === 'failed';
  }

  /** The output event a binary stream's frame carries, if it is the next one; `undefined` for a repeat or after the end. */
  readOutput(frame: OutputFrame): HostProcessEvent | undefined {
    if (this.ended || !this.accept(frame.seq)) return undefined;
    return { type: 'output', seq: frame.seq, stream: frame.stream, chunk: frame.chunk, ...timed(frame.time) };
  }

  /** The event `message` carries, if it is the next one; `undefined` for a repeat, a message of another kind, or after the end. */
  read(message: SseMessage): HostProcessEvent | ProcessFailure | undefined {
    if (this.ended) return undefined;
    switch (message.event) {
      case 'output': {
        const data = decoded(OutputEventData, message.data, 'output event');
        const chunk = decodeBase64(data.chunk);
        if (chunk === undefined) throw new HostApiError('DECODE_FAILED', 'output event: its chunk is not standard padded base64', undefined, undefined);
        return this.accept(data.seq) ? { type: 'output', seq: data.seq, stream: data.stream, chunk, ...timed(data.time) } : undefined;
      }
      case 'exited': {
        const data = decoded(ExitedEventData, message.data, 'exited event');
        return this.accept(data.seq) ? { type: 'exited', seq: data.seq, exitCode: data.exitCode, ...timed(data.time) } : undefined;
      }
      case 'closed': {
        const data = decoded(ClosedEventData, message.data, 'closed event');
        if (!this.accept(data.seq)) return undefined;
        this.ended = true;
        return { type: 'closed', seq: data.seq, ...timed(data.time) };
      }
      case 'truncated': {
        const data = decoded(TruncatedEventData, message.data, 'truncated event');
        if (data.nextSeq <= this.lastSeq + 1) return undefined;
        this.lastSeq = data.nextSeq - 1;
        const { nextSeq, droppedEvents, droppedBytes, reason } = data;
        return { type: 'truncated', nextSeq, droppedEvents, ...(droppedBytes === undefined ? {} : { droppedBytes }), ...(reason === undefined ? {} : { reason }) };
      }
      case 'failed': {
        const data = decoded(FailedEventData, message.data, 'failed event');
        this.ended = true;
        return { type: 'failed', code: data.code, message: data.message };
      }
      default:
        return undefined;
    }
  }

  /** Whether `seq` is the next one: a repeat is skipped; a skip without a `truncated` marker is a hole, loudly. */
  private accept(seq: number): boolean {
    if (seq <= this.lastSeq) return false;
    if (seq !== this.lastSeq + 1) throw new HostApiError('PROCESS_GAP', `events: the host sent seq ${seq} after ${this.lastSeq} with no truncated marker`, undefined, undefined);
    this.lastSeq = seq;
    return true;
  }
}

/** Follows one process's event stream, tracking the last seq delivered so every reconnect resumes after it. */
class Follower implements SseSession {
  private readonly reader: ProcessEventReader;
  /** The host ended a stream whole (with `follow: false`, all it held was delivered). */
  private drained = false;
  private everFound = false;
  /** The host instance (with replicas: the cluster's id) that served the last stream opened. */
  private instance: string | undefined;
  /** The replica that served it, when the host names one (only for the messages). */
  private replica: string | undefined;

  constructor(
    private readonly basePath: string,
    private readonly follow: boolean,
    afterSeq: number,
    private readonly emit: (event: HostProcessEvent) => void,
    /** The consumer's room, when it can fall behind. */
    private readonly gate: () => Promise<void> | undefined = () => undefined,
    /** Ask for the binary stream (an older host answers SSE, read as such). */
    readonly binary = false,
  ) {
    this.reader = new ProcessEventReader(afterSeq);
  }

  room(): Promise<void> | undefined {
    return this.gate();
  }

  path(): string {
    return `${this.basePath}?after=${this.reader.lastSeq}${this.follow ? '' : '&follow=false'}`;
  }

  /** Over after `closed`; without `follow`, once a stream ended whole (a cut one is resumed). */
  finished(): boolean {
    return this.reader.ended || (!this.follow && this.drained);
  }

  progress(): number {
    return this.reader.lastSeq;
  }

  /**
   * An error answer: PROCESS_GONE when the process was found before and another host instance now says
   * it does not know it (the host restarted and lost it); the instance that served it saying so is its
   * own answer (released), as is a process never found. Replicas of one cluster share the instance id
   * (`exec-rx-host-instance` is the cluster's; `exec-rx-host-replica` names the replica), so a stream
   * that moved to another url of the client, or another replica behind one balancer, is not taken for
   * a restart: a 404 from a replica with the same instance id is that cluster's own answer.
   */
  async refusal(response: Response): Promise<HostApiError> {
    const error = await errorOf(response, 'events');
    const restarted = error.hostInstance === undefined || error.hostInstance !== this.instance;
    if (this.everFound && restarted && (error.code === 'PROCESS_NOT_FOUND' || error.code === 'ENVIRONMENT_NOT_FOUND')) {
      const was = `${this.instance ?? 'unknown'}${this.replica === undefined ? '' : ` replica ${this.replica}`}`;
      const replica = response.headers.get(HOST_REPLICA_HEADER);
      const now = `${error.hostInstance ?? 'unknown'}${replica === null ? '' : ` replica ${replica}`}`;
      const message = `events: the host restarted (instance ${was}, now ${now}) and no longer knows this process: ${error.message}`;
      return new HostApiError('PROCESS_GONE', message, error.status, error.hostInstance, { cause: error });
    }
    return error;
  }

  onOpen(response: Response): void {
    this.everFound = true;
    this.instance = response.headers.get(HOST_INSTANCE_HEADER) ?? undefined;
    this.replica = response.headers.get(HOST_REPLICA_HEADER) ?? undefined;
  }

  onEnd(): void {
    this.drained = true;
  }

  onOutput(frame: OutputFrame): void {
    const event = this.reader.readOutput(frame);
    if (event !== undefined) this.emit(event);
  }

  onMessage(message: SseMessage): void {
    const event = this.reader.read(message);
    if (event === undefined) return;
    if (event.type === 'failed') throw new HostApiError(event.code, event.message, undefined, undefined);
    this.emit(event);
  }
}

/**
 * Follows the events of process `processId` of `environmentId` after `options.afterSeq`, handing each to
 * `emit` (once, in seq order, with `truncated` markers), until `closed` (or, with `follow: false`, until
 * what the host holds was delivered): then it resolves. It rejects as {@link processEvents} errors, and
 * resolves quietly once `signal` aborts. With `room`, the body is read only while the consumer has room
 * (see `SseSession.room`): a consumer that falls behind holds the host back through TCP.
 */
export function followProcess(
  connection: HostConnection,
  environmentId: string,
  processId: string,
  options: ProcessEventsOptions,
  emit: (event: HostProcessEvent) => void,
  signal: AbortSignal,
  room?: () => Promise<void> | undefined,
): Promise<void> {
  const path = `${API_PREFIX}/environments/${encodeURIComponent(environmentId)}/processes/${encodeURIComponent(processId)}/events`;
  const follower = new Follower(path, options.follow ?? true, options.afterSeq ?? 0, emit, room, connection.binaryEvents);
  return runSse(connection, 'events', follower, signal);
}

/**
 * The events of process `processId` of `environmentId`, after `afterSeq`: each once, in seq order, a
 * `truncated` marker where the host no longer holds what was asked. Completes after `closed` (or, with
 * `follow: false`, once what the host holds was delivered). Errors with HostApiError: the code of a
 * `failed` event, `PROCESS_GONE`, `HOST_UNREACHABLE` after `maxOfflineMs`, the host's refusal
 * (`UNAUTHORIZED`, `PROCESS_NOT_FOUND` …), `PROCESS_GAP` if a hole ever came unmarked. Cold: each
 * subscription is its own stream; unsubscribing aborts the request and every wait. The body is read at
 * full speed (an Observable has no way to say "not yet"): a subscriber that cannot keep up holds the
 * difference itself. `pulledEvents` (./pulled-events) is the same stream with backpressure.
 */
export function processEvents(connection: HostConnection, environmentId: string, processId: string, options: ProcessEventsOptions = {}): Observable<HostProcessEvent> {
  return sse$<HostProcessEvent>((emit, signal) => followProcess(connection, environmentId, processId, options, emit, signal));
}

/** The `time` field of an event, only when the host gave one (an event object has no `time: undefined`). */
const timed = (time: number | undefined): { readonly time?: number } => (time === undefined ? {} : { time });
