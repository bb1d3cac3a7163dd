/**
 * One part of an event stream that carries more than one (the overview with a selected process's
 * events, `./routes-environments`): {@link SseChannel}, the sink the process's pump writes to.
 */
import type { StreamEndReason } from '../metrics/host-metrics';
import type { EventFraming, WireFrame } from './event-framing';
import type { EventSink, SseStream } from './sse-stream';

/**
 * One part of a stream that carries more than one (the overview and a process's events): what the
 * process's pump writes to. Ending it (after `closed` or `failed`) ends only the part; the stream goes
 * on. What is a failure of the connection ends the stream itself: a write past its bound (the client
 * resumes by seq), a stall. The stream's end ends the channel.
 */
export class SseChannel implements EventSink {
  private ended = false;
  private readonly endListeners: (() => void)[] = [];

  constructor(private readonly parent: SseStream) {
    parent.onEnd(() => this.finish());
  }

  get framing(): EventFraming {
    return this.parent.framing;
  }

  get buffered(): number {
    return this.parent.buffered;
  }

  get highWater(): number {
    return this.parent.highWater;
  }

  get isEnded(): boolean {
    return this.ended || this.parent.isEnded;
  }

  write(frame: WireFrame): boolean {
    return !this.ended && this.parent.write(frame);
  }

  /** Ends the part; a `stalled` or `overflow` end is the connection's, and ends the stream. */
  end(reason: StreamEndReason = 'completed'): void {
    if (reason === 'stalled' || reason === 'overflow') this.parent.end(reason);
    this.finish();
  }

  onEnd(listener: () => void): void {
    if (this.isEnded) listener();
    else this.endListeners.push(listener);
  }

  onDrain(listener: () => void): () => void {
    return this.parent.onDrain(listener);
  }

  private finish(): void {
    this.ended = true;
    const listeners = this.endListeners.splice(0);
    for (const listener of listeners) listener();
  }
}
