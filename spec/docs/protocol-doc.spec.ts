/**
 * Keeps docs/protocol.md honest: it stays short; every spec it names exists and holds the test it names;
 * nothing in src/, spec/, bench/, the README, the changelog or docs/ cites the team's outside notes any more; and every
 * `docs/protocol.md#<slug>` pointer (and every recorded example's section) is a heading of the document.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { PROTOCOL_EXAMPLES } from '../wire/fixtures/protocol-examples';
import { anchorsOf, slugOf } from '../support/markdown-anchors';

const ROOT = join(__dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'protocol.md'), 'utf8');
const THIS_SPEC = 'spec/docs/protocol-doc.spec.ts';
const MAX_LINES = 600;

/** A citation: `spec/<path>.spec.ts › "<title, or a unique part of it>"` (it may wrap across lines). */
const CITATION = /(spec\/[\w./-]+\.spec\.ts)\s+›\s+"([^"]+)"/g;
/** A pointer into the document from code: `docs/protocol.md#<slug>`. */
const POINTER = /docs\/protocol\.md#([\w-]+)/g;
/** A test title: the string literal opening `it(` or `test(`, or the second call of `it.each(…)(`. */
const TITLE = /(?:\b(?:it|test)(?:\.(?:only|skip|concurrent|failing))?|\))\s*\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;

/** A path relative to the repository, with forward slashes. */
const repoPath = (absolute: string): string => relative(ROOT, absolute).split(sep).join('/');

/** Every file under `dir` (recursively), skipping installed and built trees. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    if (entry === 'node_modules' || entry === 'dist') return [];
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files whose comments may cite the protocol: src/, spec/, bench/, the README, the changelog and the pages of docs/. */
const citingFiles = (): string[] => [
  ...['src', 'spec', 'bench'].flatMap((dir) => filesUnder(join(ROOT, dir))),
  join(ROOT, 'README.md'),
  join(ROOT, 'CHANGELOG.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => join(ROOT, 'docs', file)),
];

/** The test titles a spec file declares, as written (escapes undone); `describe` titles are not tests. */
function titlesIn(source: string): string[] {
  return [...source.matchAll(TITLE)].map((match) => (match[2] ?? '').replace(/\\(.)/g, '$1'));
}

/** What is wrong with one citation, or `undefined` when the file holds exactly one test with that title. */
function citationProblem(path: string, cited: string): string | undefined {
  let source: string;
  try {
    source = readFileSync(join(ROOT, path), 'utf8');
  } catch {
    return `${path}: no such spec file`;
  }
  const matching = titlesIn(source).filter((title) => title.includes(cited));
  return matching.length === 1 ? undefined : `${path} › "${cited}": ${matching.length} matching test titles`;
}

const citations = [...DOC.matchAll(CITATION)].map((match) => ({ path: match[1] ?? '', title: (match[2] ?? '').replace(/\s+/g, ' ') }));
const anchors = new Set(anchorsOf(DOC));

describe('docs/protocol.md', () => {
  it(`is at most ${MAX_LINES} lines long`, () => {
    const lines = DOC.endsWith('\n') ? DOC.split('\n').length - 1 : DOC.split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_LINES);
  });

  it('names only specs that exist, each holding exactly one test with the named title', () => {
    expect(citations.length).toBeGreaterThan(100);
    expect(citations.flatMap(({ path, title }) => citationProblem(path, title) ?? [])).toEqual([]);
  });

  it('writes every "proved by" in the one citation form', () => {
    // Each "proved by" up to its first quoted title; the form shown in backticks under "How to read" is skipped.
    const claims = [...DOC.matchAll(/(?<!`\()proved (?:on our side )?by\s+([^"]*"[^"]*")/g)].map((match) => (match[1] ?? '').replace(/\s+/g, ' '));
    expect(claims.length).toBeGreaterThan(50);
    expect(claims.filter((claim) => !/^spec\/[\w./-]+\.spec\.ts › "[^"]+"$/.test(claim))).toEqual([]);
    // Every `<file> › "<title>"` names a spec file (the placeholder form with `<…>` aside).
    const named = [...DOC.matchAll(/(\S+)\s+›\s+"/g)].map((match) => match[1] ?? '').filter((file) => !file.includes('<'));
    expect(named.filter((file) => !/^spec\/[\w./-]+\.spec\.ts$/.test(file))).toEqual([]);
    expect(named).toHaveLength(citations.length);
  });

  it('links only to its own headings', () => {
    const links = [...DOC.matchAll(/\]\(#([\w-]+)\)/g)].map((match) => match[1] ?? '');
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((link) => !anchors.has(link))).toEqual([]);
  });
});

describe('citations of the protocol in the code', () => {
  it('no file in src/, spec/ or bench/, nor the README, the changelog or a page of docs/, cites the outside notes', () => {
    // The notes' file name, spelled in pieces so that grepping the repository for it finds nothing at all.
    const outsideNotes = ['PROTOCOL', 'md'].join('.');
    const citing = citingFiles().filter((file) => repoPath(file) !== THIS_SPEC && readFileSync(file, 'utf8').includes(outsideNotes));
    expect(citing.map(repoPath)).toEqual([]);
  });

  it('every pointer into docs/protocol.md names a heading of the document', () => {
    const pointers = citingFiles().flatMap((file) => [...readFileSync(file, 'utf8').matchAll(POINTER)].map((match) => ({ file: repoPath(file), slug: match[1] ?? '' })));
    expect(pointers.length).toBeGreaterThan(40);
    expect(pointers.filter(({ slug }) => !anchors.has(slug))).toEqual([]);
  });

  it('names every recorded example after a section of the document', () => {
    const sections = PROTOCOL_EXAMPLES.map((example) => example.name.split(':')[0] ?? '');
    expect(sections.filter((section) => !anchors.has(section))).toEqual([]);
  });

  it('computes anchors the way GitHub does', () => {
    expect(['Listen mode (WebSocket)', 'Environment, config and capabilities', '`process/start` & friends', 'Unattributed errors'].map(slugOf)).toEqual([
      'listen-mode-websocket',
      'environment-config-and-capabilities',
      'processstart--friends',
      'unattributed-errors',
    ]);
    expect(anchorsOf('# A\n## A\n```\n# not a heading\n```\n### A')).toEqual(['a', 'a-1', 'a-2']);
  });
});
