import { HttpBodyOverflowError } from '../errors';

/** How a body source ended: at its last byte, or with an error. */
type BodyEnd = { readonly type: 'done' } | { readonly type: 'error'; readonly error: unknown };

/**
 * A response body as a `ReadableStream<Uint8Array>` whose unread bytes are bounded: the source pushes
 * pieces as they come (the executor cannot be paused for one request), the reader pulls them. More than
 * `limitBytes` unread errors the stream at once with HttpBodyOverflowError and stops the source. A source
 * that ends or fails is heard after the bytes before it are read: `end()` closes the stream, `end(error)`
 * errors it, once the queue is drained. `fail(error)` (an abort) errors it at once. Cancelling the stream
 * stops the source. `stop` runs once, on whichever comes first.
 */
export class BoundedBody {
  /** The stream the Response carries. */
  readonly stream: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private readonly chunks: Uint8Array[] = [];
  private queuedBytes = 0;
  private ended: BodyEnd | undefined;
  /** A read is waiting (the stream called pull and got nothing yet). */
  private wanted = false;
  private finished = false;

  constructor(
    private readonly requestId: string,
    private readonly limitBytes: number,
    private readonly stop: () => void,
  ) {
    // highWaterMark 0: the stream pulls only for a waiting read, so every unread byte is in `chunks`.
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.pull(),
        cancel: () => this.finish(),
      },
      { highWaterMark: 0 },
    );
  }

  /** Whether the stream is over (closed, errored or cancelled): later pushes are dropped. */
  get closed(): boolean {
    return this.finished;
  }

  /** A piece of the body, in order. */
  push(chunk: Uint8Array): void {
    if (this.finished || this.ended !== undefined || chunk.byteLength === 0) return;
    if (this.wanted && this.chunks.length === 0) {
      this.wanted = false;
      this.controller?.enqueue(chunk);
      return;
    }
    this.chunks.push(chunk);
    this.queuedBytes += chunk.byteLength;
    if (this.queuedBytes > this.limitBytes) this.fail(new HttpBodyOverflowError(this.requestId, this.limitBytes));
  }

  /** The source ended (`error` absent) or failed: heard once what came before it is read. */
  end(error?: unknown): void {
    if (this.finished || this.ended !== undefined) return;
    this.ended = error === undefined ? { type: 'done' } : { type: 'error', error };
    if (this.chunks.length === 0) this.settle();
  }

  /** Errors the stream now, dropping what is unread, and stops the source. */
  fail(error: unknown): void {
    if (this.finished) return;
    this.chunks.length = 0;
    this.queuedBytes = 0;
    this.controller?.error(error);
    this.finish();
  }

  private pull(): void {
    const chunk = this.chunks.shift();
    if (chunk === undefined) {
      if (this.ended === undefined) this.wanted = true;
      else this.settle();
      return;
    }
    this.queuedBytes -= chunk.byteLength;
    this.controller?.enqueue(chunk);
    if (this.chunks.length === 0 && this.ended !== undefined) this.settle();
  }

  private settle(): void {
    const ended = this.ended;
    if (this.finished || ended === undefined) return;
    if (ended.type === 'done') this.controller?.close();
    else this.controller?.error(ended.error);
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.chunks.length = 0;
    this.queuedBytes = 0;
    this.stop();
  }
}
