/**
 * scripts/check-links.mjs (`npm run check:links`, in `npm test` after `npm run docs`), run as `npm test`
 * runs it, on fixtures written here: it refuses a link to a missing file, a missing heading anchor in
 * another markdown file or in the same one, an undefined reference and a missing id in HTML, each
 * printed as `file:line: link -> why`, and exits 1; it accepts GitHub's heading slugs (repeats numbered,
 * punctuation and backticks dropped), explicit `<a id>`/`<a name>` anchors, reference links, and ignores
 * code and external links, and exits 0 with a summary line.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'check-links.mjs');

const FILES: Record<string, string> = {
  'docs/guide.md': [
    '# Guide',
    '',
    '## Flags',
    '',
    '<a name="named"></a>',
    'Options',
    '-------',
    '',
    '[back](../good.md#setup)',
  ].join('\n'),
  'good.md': [
    '# Title',
    '',
    '## Setup',
    '## Setup',
    '## `exec-rx/host`, embedded!',
    '## Tokens, roles & CORS',
    '## 1. Run _it_ (**twice**)',
    '<a id="custom"></a>',
    '',
    '[a](#setup) [b](#setup-1) [c](#exec-rxhost-embedded) [d](#tokens-roles--cors) [e](#1-run-it-twice)',
    '[f](#custom) [g](docs/guide.md#flags) [h](docs/guide.md#named) [i](./docs/guide.md#options "title")',
    '[j][ref], [k][], [shortcut] and ![an image](<docs/guide.md>)',
    '[l](https://example.com/missing.md) [m](mailto:someone@example.com) [n](docs/)',
    '',
    '```sh',
    '[in a fence](missing.md)',
    '```',
    'and `[in code](missing.md)`, ``[in ` code](missing.md)``',
    '',
    '[ref]: docs/guide.md#flags',
    '[k]: good.md',
  ].join('\n'),
  'bad.md': [
    '# Bad',
    '',
    'A [missing file](docs/missing.md) and',
    'a [missing anchor](docs/guide.md#nowhere), a [same-file one](#missing),',
    '[an undefined reference][nope] and [a broken definition][def].',
    '',
    '[def]: ./gone.md',
  ].join('\n'),
  'site/good/index.html': [
    '<!doctype html><html><body id="top">',
    '<a href="page.html#there">1</a> <a href=\'page.html#also-there\'>2</a> <a href="#top">3</a>',
    '<a href="sub/">4</a> <a href="https://example.com/nope.html#x">5</a> <a href="javascript:void 0">6</a>',
    '<svg><use href="icons.svg#icon-x"></use></svg> <a href="page.html?x=1&amp;y=2#there">7</a> <a href="#">8</a>',
    '<script>const s = \'<a href="missing.html">\';</script>',
    '</body></html>',
  ].join('\n'),
  'site/good/page.html': '<h2 id="there">There</h2>\n<a name="also-there"></a>',
  'site/good/sub/index.html': '<a href="../index.html#top">up</a>',
  'site/good/icons.svg': '<svg xmlns="http://www.w3.org/2000/svg"><g id="icon-x"></g></svg>',
  'site/bad/index.html': [
    '<!doctype html><html><body>',
    '<a href="page.html#there">fine</a>',
    '<a href="page.html#gone">1</a>',
    '<a href="missing.html">2</a>',
    '<p>text</p><a class="x" href="#absent">3</a>',
    '</body></html>',
  ].join('\n'),
  'site/bad/page.html': '<h2 id="there">There</h2>',
};

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'link-check-'));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `${text}\n`);
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the checker in the fixtures' directory. */
function check(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('scripts/check-links.mjs', () => {
  it('accepts slugs of repeated, punctuated and backticked headings, explicit anchors, references; skips code and external links', () => {
    const run = check('--markdown', 'good.md', 'docs');
    expect(run.stdout).toBe('check-links: 2 files, 14 relative links checked, 0 broken\n');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('refuses a missing file, a missing anchor in another file and in the same one, undefined and broken references', () => {
    const run = check('--markdown', 'bad.md', 'docs');
    expect(run.stdout.split('\n').filter((line) => line !== '')).toEqual([
      'bad.md:3: docs/missing.md -> no file docs/missing.md',
      'bad.md:4: docs/guide.md#nowhere -> no heading or anchor #nowhere in docs/guide.md',
      'bad.md:4: #missing -> no heading or anchor #missing in bad.md',
      'bad.md:5: [an undefined reference][nope] -> no definition of the reference [nope]',
      'bad.md:7: ./gone.md -> no file gone.md',
    ]);
    expect(run.stderr).toBe('check-links: 2 files, 5 relative links checked, 5 broken\n');
    expect(run.status).toBe(1);
  });

  it('accepts hrefs to existing pages, ids, names, directories and SVG symbols; skips scripts and other origins', () => {
    const run = check('--html', 'site/good');
    expect(run.stdout).toBe('check-links: 3 files, 8 relative links checked, 0 broken\n');
    expect(run.status).toBe(0);
  });

  it('refuses an href to a missing page or to an id its page does not have', () => {
    const run = check('--html', 'site/bad');
    expect(run.stdout.split('\n').filter((line) => line !== '')).toEqual([
      'site/bad/index.html:3: page.html#gone -> no id or name gone in site/bad/page.html',
      'site/bad/index.html:4: missing.html -> no file site/bad/missing.html',
      'site/bad/index.html:5: #absent -> no id or name absent in site/bad/index.html',
    ]);
    expect(run.status).toBe(1);
  });

  it('checks markdown and a site in one run, and says what it was given that does not exist', () => {
    expect(check('--markdown', 'bad.md', '--html', 'site/bad').stderr).toBe('check-links: 3 files, 8 relative links checked, 8 broken\n');
    const missing = check('--html', 'no-site');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('no site at no-site');
  });
});
