/**
 * The Files view of the selected environment (operate tokens only): a directory's entries kept current by
 * the change stream (`changes$` of the directory shown, subscribed only while the view is shown: one
 * more streaming connection then, none otherwise), a path bar, a text view, download by a single-use
 * ticket url (never the token in a url), upload by picking or dropping files (with progress), new folder,
 * and delete after a confirmation.
 */
import type { Observable, Subscription } from 'rxjs';
import { BehaviorSubject, EMPTY, switchMap } from 'rxjs';
import { confirmDialog } from './confirm-dialog';
import { h, labelled, setText } from './dom';
import type { FollowState } from './directory-follower';
import { followDirectory, reasonOf } from './directory-follower';
import { acceptDrops } from './drop-zone';
import { FileList } from './file-list';
import { childOf, normalized, parentOf } from './file-paths';
import { FileTextView } from './file-text-view';
import type { FileChange, FileEntry, HostFiles } from '../client';
import { PathBar } from './path-bar';
import { UploadList } from './upload-list';

/** The view. */
export class FilesView {
  readonly element: HTMLElement;
  private readonly bar = new PathBar((path) => this.go(path));
  private readonly list: FileList;
  private readonly viewer: FileTextView;
  private readonly uploads = new UploadList();
  private readonly message = h('p', { class: 'error', role: 'alert' });
  private readonly live = h('span', { class: 'badge', 'data-testid': 'files-live', 'data-state': 'idle' }, 'idle');
  private readonly dropZone = h('p', { class: 'drop-zone', 'data-testid': 'drop-zone' }, 'Drop files here to upload them into this directory.');
  /** The directory followed now (undefined while hidden or with no environment). */
  private readonly shown$ = new BehaviorSubject<{ readonly files: HostFiles; readonly dir: string } | undefined>(undefined);
  /** The last directory shown, per environment. */
  private readonly dirs = new Map<string, string>();
  private files: HostFiles | undefined;
  private environmentId: string | undefined;
  private dir = '/';
  private visible = false;

  constructor() {
    this.list = new FileList({ open: (entry) => this.open(entry), download: (entry) => this.download(entry), remove: (entry) => void this.remove(entry) });
    this.viewer = new FileTextView({ download: (entry) => this.download(entry), close: () => this.closeViewer() });
    const picker = h('input', { type: 'file', multiple: true });
    picker.addEventListener('change', () => {
      const picked = [...(picker.files ?? [])];
      picker.value = '';
      void this.upload(picked);
    });
    const folder = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const mkdir = h('form', { class: 'toolbar', 'aria-label': 'New folder' }, labelled('New folder', folder, 'field inline'), h('button', { type: 'submit' }, 'Create folder'));
    mkdir.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.mkdir(folder.value.trim()).then((made) => void (made && (folder.value = '')));
    });
    this.element = h(
      'section',
      { class: 'panel files', 'aria-labelledby': 'files-heading' },
      h('div', { class: 'toolbar' }, h('h2', { id: 'files-heading' }, 'Files'), this.live),
      this.bar.element,
      h('div', { class: 'toolbar' }, labelled('Upload files', picker, 'field inline'), mkdir),
      this.dropZone,
      this.uploads.element,
      this.message,
      h('div', { class: 'files-body' }, this.list.element, this.viewer.element),
    );
    acceptDrops(this.element, (dropped) => void this.upload(dropped));
  }

  /** Follows the directory shown while the view is shown; the subscription ends it. */
  start(): Subscription {
    return this.shown$.pipe(switchMap((at) => (at === undefined ? EMPTY : this.follow(at.files, at.dir)))).subscribe();
  }

  /** The environment whose files are shown (`files` undefined: none). */
  setEnvironment(environmentId: string | undefined, files: HostFiles | undefined): void {
    if (environmentId === this.environmentId) return;
    this.environmentId = environmentId;
    this.files = files;
    this.go(environmentId === undefined ? '/' : (this.dirs.get(environmentId) ?? '/'));
  }

  /** Shown (the Files tab selected) or hidden: the change stream is followed only while shown. */
  setVisible(visible: boolean): void {
    if (visible === this.visible) return;
    this.visible = visible;
    this.follow$();
  }

  /** Lists `dir` and follows its changes. */
  go(dir: string): void {
    this.dir = normalized(dir);
    if (this.environmentId !== undefined) this.dirs.set(this.environmentId, this.dir);
    this.bar.show(this.dir);
    this.closeViewer();
    setText(this.message, '');
    this.follow$();
  }

  private follow$(): void {
    const files = this.files;
    this.list.clear(files === undefined ? 'No environment is selected.' : 'Loading…');
    this.shown$.next(this.visible && files !== undefined ? { files, dir: this.dir } : undefined);
    if (!this.visible || files === undefined) this.setLive('idle');
  }

  /** Follows `dir` of `files`: the table, the live badge and the messages. */
  private follow(files: HostFiles, dir: string): Observable<never> {
    return followDirectory(files, dir, {
      listed: (listing) => {
        this.list.replace(listing.entries);
        this.list.listed();
        setText(this.message, listing.truncated ? 'The listing was cut short by the host (too many entries).' : '');
      },
      changed: (change) => this.apply(files, dir, change),
      state: (state, error) => {
        this.setLive(state);
        if (state === 'retrying') setText(this.message, `Live updates interrupted (${reasonOf(error)}); trying again.`);
        if (state === 'failed') {
          this.list.clear('');
          setText(this.message, `Cannot list ${dir}: ${reasonOf(error)}`);
        }
      },
    });
  }

  /** One change of the directory shown. */
  private apply(files: HostFiles, dir: string, change: FileChange): void {
    const { entry } = change;
    if (normalized(parentOf(entry.path) ?? '') !== dir) return;
    const viewed = this.viewer.entry?.path === entry.path;
    if (change.kind === 'removed') {
      this.list.delete(entry.name);
      if (viewed) this.viewer.removed();
      return;
    }
    this.list.put(entry);
    if (viewed && (change.kind === 'changed' || this.viewer.element.dataset['state'] === 'removed')) this.viewer.show(files, entry);
  }

  private open(entry: FileEntry): void {
    if (entry.type === 'directory') return this.go(entry.path);
    if (this.files === undefined) return;
    this.list.setSelected(entry.name);
    this.viewer.show(this.files, entry);
  }

  private closeViewer(): void {
    this.viewer.hide();
    this.list.setSelected(undefined);
  }

  /** Downloads by a single-use ticket url: a link with `download`, so a refused ticket never leaves the page. */
  private download(entry: FileEntry): void {
    const files = this.files;
    if (files === undefined) return;
    files.downloadUrl(entry.path).then(
      (url) => {
        const link = h('a', { href: url, download: entry.name, hidden: true });
        this.element.append(link);
        link.click();
        link.remove();
      },
      (error: unknown) => setText(this.message, `Download of ${entry.name} failed: ${reasonOf(error)}`),
    );
  }

  private async remove(entry: FileEntry): Promise<void> {
    const files = this.files;
    if (files === undefined) return;
    const directory = entry.type === 'directory';
    const yes = await confirmDialog(this.element, {
      question: `Delete ${entry.name}${directory ? '/' : ''}?`,
      detail: `Removes ${directory ? `the directory ${entry.path} and everything in it` : entry.path} on the executor. This cannot be undone.`,
      action: 'Delete',
    });
    if (!yes) return;
    try {
      await files.remove(entry.path, { recursive: directory });
      if (normalized(parentOf(entry.path) ?? '') === this.dir) this.list.delete(entry.name);
      if (this.viewer.entry?.path === entry.path) this.closeViewer();
    } catch (error: unknown) {
      setText(this.message, `Delete of ${entry.name} failed: ${reasonOf(error)}`);
    }
  }

  private async mkdir(name: string): Promise<boolean> {
    const files = this.files;
    if (files === undefined) return false;
    if (name === '' || name === '.' || name === '..' || /[\\/]/.test(name)) {
      setText(this.message, 'A folder name is one path segment: not empty, no slash, not . or ..');
      return false;
    }
    try {
      const entry = await files.mkdir(childOf(this.dir, name));
      if (normalized(parentOf(entry.path) ?? '') === this.dir) this.list.put(entry);
      return true;
    } catch (error: unknown) {
      setText(this.message, `Create folder ${name} failed: ${reasonOf(error)}`);
      return false;
    }
  }

  /** Uploads `picked` into the directory shown, one after another (a replace asks first). */
  private async upload(picked: readonly File[]): Promise<void> {
    const files = this.files;
    const dir = this.dir;
    if (files === undefined) return;
    for (const file of picked) {
      const existing = this.list.entry(file.name);
      if (existing !== undefined) {
        const replace = await confirmDialog(this.element, { question: `Replace ${file.name}?`, detail: `${existing.path} exists; the upload replaces it.`, action: 'Replace' });
        if (!replace) continue;
      }
      const aborter = new AbortController();
      const item = this.uploads.add(file.name, file.size, () => aborter.abort());
      try {
        const entry = await files.write(childOf(dir, file.name), file, { onProgress: (bytes) => item.progress(bytes), signal: aborter.signal });
        item.finish('done');
        if (this.dir === dir && this.files === files) this.list.put(entry);
      } catch (error: unknown) {
        if (aborter.signal.aborted) item.finish('cancelled');
        else item.finish('failed', reasonOf(error));
      }
    }
  }

  private setLive(state: FollowState | 'idle'): void {
    this.live.dataset['state'] = state;
    setText(this.live, state);
  }
}
