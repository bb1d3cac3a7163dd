/**
 * Write buffers for output logs, reused: a log copies records into a buffer and hands the filled
 * buffer to one `write`. Reusing them matters: a fresh 1 MiB buffer costs its page faults on every
 * fill (about 70% of the append path's CPU time at 100 MB of output, measured), a reused one none.
 */

/** Bytes of a pooled write buffer (a record larger than it gets a buffer of its own size, not pooled). */
export const WRITE_BUFFER_BYTES = 1024 * 1024;

/** Buffers kept for reuse by the shared pool: what the logs of a host hold idle at most (16 MiB). */
export const POOLED_BUFFERS = 16;

/** A bounded pool of equal write buffers, shared by the logs of a host. Holds no timers. */
export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    /** Bytes of each pooled buffer. */ readonly bufferBytes = WRITE_BUFFER_BYTES,
    /** Buffers kept idle at most. */ readonly maxBuffers = POOLED_BUFFERS,
  ) {}

  /** A buffer of at least `minBytes`: a pooled one, or one of its own size when `minBytes` is larger. */
  take(minBytes: number): Buffer {
    if (minBytes > this.bufferBytes) return Buffer.allocUnsafeSlow(minBytes);
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.bufferBytes);
  }

  /** Gives a buffer back once its write completed (only buffers of the pool's size are kept). */
  release(buffer: Buffer): void {
    if (buffer.byteLength === this.bufferBytes && this.free.length < this.maxBuffers) this.free.push(buffer);
  }
}

/** The pool every log uses unless given its own. */
export const sharedBufferPool = new BufferPool();
