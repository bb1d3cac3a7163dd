/**
 * The text view of one file ("File view", `data-testid="file-text"`): files up to
 * {@link TEXT_VIEW_MAX_BYTES} that look like text (UTF-8, no NUL byte) are shown whole; a larger or binary
 * file says so and offers its download instead. Never more than the cap (plus one byte, to know) is read
 * into the page: the read is cancelled there. Loaded again when the file changes (the Files view calls
 * {@link FileTextView.show} again on a change of it).
 */
import { h, setText } from './dom';
import type { FileEntry, HostFiles } from '../client';
import { sizeText, textOf, TEXT_VIEW_MAX_BYTES } from './file-paths';

/** Reads at most `limit` bytes of `stream`, then cancels it. */
async function readUpTo(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } finally {
    if (length >= limit) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(Math.min(length, limit));
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/** The viewer pane. */
export class FileTextView {
  readonly element: HTMLElement;
  private readonly title = h('h3', { id: 'file-view-heading' });
  private readonly status = h('p', { class: 'muted', 'data-testid': 'file-status', 'aria-live': 'polite' });
  private readonly text = h('pre', { class: 'file-text', 'data-testid': 'file-text', tabindex: '0', 'aria-labelledby': 'file-view-heading' });
  private shown: FileEntry | undefined;
  private loading: AbortController | undefined;

  constructor(actions: { download(entry: FileEntry): void; close(): void }) {
    const download = h('button', { type: 'button', onclick: () => this.shown !== undefined && actions.download(this.shown) }, 'Download');
    const close = h('button', { type: 'button', onclick: () => actions.close() }, 'Close');
    this.element = h(
      'section',
      { class: 'file-view', 'aria-labelledby': 'file-view-heading', hidden: true },
      h('div', { class: 'toolbar' }, this.title, download, close),
      this.status,
      this.text,
    );
  }

  /** The file shown, if any. */
  get entry(): FileEntry | undefined {
    return this.shown;
  }

  /** Shows `entry` of `files` (read again when called again for the same file). */
  show(files: HostFiles, entry: FileEntry): void {
    this.loading?.abort();
    const loading = new AbortController();
    this.loading = loading;
    this.shown = entry;
    this.element.hidden = false;
    setText(this.title, entry.name);
    this.element.dataset['state'] = 'loading';
    if (entry.type !== 'file') return this.done(`Not a regular file (${entry.type}).`, '', 'unviewable');
    const tooLarge = `larger than the text view's ${sizeText(TEXT_VIEW_MAX_BYTES)}. Download it instead.`;
    if (entry.size > TEXT_VIEW_MAX_BYTES) return this.done(`${sizeText(entry.size)}: ${tooLarge}`, '', 'too-large');
    setText(this.status, `Loading ${sizeText(entry.size)}…`);
    readUpTo(files.read(entry.path, { signal: loading.signal }), TEXT_VIEW_MAX_BYTES + 1).then(
      (bytes) => {
        if (loading.signal.aborted) return;
        if (bytes.length > TEXT_VIEW_MAX_BYTES) return this.done(`Now ${tooLarge}`, '', 'too-large');
        const text = textOf(bytes);
        if (text === undefined) return this.done(`${sizeText(bytes.length)}, not text (not UTF-8, or a NUL byte). Download it instead.`, '', 'binary');
        this.done(`${sizeText(bytes.length)}`, text, 'shown');
      },
      (error: unknown) => {
        if (loading.signal.aborted) return;
        this.done(`Cannot read it: ${error instanceof Error ? error.message : String(error)}`, '', 'failed');
      },
    );
  }

  /** The shown file was removed: says so, keeps the last text. */
  removed(): void {
    this.loading?.abort();
    setText(this.status, 'This file was removed.');
    this.element.dataset['state'] = 'removed';
  }

  /** Shows nothing. */
  hide(): void {
    this.loading?.abort();
    this.loading = undefined;
    this.shown = undefined;
    this.element.hidden = true;
    setText(this.text, '');
  }

  private done(status: string, text: string, state: string): void {
    setText(this.status, status);
    setText(this.text, text);
    this.text.hidden = text === '' && state !== 'shown';
    this.element.dataset['state'] = state;
  }
}
