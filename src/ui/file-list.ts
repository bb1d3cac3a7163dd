/**
 * The table of a directory's entries ("Files"): a row per entry (`data-file-name`, `data-type`), its
 * name as a button (a directory opens, a file shows in the text view), size, modification time, and the
 * row's actions: "Download NAME" (files) and "Delete NAME". Directories first, then by name; updated in
 * place, so focus and selection stay where they are while changes arrive.
 */
import { h, setText } from './dom';
import type { FileEntry } from '../client';
import { sizeText } from './file-paths';

/** What a row's controls do. */
export interface FileListActions {
  open(entry: FileEntry): void;
  download(entry: FileEntry): void;
  remove(entry: FileEntry): void;
}

interface Row {
  readonly tr: HTMLTableRowElement;
  readonly name: HTMLButtonElement;
  readonly size: HTMLTableCellElement;
  readonly modified: HTMLTableCellElement;
  readonly download: HTMLButtonElement;
  entry: FileEntry;
}

/** Directories first, then by name (code unit order, as the host sorts). */
const before = (a: FileEntry, b: FileEntry): number => {
  if ((a.type === 'directory') !== (b.type === 'directory')) return a.type === 'directory' ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
};

const two = (n: number): string => String(n).padStart(2, '0');

/** A row's time: local `YYYY-MM-DD HH:MM:SS` (the ISO time with milliseconds is the cell's title). */
function timeText(modifiedAt: string | null): string {
  if (modifiedAt === null) return '';
  const t = new Date(modifiedAt);
  if (Number.isNaN(t.getTime())) return modifiedAt;
  return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
}

/** The table. */
export class FileList {
  readonly element: HTMLElement;
  private readonly body = h('tbody');
  private readonly empty = h('p', { class: 'muted' }, 'Empty directory.');
  private readonly rows = new Map<string, Row>();
  private selected: string | undefined;

  constructor(private readonly actions: FileListActions) {
    const columns = [
      ['Name', 'col-name'],
      ['Size', 'col-size'],
      ['Modified', 'col-modified'],
      ['Actions', 'col-actions'],
    ] as const;
    const head = h('thead', {}, h('tr', {}, ...columns.map(([title, className]) => h('th', { scope: 'col', class: className }, title))));
    this.element = h('div', { class: 'file-table' }, h('table', {}, h('caption', {}, 'Files'), head, this.body), this.empty);
    this.empty.hidden = true;
  }

  /** Shows exactly `entries` (a new listing). */
  replace(entries: readonly FileEntry[]): void {
    const names = new Set(entries.map((entry) => entry.name));
    for (const name of [...this.rows.keys()]) if (!names.has(name)) this.delete(name);
    for (const entry of entries) this.put(entry);
  }

  /** Adds or updates one entry. */
  put(entry: FileEntry): void {
    const old = this.rows.get(entry.name);
    if (old !== undefined && old.entry.type !== entry.type) this.delete(entry.name);
    const row = this.rows.get(entry.name) ?? this.add(entry);
    row.entry = entry;
    row.tr.dataset['type'] = entry.type;
    setText(row.size, entry.type === 'directory' ? '' : sizeText(entry.size));
    if (row.size.title !== `${entry.size} bytes`) row.size.title = `${entry.size} bytes`;
    setText(row.modified, timeText(entry.modifiedAt));
    if (row.modified.title !== (entry.modifiedAt ?? '')) row.modified.title = entry.modifiedAt ?? '';
    this.empty.hidden = true;
  }

  /** Removes one entry's row. */
  delete(name: string): void {
    const row = this.rows.get(name);
    if (row === undefined) return;
    row.tr.remove();
    this.rows.delete(name);
    this.empty.hidden = this.rows.size > 0;
  }

  /** Empties the table (another directory is being listed); `message` replaces "Empty directory." meanwhile. */
  clear(message: string): void {
    this.body.replaceChildren();
    this.rows.clear();
    setText(this.empty, message);
    this.empty.hidden = message === '';
  }

  /** Once listed: "Empty directory." when there is nothing. */
  listed(): void {
    setText(this.empty, 'Empty directory.');
    this.empty.hidden = this.rows.size > 0;
  }

  /** The entry named `name`, when listed. */
  entry(name: string): FileEntry | undefined {
    return this.rows.get(name)?.entry;
  }

  /** Marks the file shown in the text view. */
  setSelected(name: string | undefined): void {
    this.selected = name;
    for (const [rowName, row] of this.rows) this.mark(rowName, row);
  }

  private mark(name: string, row: Row): void {
    row.name.setAttribute('aria-pressed', String(name === this.selected));
    row.tr.classList.toggle('selected', name === this.selected);
  }

  private add(entry: FileEntry): Row {
    const directory = entry.type === 'directory';
    const label = `${entry.name}${directory ? '/' : ''}${entry.isSymlink ? ' →' : ''}`;
    const name = h('button', { type: 'button', class: 'link file-name', title: entry.path, 'aria-label': entry.name }, label);
    const download = h('button', { type: 'button', 'aria-label': `Download ${entry.name}`, hidden: directory }, 'Download');
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${entry.name}` }, 'Delete');
    const row: Row = {
      tr: h('tr', { 'data-file-name': entry.name }),
      name,
      size: h('td', { class: 'num' }),
      modified: h('td', { class: 'num' }),
      download,
      entry,
    };
    name.addEventListener('click', () => this.actions.open(row.entry));
    download.addEventListener('click', () => this.actions.download(row.entry));
    remove.addEventListener('click', () => this.actions.remove(row.entry));
    row.tr.append(h('td', {}, name), row.size, row.modified, h('td', { class: 'actions' }, download, remove));
    const next = [...this.rows.values()].filter((other) => before(entry, other.entry) < 0).sort((a, b) => before(a.entry, b.entry))[0];
    this.body.insertBefore(row.tr, next?.tr ?? null);
    this.rows.set(entry.name, row);
    this.mark(entry.name, row);
    return row;
  }
}
