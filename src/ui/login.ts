/** The login box: a form named "Sign in" with the "Operator token" password field. */
import { h, labelled } from './dom';

/** Shows the login box in `root` (replacing what is there); `signIn` gets the token entered. */
export function showLogin(root: HTMLElement, message: string | undefined, signIn: (token: string) => void): void {
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const form = h(
    'form',
    { class: 'login', 'aria-label': 'Sign in' },
    h('h1', {}, 'exec-rx host'),
    h('p', {}, 'Open the url the host printed at start (it ends in #token=…), or enter an operator token.'),
    message === undefined ? undefined : h('p', { class: 'error', role: 'alert' }, message),
    labelled('Operator token', input),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token !== '') signIn(token);
  });
  root.replaceChildren(h('main', { class: 'login-page' }, form));
  input.focus();
}
