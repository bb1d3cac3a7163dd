/**
 * The content's tabs (`role="tablist"`, "Views"): "Processes" (the processes table and the selected
 * process) and "Files" (operate tokens only). Arrow keys move between the tabs, as the ARIA tabs
 * pattern has it; a hidden panel stays in the document (the terminal keeps its state).
 */
import { h, uid } from './dom';

/** One tab and its panel. */
export interface Tab {
  readonly label: string;
  readonly panel: HTMLElement;
}

/** The tab list; `selected` hears each switch (the tab's label). */
export function viewTabs(tabs: readonly Tab[], selected: (label: string) => void): HTMLElement {
  const buttons = tabs.map((tab, i) => {
    const id = uid('tab');
    tab.panel.id = tab.panel.id === '' ? uid('tabpanel') : tab.panel.id;
    tab.panel.setAttribute('role', 'tabpanel');
    tab.panel.setAttribute('aria-labelledby', id);
    return h('button', { type: 'button', role: 'tab', id, 'aria-controls': tab.panel.id, 'aria-selected': String(i === 0), tabindex: i === 0 ? '0' : '-1' }, tab.label);
  });
  const select = (index: number): void => {
    tabs.forEach((tab, i) => {
      const button = buttons[i];
      if (button === undefined) return;
      button.setAttribute('aria-selected', String(i === index));
      button.tabIndex = i === index ? 0 : -1;
      tab.panel.hidden = i !== index;
    });
    const tab = tabs[index];
    if (tab !== undefined) selected(tab.label);
  };
  buttons.forEach((button, i) => {
    button.addEventListener('click', () => select(i));
    button.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      if (step === 0) return;
      const next = (i + step + buttons.length) % buttons.length;
      select(next);
      buttons[next]?.focus();
    });
  });
  tabs.forEach((tab, i) => (tab.panel.hidden = i !== 0));
  return h('div', { role: 'tablist', 'aria-label': 'Views', class: 'tabs' }, ...buttons);
}
