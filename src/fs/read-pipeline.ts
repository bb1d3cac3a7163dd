import type { Subscription } from 'rxjs';
import { Observable } from 'rxjs';
import type { CallOptions } from '../rpc/rpc-connection';
import { toBuffer } from '../wire/bytes';
import type { FsReadBlockResponse } from '../wire/fs';
import type { ReadScheduler } from './fs-options';
import type { HandleBinding } from './handle-binding';

/** What to read, checked by the caller: `end` exclusive (undefined: to the end of the file). */
export interface ReadPlan {
  readonly blockSize: number;
  readonly start: number;
  readonly end: number | undefined;
  readonly inFlight: number;
  readonly call: CallOptions;
  /** Where each read waits for its turn ({@link ReadStreamOptions.schedule}); none: sent at once. */
  readonly schedule: ReadScheduler | undefined;
}

/** Where the blocks go, in file order. */
interface BlockSink {
  block(bytes: Buffer): void;
  done(): void;
  fail(error: unknown): void;
}

interface Slot {
  readonly offset: number;
  readonly len: number;
  result?: FsReadBlockResponse;
  subscription?: Subscription;
}

/**
 * Keeps up to `inFlight` `fs/readBlock`s of one `read` handle in flight and hands their blocks to the
 * sink strictly in file order. The first read goes alone (an empty, small or unreadable file costs one
 * read, no wasted ones); once it answered the window opens to `inFlight`, minus the blocks the consumer
 * has not taken yet (`waiting()`). It stops at `end`, at `eof` or at an empty block; a short block
 * without `eof` drops the reads sent past it and goes on from where it ended. Reads cut by a drop are
 * sent again by the binding. Does not release the handle: its owner does.
 */
class ReadPipeline {
  private readonly slots: Slot[] = [];
  private next: number;
  private opened = false;
  private atEof = false;
  private stopped = false;

  constructor(
    private readonly binding: HandleBinding,
    private readonly plan: ReadPlan,
    private readonly sink: BlockSink,
    private readonly waiting: () => number,
  ) {
    this.next = plan.start;
  }

  /** Sends reads while the window has room; ends the sink when nothing is left to read. */
  fill(): void {
    const { end, blockSize } = this.plan;
    const window = this.opened ? this.plan.inFlight : 1;
    while (!this.stopped && !this.atEof && (end === undefined || this.next < end) && this.slots.length + this.waiting() < window) {
      const len = end === undefined ? blockSize : Math.min(blockSize, end - this.next);
      const offset = this.next;
      this.next += len; // before sending: an answer that comes synchronously refills from here
      this.send({ offset, len });
    }
    if (!this.stopped && this.slots.length === 0 && (this.atEof || (end !== undefined && this.next >= end))) {
      this.stopped = true;
      this.sink.done();
    }
  }

  /** Stops sending and drops the reads in flight (their answers are ignored). Idempotent. */
  stop(): void {
    this.stopped = true;
    this.dropSlots();
  }

  private send(slot: Slot): void {
    this.slots.push(slot);
    const read$ = this.binding.read(slot.offset, slot.len, this.plan.call);
    slot.subscription = (this.plan.schedule === undefined ? read$ : this.plan.schedule(read$)).subscribe({
      next: (result) => {
        slot.result = result;
        this.drain();
      },
      error: (error: unknown) => {
        if (this.stopped) return;
        this.stop();
        this.sink.fail(error);
      },
    });
  }

  /** Hands over the answered blocks at the head, in order, then refills the window. */
  private drain(): void {
    for (let head = this.slots[0]; head?.result !== undefined && !this.stopped; head = this.slots[0]) {
      this.slots.shift();
      this.opened = true;
      const { chunk, eof } = head.result;
      if (chunk.byteLength > 0) this.sink.block(toBuffer(chunk));
      if (eof || chunk.byteLength === 0) {
        this.atEof = true;
        this.dropSlots();
      } else if (chunk.byteLength < head.len) {
        this.dropSlots();
        this.next = head.offset + chunk.byteLength;
      }
    }
    this.fill();
  }

  private dropSlots(): void {
    for (const slot of this.slots.splice(0)) slot.subscription?.unsubscribe();
  }
}

/**
 * The blocks of `plan` as an Observable, read with up to `inFlight` requests in flight. Emits each
 * non-empty block in order; completes at `end` or at the end of the file (at once, with no call, for an
 * empty range); errors with the first failing read's error. Owns the binding: it is released (`fs/close`)
 * on completion, error and unsubscribe.
 */
export function readPipelined(binding: HandleBinding, plan: ReadPlan): Observable<Buffer> {
  return new Observable<Buffer>((subscriber) => {
    const pipeline = new ReadPipeline(binding, plan, { block: (b) => subscriber.next(b), done: () => subscriber.complete(), fail: (e) => subscriber.error(e) }, () => 0);
    // Added before the first read: an answer that comes synchronously may end the subscription at once.
    subscriber.add(() => {
      pipeline.stop();
      binding.release().subscribe({ error: () => undefined });
    });
    pipeline.fill();
  });
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The blocks of `plan`, pulled: at most `inFlight` blocks are requested or held ahead of what the
 * consumer has taken, so a slow consumer (an HTTP response waiting for `drain`) slows the reads down.
 * Starts reading at the first `next()`. Yields each non-empty block in order; ends at `end` or at the end
 * of the file; rejects with the first failing read's error (after the blocks before it). Owns the binding:
 * released at the end, on error, and on `return()` (a `break` out of `for await`), which also ends a
 * pending `next()` as done.
 */
export function readPulled(binding: HandleBinding, plan: ReadPlan): AsyncIterableIterator<Buffer> {
  return new PulledBlocks(binding, plan);
}

class PulledBlocks implements AsyncIterableIterator<Buffer> {
  private readonly queue: Buffer[] = [];
  private readonly pipeline: ReadPipeline;
  private waiter: { readonly resolve: (r: IteratorResult<Buffer, undefined>) => void; readonly reject: (e: unknown) => void } | undefined;
  private ending: { readonly error: unknown } | 'done' | undefined;
  private started = false;
  private finished = false;

  constructor(
    private readonly binding: HandleBinding,
    plan: ReadPlan,
  ) {
    const sink = { block: (b: Buffer) => this.onBlock(b), done: () => this.onEnd('done'), fail: (error: unknown) => this.onEnd({ error }) };
    this.pipeline = new ReadPipeline(binding, plan, sink, () => this.queue.length);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Buffer> {
    return this;
  }

  next(): Promise<IteratorResult<Buffer, undefined>> {
    const block = this.queue.shift();
    if (block !== undefined) {
      this.pipeline.fill();
      return Promise.resolve({ value: block, done: false });
    }
    if (this.finished) return Promise.resolve(DONE);
    if (this.ending !== undefined) return this.settle(this.ending);
    const waiting = new Promise<IteratorResult<Buffer, undefined>>((resolve, reject) => (this.waiter = { resolve, reject }));
    if (!this.started) {
      this.started = true;
      this.pipeline.fill();
    }
    return waiting;
  }

  return(): Promise<IteratorResult<Buffer, undefined>> {
    this.queue.length = 0;
    this.finish();
    this.waiter?.resolve(DONE);
    this.waiter = undefined;
    return Promise.resolve(DONE);
  }

  private onBlock(block: Buffer): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter === undefined) this.queue.push(block);
    else waiter.resolve({ value: block, done: false });
  }

  private onEnd(ending: { readonly error: unknown } | 'done'): void {
    this.ending = ending;
    this.binding.release().subscribe({ error: () => undefined });
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter === undefined) return;
    this.finish();
    if (ending === 'done') waiter.resolve(DONE);
    else waiter.reject(ending.error);
  }

  private settle(ending: { readonly error: unknown } | 'done'): Promise<IteratorResult<Buffer, undefined>> {
    this.finish();
    return ending === 'done' ? Promise.resolve(DONE) : Promise.reject(ending.error);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.pipeline.stop();
    this.binding.release().subscribe({ error: () => undefined });
  }
}
