/**
 * A confirmation in a modal `<dialog>` (`role="dialog"`, named by its question): the action's button and
 * Cancel; Escape cancels. Resolves true only for the action's button. Cancel has the focus first, so an
 * Enter pressed by habit does not delete anything.
 */
import { h, uid } from './dom';

/** What to ask. */
export interface Confirmation {
  /** The question, the dialog's name: "Delete notes.txt?". */
  readonly question: string;
  /** What happens, in a sentence under it. */
  readonly detail: string;
  /** The action's button: "Delete". */
  readonly action: string;
}

/** Asks, in a modal dialog appended to `parent`; removes it once answered. */
export function confirmDialog(parent: HTMLElement, confirmation: Confirmation): Promise<boolean> {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title');
    const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
    const act = h('button', { type: 'button', class: 'danger', value: 'confirm' }, confirmation.action);
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, confirmation.question),
      h('p', {}, confirmation.detail),
      h('div', { class: 'toolbar end' }, cancel, act),
    );
    let answered = false;
    const answer = (yes: boolean): void => {
      if (answered) return;
      answered = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(yes);
    };
    cancel.addEventListener('click', () => answer(false));
    act.addEventListener('click', () => answer(true));
    // Escape (the dialog's cancel) and any other close: no.
    dialog.addEventListener('close', () => answer(false));
    parent.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
