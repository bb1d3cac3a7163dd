/** The terminal's colours for the light and the dark scheme (the page's own follow `prefers-color-scheme` in CSS). */
import type { ITheme } from '@xterm/xterm';
import type { ISearchOptions } from '@xterm/addon-search';

const LIGHT: ITheme = {
  background: '#ffffff',
  foreground: '#1f2328',
  cursor: '#1f2328',
  selectionBackground: '#b6d7ff',
  black: '#24292f',
  red: '#b3261e',
  green: '#116329',
  yellow: '#7d4e00',
  blue: '#0550ae',
  magenta: '#8250df',
  cyan: '#1b7c83',
  white: '#6e7781',
  brightBlack: '#57606a',
};
const DARK: ITheme = {
  background: '#0d1117',
  foreground: '#e6edf3',
  cursor: '#e6edf3',
  selectionBackground: '#264f78',
  black: '#484f58',
  red: '#ff7b72',
  green: '#3fb950',
  yellow: '#d29922',
  blue: '#58a6ff',
  magenta: '#bc8cff',
  cyan: '#39c5cf',
  white: '#b1bac4',
  brightBlack: '#9198a1',
};

const DARK_QUERY = '(prefers-color-scheme: dark)';

/** The theme for the scheme the browser prefers now. */
export const currentTheme = (): ITheme => (matchMedia(DARK_QUERY).matches ? DARK : LIGHT);

/** Calls `apply` with the new theme whenever the preferred scheme changes. */
export function onSchemeChange(apply: (theme: ITheme) => void): void {
  matchMedia(DARK_QUERY).addEventListener('change', () => apply(currentTheme()));
}

/** Search decorations (the addon counts matches only with them; colours must be #RRGGBB). */
export const SEARCH_OPTIONS: ISearchOptions = {
  caseSensitive: false,
  decorations: {
    matchBackground: '#ffd33d',
    matchBorder: '#bf8700',
    matchOverviewRuler: '#bf8700',
    activeMatchBackground: '#fb8f44',
    activeMatchBorder: '#bc4c00',
    activeMatchColorOverviewRuler: '#bc4c00',
  },
};
