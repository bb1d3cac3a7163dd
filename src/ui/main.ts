/**
 * The dashboard's entry (bundled by scripts/build-ui.mjs into dist/ui, served by the host at `/`): takes
 * the token from the url's fragment, asks the host who it is, and shows the page, or the login box when
 * there is no token or the host answers 401 (a 403 is a message, never the login box).
 */
import { HostApiError, HostClient } from '../client';
import { App } from './app';
import type { Refusal } from './app';
import { h } from './dom';
import { showLogin } from './login';
import { adoptFragmentToken, forgetToken, storedToken, storeToken } from './token';

const root = document.getElementById('app') ?? document.body;

function signIn(token: string): void {
  storeToken(token);
  void boot();
}

function refused(refusal: Refusal): void {
  if (refusal.kind === 'unauthorized') {
    forgetToken();
    showLogin(root, 'The host refused the token (401). Enter a valid operator token.', signIn);
  } else {
    root.replaceChildren(h('main', { class: 'login-page' }, h('p', { class: 'error', role: 'alert' }, `The host refused: ${refusal.message}`)));
  }
}

async function boot(): Promise<void> {
  const token = storedToken();
  if (token === undefined) return showLogin(root, undefined, signIn);
  const client = new HostClient({ url: location.origin, token: () => storedToken() ?? '' });
  try {
    const info = await client.host();
    new App(client, info, refused).mount(root);
  } catch (error: unknown) {
    void client.close();
    if (error instanceof HostApiError && error.status === 401) refused({ kind: 'unauthorized' });
    else refused({ kind: 'forbidden', message: error instanceof Error ? error.message : String(error) });
  }
}

adoptFragmentToken();
void boot();
// The printed url opened in a tab that shows the page already only changes the fragment: no reload.
window.addEventListener('hashchange', () => {
  if (!/(?:^|&)token=/.test(location.hash.slice(1))) return;
  adoptFragmentToken();
  location.reload();
});
