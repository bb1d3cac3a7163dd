/** The banner of the page's own link to the host: `role="status"`, `data-testid="host-link"`, `data-state`. */
import { h, setText } from './dom';

/** The host link banner. */
export class HostBanner {
  readonly element = h('div', { role: 'status', 'data-testid': 'host-link', 'data-state': 'connecting', class: 'banner' }, 'Connecting to host…');
  private hostInstance = '';

  /** The host instance the page talks to (shown once known). */
  setHost(hostInstance: string): void {
    this.hostInstance = hostInstance;
    if (this.element.dataset['state'] === 'open') this.open();
  }

  /** The connection is open. */
  open(): void {
    this.element.dataset['state'] = 'open';
    setText(this.element, `Connected to host${this.hostInstance === '' ? '' : ` ${this.hostInstance}`}`);
  }

  /** The connection dropped; the client reconnects by itself. */
  reconnecting(reason: string | undefined): void {
    this.element.dataset['state'] = 'reconnecting';
    setText(this.element, `Reconnecting to host${reason === undefined || reason === '' ? '' : `: ${reason}`}`);
  }
}
