/**
 * The processes table ("Processes") of the selected environment: a row per process (`data-process-id`,
 * `data-state`) with its argv (a button that selects it), state, exit code, start time and a duration
 * that runs live while it runs.
 */
import type { ProcessResource } from '../client';
import { h, setText } from './dom';

interface Row {
  readonly tr: HTMLTableRowElement;
  readonly button: HTMLButtonElement;
  readonly state: HTMLTableCellElement;
  readonly exit: HTMLTableCellElement;
  readonly started: HTMLTableCellElement;
  readonly duration: HTMLTableCellElement;
  process: ProcessResource;
}

/** The argv as one line (the row button's name). */
export const argvText = (argv: readonly string[]): string => argv.join(' ');

/** `1h 02m 03s`-style duration of `ms`. */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m ${String(s).padStart(2, '0')}s`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The table, updated in place. */
export class ProcessesView {
  readonly element: HTMLElement;
  private readonly body = h('tbody');
  private readonly empty = h('p', { class: 'muted' }, 'No processes.');
  private readonly rows = new Map<string, Row>();
  private selected: string | undefined;

  constructor(private readonly select: (process: ProcessResource) => void) {
    // Fixed layout (app.css): the columns after Command have their own widths, the argv takes the rest
    // and is cut with an ellipsis (the whole argv is the button's title and the pane's heading).
    const columns = [
      ['Command', 'col-argv'],
      ['State', 'col-state'],
      ['Exit code', 'col-exit'],
      ['Started', 'col-started'],
      ['Duration', 'col-duration'],
    ] as const;
    const head = h('thead', {}, h('tr', {}, ...columns.map(([title, className]) => h('th', { scope: 'col', class: className }, title))));
    this.element = h('section', { class: 'panel processes' }, h('table', {}, h('caption', {}, 'Processes'), head, this.body), this.empty);
  }

  /** Shows `processes` (of the selected environment). */
  update(processes: readonly ProcessResource[], now: number): void {
    const seen = new Set<string>();
    for (const process of processes) {
      seen.add(process.id);
      const row = this.rows.get(process.id) ?? this.add(process);
      row.process = process;
      row.tr.dataset['state'] = process.state;
      const state = process.error === null ? process.state : `${process.state}: ${process.error.message}`;
      setText(row.state, state);
      if (row.state.title !== state) row.state.title = state;
      setText(row.exit, process.exitCode === null ? '' : String(process.exitCode));
      setText(row.started, process.startedAt === undefined || process.startedAt === null ? '' : new Date(process.startedAt).toLocaleTimeString());
    }
    for (const [id, row] of this.rows) {
      if (!seen.has(id)) {
        row.tr.remove();
        this.rows.delete(id);
      }
    }
    this.empty.hidden = this.rows.size > 0;
    this.tick(now);
    this.markSelected();
  }

  /** Updates the durations (every second). */
  tick(now: number): void {
    for (const row of this.rows.values()) {
      const started = Date.parse(row.process.startedAt ?? '');
      const ended = row.process.exitedAt === undefined || row.process.exitedAt === null ? now : Date.parse(row.process.exitedAt);
      setText(row.duration, Number.isNaN(started) ? '' : durationText(ended - started));
    }
  }

  /** Marks the selected process. */
  setSelected(processId: string | undefined): void {
    this.selected = processId;
    this.markSelected();
  }

  private markSelected(): void {
    for (const [id, row] of this.rows) {
      row.button.setAttribute('aria-pressed', String(id === this.selected));
      row.tr.classList.toggle('selected', id === this.selected);
    }
  }

  private add(process: ProcessResource): Row {
    const argv = argvText(process.argv);
    const button = h('button', { type: 'button', class: 'link argv', title: argv }, argv);
    const row: Row = {
      tr: h('tr', { 'data-process-id': process.id }),
      button,
      state: h('td'),
      exit: h('td', { class: 'num' }),
      started: h('td'),
      duration: h('td', { class: 'num' }),
      process,
    };
    button.addEventListener('click', () => this.select(row.process));
    row.tr.append(h('td', {}, button), row.state, row.exit, row.started, row.duration);
    this.body.append(row.tr);
    this.rows.set(process.id, row);
    return row;
  }
}
