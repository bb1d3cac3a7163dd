/**
 * The environments list (`role="list"`, "Environments"): each item has `data-environment-id`, a button
 * named by the id that selects it, and a state badge (`data-testid="environment-state"`, `data-state`).
 */
import type { EnvironmentOverview } from '../client';
import { h, setText } from './dom';

/** The badge words of an environment's state (`starting` shows as connecting, `disconnected` as reconnecting). */
export function badgeOf(environment: EnvironmentOverview): string {
  switch (environment.state) {
    case 'starting':
    case 'connecting':
      return 'connecting';
    case 'disconnected':
      return 'reconnecting';
    case 'connected':
    case 'failed':
    case 'closed':
    case 'offline':
      return environment.state;
  }
}

interface Item {
  readonly li: HTMLLIElement;
  readonly button: HTMLButtonElement;
  readonly badge: HTMLElement;
  readonly details: HTMLElement;
}

/** The list, updated in place (focus stays where it is). */
export class EnvironmentsView {
  readonly element: HTMLElement;
  private readonly list = h('ul', { role: 'list', 'aria-label': 'Environments', class: 'environments' });
  private readonly items = new Map<string, Item>();
  private selected: string | undefined;

  constructor(private readonly select: (environmentId: string) => void) {
    this.element = h('section', { class: 'panel', 'aria-labelledby': 'environments-heading' }, h('h2', { id: 'environments-heading' }, 'Environments'), this.list);
  }

  /** Shows `environments` (a new overview). */
  update(environments: readonly EnvironmentOverview[]): void {
    const seen = new Set<string>();
    for (const environment of environments) {
      seen.add(environment.id);
      const item = this.items.get(environment.id) ?? this.add(environment.id);
      const state = badgeOf(environment);
      const reason = environment.error?.message;
      item.badge.dataset['state'] = state;
      setText(item.badge, reason === undefined ? state : `${state}: ${reason}`);
      setText(item.details, `generation ${environment.generation} · ${environment.processCount} process${environment.processCount === 1 ? '' : 'es'}${infoText(environment.info)}`);
    }
    for (const [id, item] of this.items) {
      if (!seen.has(id)) {
        item.li.remove();
        this.items.delete(id);
      }
    }
    this.markSelected();
  }

  /** Marks the selected environment. */
  setSelected(environmentId: string | undefined): void {
    this.selected = environmentId;
    this.markSelected();
  }

  private markSelected(): void {
    for (const [id, item] of this.items) item.button.setAttribute('aria-pressed', String(id === this.selected));
  }

  private add(id: string): Item {
    const button = h('button', { type: 'button', class: 'link', onclick: () => this.select(id) }, id);
    const badge = h('span', { class: 'badge', 'data-testid': 'environment-state' });
    const details = h('span', { class: 'details' });
    const li = h('li', { 'data-environment-id': id }, h('div', { class: 'row' }, button, badge), details);
    this.list.append(li);
    const item = { li, button, badge, details };
    this.items.set(id, item);
    return item;
  }
}

/** A short line of what the executor says about itself. */
function infoText(info: EnvironmentOverview['info']): string {
  if (info === null) return '';
  const parts = Object.entries(info)
    .filter(([, value]) => typeof value === 'string' || typeof value === 'number')
    .slice(0, 3)
    .map(([key, value]) => `${key} ${String(value)}`);
  return parts.length === 0 ? '' : ` · ${parts.join(' · ')}`;
}
