/**
 * A process's in-memory history as the memory log store hands it out: the history itself, with the store
 * told of what the process appends (its exit, close and failure) and of its release, and with the appends
 * of a fenced writer refused.
 */
import type { Observable } from 'rxjs';
import type { HistoryInput, OutputHistory } from '../../exec/output-history';
import type { ProcessEvent } from '../../exec/process-event';
import type { ProcessMeta } from '../process-meta';

/** One process as the memory store holds it. */
export interface MemoryEntry {
  /** What the store knows of it. */
  meta: ProcessMeta;
  /** The epoch its history is written at. */
  readonly epoch: number;
  /** Its history (what its readers read). */
  readonly history: OutputHistory;
  /** A newer writer claimed its environment: its appends are refused. */
  fenced: boolean;
}

/** What a {@link WatchedHistory} tells its store. */
export interface HistoryWatcher {
  /** The store's clock (ms). */
  now(): number;
  /** The process failed or its history was released: the store lets go of it. */
  drop(): void;
}

/** The entry's history, watched for the store (see the module's doc). A plain delegate: appends are the hot path. */
export class WatchedHistory implements OutputHistory {
  private readonly inner: OutputHistory;

  constructor(
    private readonly entry: MemoryEntry,
    private readonly watcher: HistoryWatcher,
  ) {
    this.inner = entry.history;
  }

  get historyStartSeq(): number {
    return this.inner.historyStartSeq;
  }

  get retainedEvents(): number {
    return this.inner.retainedEvents;
  }

  get retainedBytes(): number {
    return this.inner.retainedBytes;
  }

  get subscriberCount(): number {
    return this.inner.subscriberCount;
  }

  /** Resolves when the history is kept (the inner history's own wait, if it has one). Never rejects. */
  ready(): Promise<void> {
    return this.inner.ready?.() ?? Promise.resolve();
  }

  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    return this.inner.eventsAfter$(afterSeq);
  }

  /** Appends to the history unless fenced; an exit, close or failure is recorded in the entry. Never throws. */
  append(event: HistoryInput): void {
    if (this.entry.fenced) return;
    this.inner.append(event);
    if (event.type === 'output') return;
    const now = this.watcher.now();
    if (event.type === 'exited') this.entry.meta = { ...this.entry.meta, state: 'exited', exitCode: event.exitCode, exitedAt: now };
    else if (event.type === 'closed') this.entry.meta = { ...this.entry.meta, state: 'closed', endedAt: now };
    else if (event.type === 'failed') this.watcher.drop();
  }

  release(): void {
    this.inner.release();
    this.watcher.drop();
  }

  /** The process never ran: as {@link release} (the store lets go of it at once either way). */
  discard(): void {
    this.release();
  }
}
