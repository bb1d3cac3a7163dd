#!/usr/bin/env node
// @ts-check
/**
 * `npm run check:links`: every relative link of the markdown pages and of the built site resolves.
 *
 *   node scripts/check-links.mjs      README.md, CHANGELOG.md, CONTRIBUTING.md, docs/ and dist/docs (the site's pages)
 *   node scripts/check-links.mjs --markdown <dir-or-file...> --html <dir...>
 *
 * Markdown (outside fenced code blocks, inline code and HTML comments): inline links and images
 * `[t](path#anchor)`, `[t](#anchor)`, reference definitions `[label]: path` and their uses `[t][label]`, and
 * raw `<a href>`: the file exists (relative to the linking file; a leading `/` is the repository root), and
 * in a markdown target the anchor is a heading's GitHub slug (lowercase, punctuation but `-` and `_`
 * dropped, spaces to `-`, repeats get `-1`, `-2`, ...) or an explicit `<a id>`/`<a name>`.
 * HTML (every .html file under each root): every relative `href`: the file exists under that root and its
 * `#anchor` is an `id` or `name` in the target page (or SVG: the site's icons are `icons.svg#id`).
 * External links (any scheme: http:, https:, mailto:, javascript:, ...) are not fetched.
 *
 * Prints each broken link as `file:line: link -> why` and exits 1; else one summary line and exits 0.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEME = /^[a-z][a-z0-9+.-]*:|^\/\//i;
const MARKDOWN = /\.(md|markdown)$/i;

/** @typedef {{ file: string, line: number, link: string, why: string }} Broken */

// ---------------------------------------------------------------- arguments

/** @param {string[]} argv @returns {{ markdown: string[], html: string[], root: string }} */
function parseArgs(argv) {
  if (argv.length === 0) {
    return {
      markdown: ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'docs'].map((p) => join(REPO, p)).filter((p) => existsSync(p)),
      html: [join(REPO, 'dist', 'docs')],
      root: REPO,
    };
  }
  /** @type {{ markdown: string[], html: string[], root: string }} */
  const args = { markdown: [], html: [], root: process.cwd() };
  /** @type {'markdown' | 'html' | 'root' | undefined} */
  let list;
  for (const arg of argv) {
    if (arg === '--markdown' || arg === '--html' || arg === '--root') list = /** @type {'markdown' | 'html' | 'root'} */ (arg.slice(2));
    else if (arg === '--help' || arg === '-h') usage(0);
    else if (list === undefined || arg.startsWith('--')) usage(2, `unexpected argument ${arg}`);
    else if (list === 'root') args.root = resolve(arg);
    else args[list].push(resolve(arg));
  }
  return args;
}

/** @param {number} status @param {string} [message] @returns {never} */
function usage(status, message) {
  if (message !== undefined) process.stderr.write(`check-links: ${message}\n`);
  process.stderr.write('usage: node scripts/check-links.mjs [--markdown <dir-or-file...>] [--html <dir...>] [--root <dir>]\n'
    + '  no arguments: README.md, CHANGELOG.md, CONTRIBUTING.md, docs/ and dist/docs of the repository\n'
    + '  --root: what a markdown link starting with / is relative to (default: the working directory)\n');
  process.exit(status);
}

// ---------------------------------------------------------------- files

/** Files under `path` (itself when a file) whose name matches `pattern`, sorted. @param {string} path @param {RegExp} pattern @returns {string[]} */
function filesUnder(path, pattern) {
  if (!statSync(path).isDirectory()) return [path];
  /** @type {string[]} */
  const out = [];
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const child = join(path, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(child, pattern));
    else if (pattern.test(entry.name)) out.push(child);
  }
  return out.sort();
}

/** @type {Map<string, string>} */
const textCache = new Map();
/** @param {string} file */
function read(file) {
  let text = textCache.get(file);
  if (text === undefined) {
    text = readFileSync(file, 'utf8');
    textCache.set(file, text);
  }
  return text;
}

/** @param {string} path @returns {'file' | 'dir' | undefined} */
function kind(path) {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/** Line numbers of offsets in a text. @param {string} text */
function lineIndex(text) {
  /** @type {number[]} */
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  /** @param {number} offset */
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The same text with every non-newline character of [start, end) a space: offsets and lines stay. @param {string} s */
const blank = (s) => s.replace(/[^\n]/g, ' ');

/** @param {string} s */
function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------- markdown

/**
 * The markdown with what is not prose blanked out: fenced code blocks, HTML comments, inline code spans.
 * Offsets are kept, so a match's line is its line in the file.
 * @param {string} text
 */
function prose(text) {
  return codeSpans(outsideCode(text));
}

/** The markdown with fenced code blocks and HTML comments blanked out. @param {string} text */
function outsideCode(text) {
  const lines = text.split('\n');
  /** @type {{ char: string, length: number } | undefined} */
  let fence;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === undefined) {
      if (open !== null && open[1] !== undefined && !(open[1][0] === '`' && line.slice(open[0].length).includes('`'))) {
        fence = { char: open[1][0] ?? '`', length: open[1].length };
        lines[i] = blank(line);
      }
    } else {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close !== null && close[1] !== undefined && close[1][0] === fence.char && close[1].length >= fence.length) fence = undefined;
      lines[i] = blank(line);
    }
  }
  return lines.join('\n').replace(/<!--[\s\S]*?(-->|$)/g, blank);
}

/** Inline code blanked: a run of n backticks up to the next run of exactly n (within a paragraph). @param {string} text */
function codeSpans(text) {
  let out = '';
  let from = 0;
  const run = /`+/g;
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    const open = m[0];
    const close = new RegExp(`(?<!\`)${open}(?!\`)`, 'g');
    close.lastIndex = m.index + open.length;
    const end = close.exec(text);
    if (end === null || /\n[ \t]*\n/.test(text.slice(m.index, end.index))) continue;
    out += text.slice(from, m.index) + blank(text.slice(m.index, end.index + open.length));
    from = end.index + open.length;
    run.lastIndex = from;
  }
  return out + text.slice(from);
}

/**
 * A heading's text as GitHub renders it (links to their text, code and emphasis marks dropped, tags
 * dropped, entities decoded), then GitHub's slug of it (github-slugger).
 * @param {string} heading
 */
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/!?\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`+/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}_])([*_])(?=\S)(.+?)(?<=\S)\2(?![\p{L}\p{N}_])/gu, '$1$3')
    .replace(/\*/g, '')
    .replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' })[/** @type {'amp'} */ (e)]);
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** @type {Map<string, Set<string>>} */
const markdownAnchors = new Map();
/** The anchors of a markdown file: its headings' slugs (repeats numbered) and explicit `<a id|name>`. @param {string} file */
function anchorsOfMarkdown(file) {
  let anchors = markdownAnchors.get(file);
  if (anchors !== undefined) return anchors;
  anchors = new Set();
  const text = outsideCode(read(file));
  const lines = text.split('\n');
  /** @type {Map<string, number>} */
  const seen = new Map();
  /** @param {string} heading */
  const add = (heading) => {
    const base = slug(heading);
    let id = base;
    let n = seen.get(base) ?? 0;
    while (anchors?.has(id) && n < 10000) id = `${base}-${++n}`;
    seen.set(base, n);
    anchors?.add(id);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx !== null) {
      add(atx[1] ?? '');
      continue;
    }
    // A setext heading: a paragraph (its lines up to a blank line or heading) underlined with = or -.
    if (line.trim() !== '' && /^ {0,3}(=+|-+)[ \t]*$/.test(lines[i + 1] ?? '')) {
      let first = i;
      while (first > 0 && (lines[first - 1] ?? '').trim() !== '' && !/^ {0,3}#{1,6}(\s|$)/.test(lines[first - 1] ?? '')) first--;
      if (/^ {0,3}([-*+]\s|\d+[.)]\s|>|\|)/.test(lines[first] ?? '')) continue;
      add(lines.slice(first, i + 1).map((l) => l.trim()).join(' '));
      i++;
    }
  }
  for (const m of codeSpans(text).matchAll(/<[a-z][a-z0-9]*\s[^>]*?\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) anchors.add(m[1] ?? m[2] ?? '');
  markdownAnchors.set(file, anchors);
  return anchors;
}

/** @typedef {{ offset: number, link: string }} Found */

/** The links of a markdown file, with their offsets. @param {string} file @param {(broken: Broken) => void} report @param {(offset: number) => number} lineOf */
function linksOfMarkdown(file, report, lineOf) {
  const text = prose(read(file));
  /** @type {Found[]} */
  const found = [];
  /** @type {Map<string, string>} */
  const definitions = new Map();
  const label = (/** @type {string} */ s) => s.trim().replace(/\s+/g, ' ').toLowerCase();
  for (const m of text.matchAll(/^ {0,3}\[((?:[^\]\\]|\\.)+)\]:[ \t]*(?:\n[ \t]*)?(<[^>\n]*>|\S+)/gm)) {
    const dest = (m[2] ?? '').replace(/^<(.*)>$/, '$1');
    if (!definitions.has(label(m[1] ?? ''))) definitions.set(label(m[1] ?? ''), dest);
    found.push({ offset: (m.index ?? 0) + m[0].length - (m[2] ?? '').length, link: dest });
  }
  const inline = /\]\(\s*(<[^>\n]*>|(?:[^()\s]|\((?:[^()\s])*\))*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
  for (const m of text.matchAll(inline)) found.push({ offset: (m.index ?? 0) + 2, link: (m[1] ?? '').replace(/^<(.*)>$/, '$1') });
  for (const m of text.matchAll(/<a\s[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) found.push({ offset: m.index ?? 0, link: m[1] ?? m[2] ?? '' });
  // `[text][label]` and `[label][]`: the label must be defined (GitHub prints them as text otherwise).
  for (const m of text.matchAll(/\[((?:[^\]\\\n]|\\.)*)\]\[((?:[^\]\\\n]|\\.)*)\](?!\(|:)/g)) {
    const name = label(m[2] === '' ? m[1] ?? '' : m[2] ?? '');
    if (!definitions.has(name)) report({ file, line: lineOf(m.index ?? 0), link: m[0], why: `no definition of the reference [${name}]` });
  }
  return found;
}

/** @param {string} file @param {string} root @param {(broken: Broken) => void} report @returns {number} links checked */
function checkMarkdown(file, root, report) {
  const lineOf = lineIndex(read(file));
  const links = linksOfMarkdown(file, report, lineOf);
  let checked = 0;
  for (const { offset, link } of links) {
    if (link === '' || SCHEME.test(link)) continue;
    checked++;
    const hash = link.indexOf('#');
    const pathPart = decode((hash === -1 ? link : link.slice(0, hash)).replace(/\?.*$/, ''));
    const anchor = hash === -1 ? undefined : decode(link.slice(hash + 1));
    const target = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(file), pathPart);
    const at = { file, line: lineOf(offset), link };
    const found = kind(target);
    if (found === undefined) {
      report({ ...at, why: `no file ${shown(target)}` });
      continue;
    }
    if (anchor === undefined || anchor === '' || found === 'dir' || !MARKDOWN.test(target)) continue;
    if (!anchorsOfMarkdown(target).has(anchor)) report({ ...at, why: `no heading or anchor #${anchor} in ${shown(target)}` });
  }
  return checked;
}

// ---------------------------------------------------------------- html

/** The HTML with script and style contents and comments blanked out. @param {string} html */
const markup = (html) => html
  .replace(/<!--[\s\S]*?-->/g, blank)
  .replace(/(<(script|style)\b[^>]*>)([\s\S]*?)(<\/\2\s*>)/gi, (_, open, _tag, body, close) => open + blank(body) + close);

/** @param {string} s */
const entities = (s) => s.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos));/gi, (m, dec, hex, named) => {
  if (dec !== undefined) return String.fromCodePoint(Number(dec));
  if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
  return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[/** @type {'amp'} */ (String(named).toLowerCase())] ?? m;
});

const ATTRIBUTE = (/** @type {string} */ names) => new RegExp(`\\s(?:${names})\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'gi');

/** @type {Map<string, Set<string>>} */
const htmlAnchors = new Map();
/** @param {string} file */
function anchorsOfHtml(file) {
  let anchors = htmlAnchors.get(file);
  if (anchors === undefined) {
    anchors = new Set();
    for (const tag of markup(read(file)).matchAll(/<[a-z][a-z0-9-]*\s[^<>]*>/gi)) {
      for (const m of tag[0].matchAll(ATTRIBUTE('id|name'))) anchors.add(entities(m[1] ?? m[2] ?? m[3] ?? ''));
    }
    htmlAnchors.set(file, anchors);
  }
  return anchors;
}

/** @param {string} file @param {string} root @param {(broken: Broken) => void} report @returns {number} links checked */
function checkHtml(file, root, report) {
  const text = markup(read(file));
  const lineOf = lineIndex(text);
  let checked = 0;
  for (const tag of text.matchAll(/<[a-z][a-z0-9-]*\s[^<>]*>/gi)) {
    for (const m of tag[0].matchAll(ATTRIBUTE('href'))) {
      const link = entities((m[1] ?? m[2] ?? m[3] ?? '').trim());
      if (SCHEME.test(link)) continue;
      checked++;
      const at = { file, line: lineOf((tag.index ?? 0) + (m.index ?? 0)), link };
      const hash = link.indexOf('#');
      const pathPart = decode((hash === -1 ? link : link.slice(0, hash)).replace(/\?.*$/, ''));
      const anchor = hash === -1 ? undefined : decode(link.slice(hash + 1));
      let target = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(file), pathPart);
      if (target !== root && !target.startsWith(root + sep)) {
        report({ ...at, why: `outside the site (${shown(target)})` });
        continue;
      }
      const found = kind(target);
      if (found === 'dir') target = join(target, 'index.html');
      if (found === undefined || kind(target) !== 'file') {
        report({ ...at, why: `no file ${shown(target)}` });
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!/\.(html?|svg)$/i.test(target)) report({ ...at, why: `#${anchor} into ${shown(target)}, which is not HTML (or SVG)` });
      else if (!anchorsOfHtml(target).has(anchor)) report({ ...at, why: `no id or name ${anchor} in ${shown(target)}` });
    }
  }
  return checked;
}

// ---------------------------------------------------------------- main

/** @param {string} path */
const shown = (path) => relative(process.cwd(), path) || '.';

function main() {
  const args = parseArgs(process.argv.slice(2));
  /** @type {Broken[]} */
  const broken = [];
  const report = (/** @type {Broken} */ b) => broken.push(b);
  let files = 0;
  let links = 0;
  for (const path of args.markdown) {
    if (kind(path) === undefined) usage(2, `no such file or directory: ${shown(path)}`);
    for (const file of filesUnder(path, MARKDOWN)) {
      files++;
      links += checkMarkdown(file, args.root, report);
    }
  }
  for (const root of args.html) {
    if (kind(root) !== 'dir') {
      process.stderr.write(`check-links: no site at ${shown(root)}: run \`npm run docs\` first\n`);
      process.exit(2);
    }
    for (const file of filesUnder(root, /\.html?$/i)) {
      files++;
      links += checkHtml(file, root, report);
    }
  }
  broken.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  for (const b of broken) process.stdout.write(`${shown(b.file)}:${b.line}: ${b.link} -> ${b.why}\n`);
  const summary = `check-links: ${files} files, ${links} relative links checked, ${broken.length} broken`;
  if (broken.length > 0) {
    process.stderr.write(`${summary}\n`);
    process.exit(1);
  }
  process.stdout.write(`${summary}\n`);
}

main();
