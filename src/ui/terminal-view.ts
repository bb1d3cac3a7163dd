/**
 * The live output in xterm (`data-testid="terminal"`): fit and search addons, follow/pause, timestamps,
 * visible markers, and the write-callback counting that drives {@link FlowGate}.
 */
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Terminal } from '@xterm/xterm';
import type { Observable } from 'rxjs';
import { Subject, debounceTime, distinctUntilChanged, map } from 'rxjs';
import type { HostOutputEvent, TtySize } from '../client';
import { h } from './dom';
import type { FlowGate } from './flow-gate';
import { currentTheme, onSchemeChange, SEARCH_OPTIONS } from './terminal-theme';
import type { OutputRecorder } from './test-hook';
import { NO_RECORDER } from './test-hook';
import { slices } from './write-slices';

const NEWLINE = 0x0a;
const encoder = new TextEncoder();

/** `[HH:MM:SS.mmm] ` in the theme's grey (bright black: readable contrast, unlike SGR dim), for a line's start. */
const stamp = (time: number): string => `\x1b[90m[${new Date(time).toISOString().slice(11, 23)}]\x1b[39m `;

/** The terminal pane. */
export class TerminalView {
  readonly element = h('div', { class: 'terminal', 'data-testid': 'terminal' });
  readonly terminal: Terminal;
  private readonly fit = new FitAddon();
  private readonly search = new SearchAddon();
  private readonly fitted$ = new Subject<TtySize>();
  private follow = true;
  private timestamps = false;
  /** The next output byte starts a line (for timestamps). */
  private atLineStart = true;
  private gate: FlowGate | undefined;
  /** Whether typing goes to the process (a running tty, operate token): then Tab is the process's too. */
  private takesInput = false;
  /** Escape was the last key: a Tab now leaves the terminal even when it takes input. */
  private escaped = false;
  private recorder: OutputRecorder = NO_RECORDER;

  /** The size the terminal fits its pane at, on each change (debounced 150 ms). */
  readonly resized$: Observable<TtySize>;

  constructor() {
    this.terminal = new Terminal({
      convertEol: true,
      scrollback: 10000,
      theme: currentTheme(),
      allowProposedApi: true,
      fontFamily: 'ui-monospace, "Liberation Mono", monospace',
      fontSize: 13,
    });
    this.terminal.loadAddon(this.fit);
    this.terminal.loadAddon(this.search);
    onSchemeChange((theme) => (this.terminal.options.theme = theme));
    this.resized$ = this.fitted$.pipe(
      debounceTime(150),
      map((size) => ({ rows: size.rows, cols: size.cols })),
      distinctUntilChanged((a, b) => a.rows === b.rows && a.cols === b.cols),
    );
    this.terminal.onResize((size) => this.fitted$.next(size));
    this.terminal.attachCustomKeyEventHandler((event) => this.keyGoesToTerminal(event));
  }

  /**
   * No keyboard trap: Tab and Shift+Tab move the focus on, unless the terminal takes input (a running tty),
   * where Tab is the program's (completion) and Escape then Tab moves on.
   */
  private keyGoesToTerminal(event: KeyboardEvent): boolean {
    if (event.type !== 'keydown') return true;
    if (event.key === 'Tab') {
      const leave = !this.takesInput || this.escaped;
      this.escaped = false;
      return !leave;
    }
    this.escaped = event.key === 'Escape';
    return true;
  }

  /** Whether typing goes to the process now (see {@link keyGoesToTerminal}). */
  setTakesInput(takes: boolean): void {
    this.takesInput = takes;
    this.terminal.options.disableStdin = !takes;
  }

  /** Puts the terminal into its pane (once the pane is in the document) and keeps it fitted. */
  open(gate: FlowGate, recorder: OutputRecorder): void {
    this.gate = gate;
    this.recorder = recorder;
    this.terminal.open(this.element);
    this.refit();
    new ResizeObserver(() => this.refit()).observe(this.element);
  }

  /** Fits the pane now. */
  refit(): void {
    if (this.element.clientWidth > 0 && this.element.clientHeight > 0) this.fit.fit();
  }

  /** The terminal's size now. */
  get size(): TtySize {
    return { rows: this.terminal.rows, cols: this.terminal.cols };
  }

  /** Empties the terminal for another process (`tty`: its output is a terminal's, with its own line ends). */
  reset(tty: boolean): void {
    this.terminal.reset();
    // The test hook records this view's output: it starts over with it (a seq is never recorded twice).
    this.recorder.reset();
    this.terminal.options.convertEol = !tty;
    this.setTakesInput(false);
    this.atLineStart = true;
    this.search.clearDecorations();
  }

  /** Hands one output event to the terminal (counted for flow control until xterm wrote it). */
  output(event: HostOutputEvent): void {
    this.recorder.record(event.seq, event.chunk);
    if (!this.timestamps || event.time === undefined) {
      this.write(event.chunk);
      this.atLineStart = event.chunk.length > 0 ? event.chunk[event.chunk.length - 1] === NEWLINE : this.atLineStart;
      return;
    }
    let from = 0;
    const prefix = stamp(event.time);
    while (from < event.chunk.length) {
      if (this.atLineStart) this.write(encoder.encode(prefix));
      const newline = event.chunk.indexOf(NEWLINE, from);
      const to = newline < 0 ? event.chunk.length : newline + 1;
      this.write(event.chunk.subarray(from, to));
      this.atLineStart = newline >= 0;
      from = to;
    }
  }

  /** A visible line of the page's own (a truncated marker, the end), on a line of its own. */
  marker(text: string): void {
    this.write(encoder.encode(`${this.atLineStart ? '' : '\r\n'}\x1b[7m ${text} \x1b[27m\r\n`));
    this.atLineStart = true;
  }

  /** Follow (scroll to new output) or pause (the view stays where it is). */
  setFollow(follow: boolean): void {
    this.follow = follow;
    if (follow) this.terminal.scrollToBottom();
  }

  /** Prefix lines with the host's event time, from the next output on. */
  setTimestamps(on: boolean): void {
    this.timestamps = on;
  }

  /** Searches forwards or backwards; `''` clears. */
  find(term: string, backwards = false): void {
    if (term === '') {
      this.search.clearDecorations();
      return;
    }
    if (backwards) this.search.findPrevious(term, SEARCH_OPTIONS);
    else this.search.findNext(term, SEARCH_OPTIONS);
  }

  /** Hears "n of m" on each change of the search results. */
  onSearchResults(listener: (index: number, count: number) => void): void {
    this.search.onDidChangeResults((event) => listener(event.resultIndex, event.resultCount));
  }

  /**
   * Hands `bytes` to xterm in slices of at most `WRITE_SLICE` bytes (`./write-slices` says why:
   * one big write was one long task), each counted for flow control until its write callback.
   */
  private write(bytes: Uint8Array): void {
    for (const slice of slices(bytes)) this.writeSlice(slice);
  }

  private writeSlice(bytes: Uint8Array): void {
    const length = bytes.length;
    const viewport = this.terminal.buffer.active.viewportY;
    this.gate?.queued(length);
    this.terminal.write(bytes, () => {
      // Paused: new output does not move the view (xterm would follow it when the view was at the bottom).
      if (!this.follow && this.terminal.buffer.active.viewportY !== viewport) this.terminal.scrollToLine(viewport);
      this.gate?.written(length);
    });
  }
}

