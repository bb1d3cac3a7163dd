// @ts-check
/**
 * A TypeDoc plugin for the markdown pages of the site (README.md and typedoc.json's projectDocuments), so
 * that a link written for GitHub works unchanged in the site:
 *
 * - Heading anchors are GitHub's. TypeDoc's own slug leaves out a heading's inline code and turns a
 *   run of dashes into one: `## 0.1.0: \`exec-rx/host\`, embedded` is `#010-embedded` in the site but
 *   `#010-exec-rxhost-embedded` on GitHub, `## Tokens, roles & CORS` is `#tokens-roles-cors` there and
 *   `#tokens-roles--cors` on GitHub; a link right on GitHub would be a warning (a failed build) here.
 *   Inline code in a heading counts as its text, and the slug keeps letters, marks, numbers, `_`, `-`
 *   and spaces (as `-`), as github-slugger does; repeats are still numbered `-1`, `-2`, ... The same
 *   slug names the API pages' member anchors (their names have no spaces or inline code).
 * - Documents are named by their file name. TypeDoc names each by its path from the documents' common
 *   directory, which is the repository once CONTRIBUTING.md or CHANGELOG.md is one of them: docs/cli.md
 *   would be "docs/cli", in the navigation and in its page's name; it is "cli".
 */
import { Application, Converter, Slugger } from 'typedoc';

/**
 * What this uses of markdown-it (TypeDoc's parser; no types installed for it).
 * @typedef {{ type: string, content: string, children: Token[] | null }} Token
 * @typedef {{ tokens: Token[], Token: new (type: string, tag: string, nesting: number) => Token }} State
 * @typedef {{ core: { ruler: { push(name: string, rule: (state: State) => void): void } } }} MarkdownIt
 */

/** GitHub's slug of a heading's text, before lower-casing (TypeDoc's Slugger lower-cases it). @param {string} value */
function serialize(value) {
  return value.trim().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-') || '_';
}

/**
 * Inline code in a heading, `code_inline`, becomes `<code>`, its text, `</code>`: the same HTML, and the
 * text is part of the heading's text content, which TypeDoc slugs (it reads only `text` tokens).
 * @param {MarkdownIt} md
 */
function headingCodeAsText(md) {
  md.core.ruler.push('exec-rx-heading-code', (state) => {
    for (let i = 0; i + 1 < state.tokens.length; i++) {
      const inline = state.tokens[i + 1];
      if (state.tokens[i]?.type !== 'heading_open' || inline?.type !== 'inline' || inline.children === null) continue;
      inline.children = inline.children.flatMap((token) => {
        if (token.type !== 'code_inline') return [token];
        const open = new state.Token('html_inline', '', 0);
        open.content = '<code>';
        const text = new state.Token('text', '', 0);
        text.content = token.content;
        const close = new state.Token('html_inline', '', 0);
        close.content = '</code>';
        return [open, text, close];
      });
    }
  });
}

/** @param {Application} app */
export function load(app) {
  // `serialize` is TypeDoc's (private) text-to-slug step of every Slugger.
  /** @type {{ serialize(value: string): string }} */ (/** @type {unknown} */ (Slugger.prototype)).serialize = serialize;
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    /** @type {(md: MarkdownIt) => void} */
    const configured = app.options.getValue('markdownItLoader');
    app.options.setValue('markdownItLoader', (/** @type {MarkdownIt} */ md) => {
      configured(md);
      headingCodeAsText(md);
    });
  });
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    document.name = document.name.slice(document.name.lastIndexOf('/') + 1);
  });
}
