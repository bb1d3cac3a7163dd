import { messageOf, ResizeFailedError } from '../errors';
import type { TtySize } from './tty-size';
import { checkTtySize } from './tty-size';

/** Applies one size to the terminal on the executor; resolves once applied, rejects with why not. */
export type ApplyTtySize = (size: TtySize) => Promise<void>;

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Resizes one process's terminal, coalescing: at most one `apply` runs at a time; sizes asked meanwhile
 * replace each other, and only the last is applied once the running one finished. Each `resize` resolves
 * once its size, or a later one that superseded it, was applied; it rejects with ResizeFailedError
 * (`failed`) when that apply failed, or (`ended`) once {@link end} was called first. A failure never
 * affects the process or later resizes.
 */
export class TtyResizer {
  private wanted: { size: TtySize; waiters: Waiter[] } | undefined;
  private applying = false;
  private ended = false;
  private applied: TtySize | undefined;

  /** @param initial the size the terminal has now; undefined when unknown (a process taken back after a host restart) */
  constructor(
    private readonly processId: string,
    initial: TtySize | undefined,
    private readonly apply: ApplyTtySize,
  ) {
    this.applied = initial;
  }

  /** The size last applied (the start size until a resize was applied); undefined while unknown. */
  get size(): TtySize | undefined {
    return this.applied;
  }

  /** Asks for `rows` x `cols`; rejects with InvalidTtySizeError (nothing sent) unless both are 1 to 10000. */
  resize(rows: number, cols: number): Promise<void> {
    let size: TtySize;
    try {
      size = checkTtySize(rows, cols);
    } catch (error: unknown) {
      return Promise.reject(error);
    }
    if (this.ended) return Promise.reject(this.endedError());
    return new Promise<void>((resolve, reject) => {
      const waiters = this.wanted?.waiters ?? [];
      waiters.push({ resolve, reject });
      this.wanted = { size, waiters };
      void this.drain();
    });
  }

  /** The process ended: sizes not yet applying are rejected (`ended`), and so is every later resize. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const waiters = this.wanted?.waiters ?? [];
    this.wanted = undefined;
    for (const waiter of waiters) waiter.reject(this.endedError());
  }

  private async drain(): Promise<void> {
    if (this.applying) return;
    this.applying = true;
    while (this.wanted !== undefined) {
      const { size, waiters } = this.wanted;
      this.wanted = undefined;
      try {
        await this.apply(size);
        this.applied = size;
        for (const waiter of waiters) waiter.resolve();
      } catch (error: unknown) {
        const failure = this.ended
          ? this.endedError()
          : new ResizeFailedError(this.processId, 'failed', `${size.rows}x${size.cols}: ${messageOf(error)}`, { cause: error });
        for (const waiter of waiters) waiter.reject(failure);
      }
    }
    this.applying = false;
  }

  private endedError(): ResizeFailedError {
    return new ResizeFailedError(this.processId, 'ended', 'the process has ended');
  }
}

/** `resizer.resize(rows, cols)`; without a resizer (the process has no sized terminal) ResizeFailedError `unsized`. */
export function resizeOrRefuse(resizer: TtyResizer | undefined, processId: string, rows: number, cols: number): Promise<void> {
  if (resizer === undefined) {
    return Promise.reject(new ResizeFailedError(processId, 'unsized', 'it was not started with a terminal size (tty: { rows, cols }), or the executor could not size it'));
  }
  return resizer.resize(rows, cols);
}
