import { absurd } from 'fp-ts/lib/function';
import type { OperatorFunction, Subscriber } from 'rxjs';
import { Observable } from 'rxjs';
import { ProtocolError } from '../errors';
import type { ProcessEvent, TruncatedEvent } from './process-event';
import type { OutputStream } from '../wire/process-event';
import { ReplayTruncatedError } from './replay-truncated-error';

/** Which output streams a view reads: one, several, or (omitted) all of them. */
export type StreamSelection = OutputStream | readonly OutputStream[];

/** Options of the byte, text and line views. */
export interface OutputViewOptions {
  /**
   * Accept a `truncated` marker (history dropped before this subscriber) and carry on with what is left,
   * instead of erroring with {@link ReplayTruncatedError}. Views are lossless or loud by default.
   * @default false
   */
  readonly allowTruncated?: boolean;
}

/** Options of the byte, text and line views of a process. */
export interface ProcessViewOptions extends OutputViewOptions {
  /**
   * Start after this seq (a subscriber resuming where it left off): the view reads
   * `ExecProcess.eventsAfter$` instead of `ExecProcess.events$`. @default 0 (everything)
   */
  readonly afterSeq?: number;
}

/** Where a view puts the selected chunks. */
interface OutputSink {
  chunk(stream: OutputStream, bytes: Uint8Array): void;
  /** The output ended normally (`closed`, or the source completed): flush what is held. */
  end(): void;
}

const ALL_STREAMS: readonly OutputStream[] = ['stdout', 'stderr', 'pty'];
const DECODE_STREAMING = { stream: true } as const;
const noop = (): void => undefined;

/**
 * The raw output chunks (of the selected streams), in seq order; the `Uint8Array`s are the event's own.
 *
 * Completes at `closed` (or when the source completes). Errors with the failure's error at `failed`, and
 * with {@link ReplayTruncatedError} at a `truncated` marker unless `allowTruncated`. Unsubscribing tears
 * down the subscription to the source and nothing else.
 */
export function bytesOf(
  stream?: StreamSelection,
  options: OutputViewOptions = {},
): OperatorFunction<ProcessEvent, Uint8Array> {
  return outputView(stream, options, (subscriber) => ({
    chunk: (_stream, bytes) => subscriber.next(bytes),
    end: noop,
  }));
}

/**
 * The output decoded as UTF-8 text. Multi-byte characters split across chunks are decoded correctly: each
 * selected stream has its own streaming TextDecoder, flushed at completion (an incomplete trailing
 * sequence becomes U+FFFD). Emits non-empty strings only, in chunk order.
 *
 * Completes, errors and tears down like {@link bytesOf}.
 */
export function textOf(stream?: StreamSelection, options: OutputViewOptions = {}): OperatorFunction<ProcessEvent, string> {
  return outputView(stream, options, (subscriber) => {
    const decoders = new PerStream(() => new TextDecoder());
    const emit = (text: string): void => {
      if (text !== '') subscriber.next(text);
    };
    return {
      chunk: (s, bytes) => emit(decoders.get(s).decode(bytes, DECODE_STREAMING)),
      end: () => decoders.forEach((decoder) => emit(decoder.decode())),
    };
  });
}

/**
 * The output as lines of UTF-8 text, without the `\n` and without a trailing `\r`. Each selected stream
 * is split on its own (a partial stdout line never joins stderr text). A final unterminated line is
 * emitted at completion; an empty one is not.
 *
 * Completes, errors and tears down like {@link bytesOf} (a partial line is dropped when it errors).
 */
export function linesOf(stream?: StreamSelection, options: OutputViewOptions = {}): OperatorFunction<ProcessEvent, string> {
  return outputView(stream, options, (subscriber) => {
    const emit = (line: string): void => subscriber.next(line);
    const splitters = new PerStream(() => new LineSplitter(emit));
    return {
      chunk: (s, bytes) => splitters.get(s).push(bytes),
      end: () => splitters.forEach((splitter) => splitter.end()),
    };
  });
}

/**
 * The exit code: emitted once, at the `exited` event (output may still follow it; this view does not
 * wait for `closed`), then completes and unsubscribes from the source.
 *
 * Errors with the failure's error at `failed` before the exit; with {@link ReplayTruncatedError} when the
 * events end (`closed` or completion) without an exit after a `truncated` marker (the exit was dropped
 * from the history); otherwise, when they end without an exit, with ProtocolError.
 */
export function exitCodeOf(): OperatorFunction<ProcessEvent, number> {
  return (source) =>
    new Observable<number>((subscriber) => {
      let truncated: TruncatedEvent | undefined;
      const missing = (): void =>
        subscriber.error(
          truncated !== undefined
            ? new ReplayTruncatedError(truncated)
            : new ProtocolError('process events ended without an exit event'),
        );
      return source.subscribe({
        next: (event) => {
          if (subscriber.closed) return;
          switch (event.type) {
            case 'exited':
              subscriber.next(event.exitCode);
              return subscriber.complete();
            case 'output':
              return;
            case 'closed':
              return missing();
            case 'failed':
              return subscriber.error(event.error);
            case 'truncated':
              truncated = event;
              return;
            default:
              return absurd(event);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: missing,
      });
    });
}

/** The shared skeleton: route the selected output to a sink, and end, fail or refuse truncation. */
function outputView<R>(
  selection: StreamSelection | undefined,
  options: OutputViewOptions,
  makeSink: (subscriber: Subscriber<R>) => OutputSink,
): OperatorFunction<ProcessEvent, R> {
  const picked = pickStreams(selection);
  const allowTruncated = options.allowTruncated === true;
  return (source) =>
    new Observable<R>((subscriber) => {
      const sink = makeSink(subscriber);
      const end = (): void => {
        if (subscriber.closed) return;
        sink.end();
        subscriber.complete();
      };
      // `subscriber.closed` guards the synchronous replay: the source keeps emitting until subscribe returns.
      return source.subscribe({
        next: (event) => {
          if (subscriber.closed) return;
          switch (event.type) {
            case 'output':
              if (picked[event.stream]) sink.chunk(event.stream, event.chunk);
              return;
            case 'exited':
              return;
            case 'closed':
              return end();
            case 'failed':
              return subscriber.error(event.error);
            case 'truncated':
              if (!allowTruncated) subscriber.error(new ReplayTruncatedError(event));
              return;
            default:
              return absurd(event);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: end,
      });
    });
}

function pickStreams(selection: StreamSelection | undefined): Readonly<Record<OutputStream, boolean>> {
  const chosen: readonly OutputStream[] =
    selection === undefined ? ALL_STREAMS : typeof selection === 'string' ? [selection] : selection;
  return { stdout: chosen.includes('stdout'), stderr: chosen.includes('stderr'), pty: chosen.includes('pty') };
}

/** One lazily created value per stream; `forEach` visits them in stdout, stderr, pty order. */
class PerStream<T> {
  private readonly values: Partial<Record<OutputStream, T>> = {};

  constructor(private readonly create: () => T) {}

  get(stream: OutputStream): T {
    const existing = this.values[stream];
    if (existing !== undefined) return existing;
    const created = this.create();
    this.values[stream] = created;
    return created;
  }

  forEach(visit: (value: T) => void): void {
    for (const stream of ALL_STREAMS) {
      const value = this.values[stream];
      if (value !== undefined) visit(value);
    }
  }
}

/** Streaming UTF-8 decode plus `\n` splitting for one stream. */
class LineSplitter {
  private readonly decoder = new TextDecoder();
  private carry = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(bytes: Uint8Array): void {
    this.split(this.decoder.decode(bytes, DECODE_STREAMING));
  }

  end(): void {
    this.split(this.decoder.decode());
    const rest = this.carry;
    this.carry = '';
    if (rest !== '') this.emit(stripCarriageReturn(rest));
  }

  private split(text: string): void {
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      const piece = text.slice(start, newline);
      const line = this.carry === '' ? piece : this.carry + piece;
      this.carry = '';
      this.emit(stripCarriageReturn(line));
      start = newline + 1;
    }
    if (start < text.length) this.carry += start === 0 ? text : text.slice(start);
  }
}

function stripCarriageReturn(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}
