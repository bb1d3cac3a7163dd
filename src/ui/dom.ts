/** A small element builder: the page is plain DOM, no framework. */

/** Attributes of {@link h}: strings set as attributes, booleans as present/absent, functions as listeners (`on…`). */
export type Attributes = Readonly<Record<string, string | boolean | undefined | ((event: Event) => void)>>;

/** A child of {@link h}: an element, a text, or nothing. */
export type Child = Node | string | undefined | null | false;

/** Builds an element: `h('button', { type: 'button', onclick: … }, 'Start')`. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, value);
  }
  for (const child of children) if (child !== undefined && child !== null && child !== false) element.append(child);
  return element;
}

/** A unique id for label/for pairs. */
let counter = 0;
export const uid = (prefix: string): string => `${prefix}-${(counter += 1)}`;

/** A labelled input (`<label>` + control), for forms. */
export function labelled<E extends HTMLElement>(text: string, control: E, className = 'field'): HTMLElement {
  const id = control.id === '' ? uid('f') : control.id;
  control.id = id;
  return h('div', { class: className }, h('label', { for: id }, text), control);
}

/** A checkbox with its label after it. */
export function checkbox(text: string, checked: boolean, onchange?: (checked: boolean) => void): { readonly element: HTMLElement; readonly input: HTMLInputElement } {
  const input = h('input', { type: 'checkbox', id: uid('c'), checked });
  if (onchange !== undefined) input.addEventListener('change', () => onchange(input.checked));
  return { element: h('span', { class: 'check' }, input, h('label', { for: input.id }, text)), input };
}

/** Replaces an element's text only when it changed (keeps screen readers and selections calm). */
export function setText(element: Element, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}
