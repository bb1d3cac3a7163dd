/**
 * `exec-rx cp`'s progress line on a terminal's stderr: files done, bytes, rate and ETA, redrawn in place
 * four times a second on the CLI's scheduler, and nothing at all when stderr is not a terminal. Lines of
 * their own (a failed file) clear it first.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { interval } from 'rxjs';

/** Where the line goes: a terminal stderr (`isTTY`) gets it; anything else gets only the lines. */
export interface ProgressSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

const REDRAW_MS = 250;

/** Bytes as `12.3 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit] ?? ''}`;
}

/** Seconds as `1:02:03` / `2:03` / `3s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/** The counts of one copy, and its progress line. */
export class CopyProgress {
  filesDone = 0;
  filesFailed = 0;
  bytesDone = 0;
  private filesTotal = 0;
  /** `undefined` while a size is unknown (stdin). */
  private bytesTotal: number | undefined = 0;
  private readonly startedAt: number;
  private redraw: Subscription | undefined;
  private shown = false;

  constructor(
    private readonly sink: ProgressSink,
    private readonly scheduler: SchedulerLike,
  ) {
    this.startedAt = scheduler.now();
  }

  /** Whether the line is drawn (stderr is a terminal). */
  get live(): boolean {
    return this.sink.isTTY === true;
  }

  /** Starts redrawing (on a terminal only). */
  start(): void {
    if (!this.live || this.redraw !== undefined) return;
    this.redraw = interval(REDRAW_MS, this.scheduler).subscribe(() => this.draw());
  }

  /** A file to copy, of `size` bytes (`undefined`: not known). */
  planned(size: number | undefined): void {
    this.filesTotal += 1;
    this.bytesTotal = size === undefined || this.bytesTotal === undefined ? undefined : this.bytesTotal + size;
  }

  /** Bytes copied. */
  moved(bytes: number): void {
    this.bytesDone += bytes;
  }

  /** A line of its own on stderr (the progress line cleared first, drawn again at the next tick). */
  say(line: string): void {
    this.clear();
    this.sink.write(`exec-rx: ${line}\n`);
  }

  /** The line as it reads now. */
  line(): string {
    const elapsedS = Math.max(0.001, (this.scheduler.now() - this.startedAt) / 1000);
    const rate = this.bytesDone / elapsedS;
    const total = this.bytesTotal === undefined ? '' : ` / ${formatBytes(this.bytesTotal)}`;
    const left = this.bytesTotal === undefined ? undefined : this.bytesTotal - this.bytesDone;
    const eta = left === undefined || rate <= 0 ? '' : `  ETA ${formatDuration(left / rate)}`;
    const failed = this.filesFailed === 0 ? '' : ` (${this.filesFailed} failed)`;
    return `${this.filesDone}/${this.filesTotal} files${failed}  ${formatBytes(this.bytesDone)}${total}  ${formatBytes(Math.round(rate))}/s${eta}`;
  }

  /** Stops redrawing and clears the line. */
  stop(): void {
    this.redraw?.unsubscribe();
    this.redraw = undefined;
    this.clear();
  }

  private draw(): void {
    this.sink.write(`\r\u001b[K${this.line()}`);
    this.shown = true;
  }

  private clear(): void {
    if (!this.shown) return;
    this.sink.write('\r\u001b[K');
    this.shown = false;
  }
}
