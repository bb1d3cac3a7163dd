/**
 * "Preview a port" (operate tokens only): a port of the selected environment, opened through the host's
 * preview (issue 42). The page asks the host for a signed link (`HostHttp.previewLink`) and opens it in a
 * new tab with `noopener,noreferrer`: the preview runs on an origin of its own and gets no handle on this
 * page (`window.opener` is null in it). A host without `--allow-http` answers `HTTP_DISABLED`: the form
 * says so. Not a Ports panel: the port is typed.
 */
import type { PreviewLink } from '../client';
import { HostApiError } from '../client';
import { h, labelled } from './dom';

/** The largest TCP port. */
const MAX_PORT = 65535;

/** The port the field holds; throws an Error naming what is wrong. */
export function portOf(text: string): number {
  const port = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(port) || port < 1 || port > MAX_PORT) throw new Error(`enter a port from 1 to ${MAX_PORT}`);
  return port;
}

/** What the form says when the host refused a link. */
export function previewRefusal(error: unknown): string {
  if (error instanceof HostApiError && error.code === 'HTTP_DISABLED') return 'Previews are off on this host: start it with --allow-http (and --preview-port) to open them.';
  return `Preview failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** The form; `link` asks the host for the selected environment's link to a port (rejects when none is selected). */
export function previewForm(link: (port: number) => Promise<PreviewLink>): HTMLFormElement {
  const port = h('input', { type: 'number', name: 'port', min: '1', max: String(MAX_PORT), step: '1', inputmode: 'numeric', autocomplete: 'off' });
  const button = h('button', { type: 'submit' }, 'Open');
  const message = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { 'aria-label': 'Preview a port', class: 'panel preview', novalidate: true },
    h('h2', {}, 'Preview a port'),
    h('div', { class: 'row' }, labelled('Preview port', port, 'field inline'), button),
    message,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    message.textContent = '';
    let chosen: number;
    try {
      chosen = portOf(port.value);
    } catch (error: unknown) {
      message.textContent = error instanceof Error ? error.message : String(error);
      return;
    }
    button.disabled = true;
    link(chosen).then(
      (made) => {
        button.disabled = false;
        // noopener: the preview gets no handle on this page (and open returns null); noreferrer: no Referer.
        window.open(made.hostUrl ?? made.pathUrl, '_blank', 'noopener,noreferrer');
      },
      (error: unknown) => {
        button.disabled = false;
        message.textContent = previewRefusal(error);
      },
    );
  });
  return form;
}
