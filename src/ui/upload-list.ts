/**
 * Uploads in progress and just finished ("Uploads"): a list item per file (`data-upload-name`,
 * `data-state` uploading | done | failed | cancelled) with a `<progress>` bar named after the file, the
 * bytes sent of its size, and Cancel while it runs. A finished upload's item stays until the next upload
 * starts or "Clear" is pressed, so its outcome can be read.
 */
import { h, setText } from './dom';
import { sizeText } from './file-paths';

/** One upload's item. */
export interface UploadItem {
  /** Bytes sent so far. */
  progress(bytes: number): void;
  /** Finished: `done`, `failed` with why, or `cancelled`. */
  finish(state: 'done' | 'failed' | 'cancelled', message?: string): void;
}

/** The list. */
export class UploadList {
  readonly element: HTMLElement;
  private readonly list = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  private readonly clear = h('button', { type: 'button', hidden: true }, 'Clear finished uploads');

  constructor() {
    this.element = h('div', { class: 'upload-list' }, this.list, this.clear);
    this.clear.addEventListener('click', () => this.clearFinished());
  }

  /** Adds an upload of `name` (`size` bytes); `cancel` aborts it. */
  add(name: string, size: number, cancel: () => void): UploadItem {
    this.clearFinished();
    const bar = h('progress', { max: String(Math.max(size, 1)), value: '0', 'aria-label': `Uploading ${name}` });
    const text = h('span', { class: 'muted count' }, `0 B of ${sizeText(size)}`);
    const stop = h('button', { type: 'button', 'aria-label': `Cancel upload of ${name}` }, 'Cancel');
    const li = h('li', { 'data-upload-name': name, 'data-state': 'uploading' }, h('span', { class: 'upload-name' }, name), bar, text, stop);
    stop.addEventListener('click', cancel);
    this.list.append(li);
    return {
      progress: (bytes) => {
        bar.value = bytes;
        setText(text, `${sizeText(bytes)} of ${sizeText(size)}`);
      },
      finish: (state, message) => {
        li.dataset['state'] = state;
        stop.remove();
        if (state === 'done') bar.value = Math.max(size, 1);
        setText(text, state === 'done' ? `${sizeText(size)} uploaded` : state === 'cancelled' ? 'cancelled' : `failed: ${message ?? ''}`);
        if (state === 'failed') text.classList.add('error');
        this.clear.hidden = false;
      },
    };
  }

  private clearFinished(): void {
    for (const li of [...this.list.querySelectorAll<HTMLElement>('li')]) if (li.dataset['state'] !== 'uploading') li.remove();
    this.clear.hidden = true;
  }
}
