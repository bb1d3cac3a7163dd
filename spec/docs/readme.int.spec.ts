/**
 * The README and the pages of docs/ kept honest, against the BUILT package (`npm run build` first), packed
 * and installed offline into a fresh project as a user gets it (spec/support/package-install.ts):
 * - every fenced `ts` block of README.md and of every docs/*.md compiles with this repository's
 *   TypeScript: the blocks under one heading of one page are joined in order into one module, nothing
 *   added before, between or after them;
 * - every command of the synopsis (docs/cli.md, "Synopsis") answers `--help` (exit 0, the usage), and the
 *   synopsis and the usage name the same flags; the README's short synopsis names the same commands and
 *   only flags of the usage;
 * - the first guide runs verbatim: its executor command starts a real codex executor, its `main.ts` is
 *   compiled with its own `tsc` line and run with its own `node` line, and prints its `text` block;
 * - the links of README.md, CHANGELOG.md and every docs/*.md to files of the repository and to headings
 *   (their own or another page's, by GitHub's anchor rules) resolve.
 *
 * Bounded: npm and tsc have timeouts, the executor is stopped (its whole process group) in `afterAll`,
 * and nothing waits on a timer: the executor's url and exit are events.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { installTarballOffline, npmEnv, packTarball } from '../support/package-install';
import { anchorsOf } from '../support/markdown-anchors';

const root = join(__dirname, '..', '..');
const README = readFileSync(join(root, 'README.md'), 'utf8');
/** The pages whose `ts` blocks compile and whose links resolve: the README, the changelog and docs/*.md. */
const PAGES: readonly { readonly name: string; readonly text: string }[] = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`),
].map((name) => ({ name, text: readFileSync(join(root, name), 'utf8') }));
const CLI_PAGE = 'docs/cli.md';
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const TSC_TIMEOUT_MS = 120_000;
const RUN_TIMEOUT_MS = 60_000;

/** A fenced block of the README: its info string, its text, the heading it sits under and its first line. */
interface Block {
  readonly lang: string;
  readonly code: string;
  readonly heading: string;
  readonly line: number;
}

function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let heading = '';
  let open: { lang: string; line: number; lines: string[] } | undefined;
  markdown.split('\n').forEach((text, index) => {
    if (open !== undefined) {
      if (text.startsWith('```')) {
        blocks.push({ lang: open.lang, code: `${open.lines.join('\n')}\n`, heading, line: open.line });
        open = undefined;
      } else {
        open.lines.push(text);
      }
    } else if (text.startsWith('```')) {
      open = { lang: text.slice(3).trim(), line: index + 2, lines: [] };
    } else if (/^#{1,6} /.test(text)) {
      heading = text.replace(/^#+ /, '');
    }
  });
  return blocks;
}

const blocks = fencedBlocks(README);
/** The blocks of one page (a path from the repository's root). */
const blocksOfPage = (name: string): Block[] => fencedBlocks(PAGES.find((page) => page.name === name)?.text ?? '');
const under = (heading: string): Block[] => blocks.filter((block) => block.heading === heading);
/** The blocks under `heading`, of one language, in order; throws when there are none. */
const blocksOf = (heading: string, lang: string): Block[] => {
  const found = under(heading).filter((block) => block.lang === lang);
  if (found.length === 0) throw new Error(`the README has no ${lang || 'plain'} block under "${heading}"`);
  return found;
};

/** The first block's text under `heading` with `lang` (the guide's steps are found by their heading, not by position). */
const firstOf = (heading: string, lang: string): Block => {
  const [block] = blocksOf(heading, lang);
  if (block === undefined) throw new Error(`no ${lang} block under "${heading}"`);
  return block;
};

const GUIDE_1 = '1. Run a command on another machine from a Node service';

let work: string;
let project: string;

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'src', 'index.js'))) throw new Error('dist/src/index.js is missing: run `npm run build` first');
  work = realpathSync(mkdtempSync(join(tmpdir(), 'exec-rx-readme-')));
  const tarball = packTarball(root, work);
  project = join(work, 'my-service');
  installTarballOffline(tarball.path, project, join(root, 'package-lock.json'));
  // The guide's `npm install … typescript @types/node`, offline: this repository's copies.
  // (@types/ws, a dependency of the package, may have brought @types/node already.)
  mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
  if (!existsSync(join(project, 'node_modules', '@types', 'node'))) symlinkSync(join(root, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the README and docs/', () => {
  it('have fenced TypeScript blocks that compile against the built package, each heading\'s blocks joined in order', () => {
    // Keyed by page and heading: two pages may have a heading of the same name.
    const groups = new Map<string, { page: string; heading: string; blocks: Block[] }>();
    for (const page of PAGES) {
      for (const block of fencedBlocks(page.text).filter((b) => b.lang === 'ts')) {
        const key = `${page.name}\n${block.heading}`;
        const group = groups.get(key) ?? { page: page.name, heading: block.heading, blocks: [] };
        groups.set(key, { ...group, blocks: [...group.blocks, block] });
      }
    }
    const pagesWithBlocks = new Set([...groups.values()].map((group) => group.page));
    expect({ readme: pagesWithBlocks.has('README.md'), library: pagesWithBlocks.has('docs/library.md'), groups: groups.size >= 4 }).toEqual({ readme: true, library: true, groups: true });
    const dir = join(project, 'readme-blocks');
    mkdirSync(dir);
    const files = [...groups.values()].map((group, index) => {
      // ESM (.mts): a block may await at the top level, as in an ES module of the reader's own.
      const file = join(dir, `block-${index}.mts`);
      writeFileSync(file, group.blocks.map((block) => block.code).join(''));
      return { file, where: `"${group.heading}" (${group.page} lines ${group.blocks.map((block) => block.line).join(', ')})` };
    });
    // Node's types and the DOM's: the browser guide's block uses `document` and `location`.
    const args = ['--noEmit', '--strict', '--module', 'node16', '--target', 'es2022', '--lib', 'es2022,dom,dom.iterable,esnext.disposable', '--types', 'node', ...files.map((f) => f.file)];
    const result = spawnSync(process.execPath, [TSC, ...args], { cwd: project, encoding: 'utf8', timeout: TSC_TIMEOUT_MS });
    const named = files.reduce((text, f) => text.split(relative(project, f.file)).join(f.where).split(f.file).join(f.where), `${result.stdout}${result.stderr}`);
    expect({ status: result.status, errors: named }).toEqual({ status: 0, errors: '' });
  }, TSC_TIMEOUT_MS + 10_000);

  it('list in their synopses commands that each answer --help with the usage, naming the same flags', () => {
    const synopsis = blocksOfPage(CLI_PAGE).find((block) => block.heading === 'Synopsis' && block.lang === '');
    if (synopsis === undefined) throw new Error(`no synopsis block under "Synopsis" in ${CLI_PAGE}`);
    const short = blocks.find((block) => block.heading === 'The command line' && block.lang === '');
    if (short === undefined) throw new Error('no synopsis block under "The command line" in the README');
    const commandsOf = (code: string): string[] => [...new Set(code.split('\n').filter((line) => line.startsWith('exec-rx ')).map((line) => line.split(' ')[1] ?? ''))].filter((command) => /^[a-z]+$/.test(command));
    const commands = commandsOf(synopsis.code);
    expect(commands).toEqual(['run', 'ls', 'logs', 'cp', 'files', 'host']);
    expect(commandsOf(short.code)).toEqual(commands);
    const bin = join(project, 'node_modules', 'exec-rx', 'dist', 'src', 'cli', 'main.js');
    const usages = commands.map((command) => {
      const run = spawnSync(process.execPath, [bin, command, '--help'], { cwd: project, encoding: 'utf8', timeout: RUN_TIMEOUT_MS });
      return { command, status: run.status, first: run.stdout.split('\n')[0], stderr: run.stderr, stdout: run.stdout };
    });
    expect(usages.map(({ command, status, first, stderr }) => ({ command, status, first, stderr }))).toEqual(commands.map((command) => ({ command, status: 0, first: 'usage:', stderr: '' })));
    const flags = (text: string): string[] => [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])].sort();
    const usage = flags(usages[0]?.stdout ?? '');
    expect(flags(synopsis.code).filter((flag) => flag !== '--help')).toEqual(usage);
    expect(flags(short.code).filter((flag) => flag !== '--help' && !usage.includes(flag))).toEqual([]);
  }, RUN_TIMEOUT_MS * 4);

  it('link only to headings and files that exist', () => {
    const broken = PAGES.flatMap((page) => {
      const prose = page.text.replace(/```[\s\S]*?```/g, '');
      const links = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((link) => !/^[a-z]+:/.test(link));
      return links
        .filter((link) => {
          const [path = '', anchor] = link.split('#');
          const target = path === '' ? join(root, page.name) : join(root, dirname(page.name), path);
          // docs/dashboard.png is the dashboard's screenshot, made by the browser suite (spec/browser) when it runs.
          if (relative(root, target) === join('docs', 'dashboard.png')) return false;
          if (!existsSync(target)) return true;
          return anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).includes(anchor);
        })
        .map((link) => `${page.name}: ${link}`);
    });
    expect(broken).toEqual([]);
  });

  it('compute anchors the way GitHub does', () => {
    const anchors = anchorsOf('# A title\n## `exec-rx host`\n```\n# not a heading\n```\n## Tokens, roles and CORS\n### Repeat\n### Repeat\n## exec-rx/client: the API');
    expect([...anchors]).toEqual(['a-title', 'exec-rx-host', 'tokens-roles-and-cors', 'repeat', 'repeat-1', 'exec-rxclient-the-api']);
  });
});

describe('the README\'s first guide, verbatim', () => {
  let executor: ChildProcess | undefined;

  afterAll(async () => {
    await stopGroup(executor);
  });

  it('starts an executor with its command, compiles and runs its main.ts with its commands, and prints its output', async () => {
    const setup = firstOf(GUIDE_1, 'sh').code.split('\n');
    const executorLine = setup.find((line) => line.startsWith('npx codex exec-server'));
    if (executorLine === undefined) throw new Error('the guide starts no executor');
    const [main, ...more] = blocksOf(GUIDE_1, 'ts');
    if (main === undefined || more.length > 0) throw new Error('the guide has one TypeScript block, main.ts');
    const [, run] = blocksOf(GUIDE_1, 'sh');
    const [compileLine, runLine, ...others] = (run?.code ?? '').split('\n').filter((line) => line !== '');
    if (compileLine?.startsWith('npx tsc ') !== true || runLine === undefined || others.length > 0) throw new Error('the guide compiles with `npx tsc …` and runs with one line');
    const expected = firstOf(GUIDE_1, 'text').code;

    // The executor, as the guide starts it (from this repository's @openai/codex), in a process group of
    // its own so that its wrapper and the native binary stop together; a throwaway CODEX_HOME.
    const codexHome = join(work, 'codex-home');
    mkdirSync(codexHome);
    const started = spawn('sh', ['-c', `exec ${executorLine.replace(/\s+#.*$/, '')}`], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...npmEnv(), CODEX_HOME: codexHome } });
    executor = started;
    started.stderr?.resume();
    const url = await firstLine(started, /^ws:\/\/127\.0\.0\.1:\d+$/);

    writeFileSync(join(project, 'main.ts'), main.code);
    const compile = spawnSync(process.execPath, [TSC, ...compileLine.slice('npx tsc '.length).split(' ')], { cwd: project, encoding: 'utf8', timeout: TSC_TIMEOUT_MS });
    expect({ status: compile.status, out: `${compile.stdout}${compile.stderr}` }).toEqual({ status: 0, out: '' });

    const [assignment = '', ...command] = runLine.replace('ws://127.0.0.1:PORT', url).split(' ');
    const [name = '', value = ''] = assignment.split('=');
    expect({ name, command }).toEqual({ name: 'EXECUTOR_URL', command: ['node', 'main.js'] });
    const output = execFileSync(process.execPath, command.slice(1), { cwd: project, encoding: 'utf8', env: { ...npmEnv(), [name]: value }, timeout: RUN_TIMEOUT_MS });
    expect(output).toBe(expected);
  }, TSC_TIMEOUT_MS + RUN_TIMEOUT_MS * 2);
});

/** The first stdout line of `child` that matches; rejects when the child ends first. */
function firstLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) throw new Error('no stdout');
    const lines = createInterface({ input: child.stdout });
    const onExit = (code: number | null): void => {
      lines.close();
      reject(new Error(`the executor exited (${String(code)}) before printing its url`));
    };
    child.once('exit', onExit);
    lines.on('line', (line) => {
      if (!pattern.test(line)) return;
      child.off('exit', onExit);
      lines.close();
      child.stdout?.resume();
      resolve(line);
    });
  });
}

/** SIGTERM to the child's process group, then waits for the child; SIGKILL to what is left of the group. */
async function stopGroup(child: ChildProcess | undefined): Promise<void> {
  if (child?.pid === undefined) return;
  const group = -child.pid;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(group, 'SIGTERM');
  await exited;
  signalGroup(group, 'SIGKILL');
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(group, signal);
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

