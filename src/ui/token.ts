/**
 * The operator token of this tab: taken from the url's fragment (`#token=…`, which never reaches a
 * server), kept in sessionStorage (`exec-rx-token`: this tab only), the fragment removed from the
 * address bar. The token goes only into the Authorization header, never into a url.
 */

/** The sessionStorage key of the token. */
export const TOKEN_KEY = 'exec-rx-token';

/** Moves a `#token=` fragment into sessionStorage and removes it from the address bar. */
export function adoptFragmentToken(): void {
  const match = /(?:^|&)token=([^&]+)/.exec(location.hash.slice(1));
  if (match === null) return;
  try {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1] ?? ''));
  } finally {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
  }
}

/** The tab's token, when it has one. */
export function storedToken(): string | undefined {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token === null || token === '' ? undefined : token;
}

/** Keeps `token` for this tab. */
export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Forgets the tab's token (the host refused it). */
export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}
