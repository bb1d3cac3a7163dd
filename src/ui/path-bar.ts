/**
 * The Files view's path bar: "Up" to the parent, the path's steps as buttons (`nav` "Path", the last one
 * marked `aria-current`), and a "Go to path" box for any absolute path (Enter or "Go").
 */
import { h, labelled } from './dom';
import { crumbsOf, isAbsolute, parentOf } from './file-paths';

/** The bar. */
export class PathBar {
  readonly element: HTMLElement;
  private readonly crumbs = h('ol', { class: 'crumbs' });
  private readonly up = h('button', { type: 'button', 'aria-label': 'Up to the parent directory', disabled: true }, '↑ Up');
  private readonly input = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', name: 'path' });
  private readonly message = h('span', { class: 'error', role: 'alert' });
  private path = '/';

  constructor(private readonly go: (path: string) => void) {
    this.up.addEventListener('click', () => {
      const parent = parentOf(this.path);
      if (parent !== undefined) go(parent);
    });
    const form = h(
      'form',
      { class: 'toolbar go', 'aria-label': 'Go to a path' },
      labelled('Go to path', this.input, 'field inline grow'),
      h('button', { type: 'submit' }, 'Go'),
      this.message,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const target = this.input.value.trim();
      if (!isAbsolute(target)) {
        this.message.textContent = 'enter an absolute path (/… or C:\\…)';
        return;
      }
      this.message.textContent = '';
      go(target);
    });
    this.element = h('div', { class: 'path-bar' }, h('div', { class: 'toolbar' }, this.up, h('nav', { 'aria-label': 'Path' }, this.crumbs)), form);
  }

  /** Shows `path` (the directory listed now). */
  show(path: string): void {
    this.path = path;
    this.up.disabled = parentOf(path) === undefined;
    if (document.activeElement !== this.input) this.input.value = path;
    const steps = crumbsOf(path);
    this.crumbs.replaceChildren(
      ...steps.map((step, i) => {
        const last = i === steps.length - 1;
        const button = h('button', { type: 'button', class: 'link', 'aria-current': last ? 'location' : undefined, title: step.path }, step.label);
        button.addEventListener('click', () => this.go(step.path));
        return h('li', {}, button);
      }),
    );
  }
}
