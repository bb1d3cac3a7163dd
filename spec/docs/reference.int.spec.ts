/**
 * The reference pages say what the code does (issue 40), checked both ways against the BUILT command
 * line (`npm run build` first) and a real replica:
 * - every flag the command-line page names under `## exec-rx <command>` is one that `exec-rx <command>
 *   --help` prints, and every flag the help prints is on the page;
 * - every metric the docs name (`exec_rx_…`) is on `/metrics` of a replica (one with Redis and a replica
 *   key: the cluster's and the forwarder's metrics) or of a host alone with a data dir (its output logs'
 *   metrics, which a replica's shared log has not), and every metric there is in the docs;
 * - every error code of `src/errors/codes.ts` is in a table of the docs, and every code a table of the
 *   docs leads a row with is one of them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { within } from '../host/api/sse-reader';
import type { CliRun } from '../cli/cli-process';
import { killIfRunning, startCli } from '../cli/cli-process';
import { replicaCluster } from '../cluster/replicas';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const COMMANDS = ['run', 'ls', 'logs', 'cp', 'files', 'host'] as const;

/** The reference pages (docs/*.md) and the README, each with its text. */
const pages = (): { file: string; text: string }[] =>
  ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))].map((file) => ({
    file,
    text: readFileSync(join(ROOT, file), 'utf8'),
  }));

/** A page's text outside its fenced code blocks. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```$/gm, '');

/** The set of `--flag`s in `text`, sorted. */
const flagsIn = (text: string): string[] => [...new Set(text.match(/--[a-z][a-z0-9-]*/g) ?? [])].sort();

/** The text under heading `## title` of `text` (its code blocks, of other programs' flags too, left out by the caller) (to the next heading of level 1 or 2), or undefined. */
function section(text: string, title: string): string | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line === `## ${title}`);
  if (start < 0) return undefined;
  const end = lines.findIndex((line, index) => index > start && /^#{1,2} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/**
 * What the usage (every command's `--help` prints all of it) says of `command`: each block that starts
 * with a line `  exec-rx <command>`, to the next such line of another command.
 */
function usageOf(usage: string, command: string): string {
  let current = '';
  const mine: string[] = [];
  for (const line of usage.split('\n')) {
    current = /^ {2}exec-rx (\w+)/.exec(line)?.[1] ?? current;
    if (current === command) mine.push(line);
  }
  if (mine.length === 0) throw new Error(`the usage says nothing of exec-rx ${command}`);
  return mine.join('\n');
}

describe('the command-line reference', () => {
  beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  });

  it.each(COMMANDS)('names the flags `exec-rx %s --help` prints, and no other', (command) => {
    const found = pages().flatMap(({ file, text }) => {
      const under = section(prose(text), `exec-rx ${command}`);
      return under === undefined ? [] : [{ file, under }];
    });
    expect(found.map(({ file }) => file)).toHaveLength(1);
    const help = spawnSync(process.execPath, [CLI, command, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: help.status, stderr: help.stderr }).toEqual({ status: 0, stderr: '' });
    const documented = flagsIn(found[0]?.under ?? '').filter((flag) => flag !== '--help');
    expect(documented).toEqual(flagsIn(usageOf(help.stdout, command)).filter((flag) => flag !== '--help'));
  });
});

describe('the metrics reference', () => {
  const cluster = replicaCluster('reference-metrics', { keyId: 'AKIDREFERENCEDOCS', secret: 'reference-docs-secret-do-not-print', token: 'reference-docs-token-do-not-print' });
  let work: string | undefined;
  let alone: CliRun | undefined;
  afterAll(async () => {
    await killIfRunning(alone?.child);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  /** The metric names `/metrics` at `url` declares. */
  const declaredAt = async (url: string): Promise<string[]> => [...(await (await fetch(url)).text()).matchAll(/^# TYPE (exec_rx_\w+) /gm)].map((match) => match[1] ?? '');

  it("names every metric a replica's or a lone host's /metrics has, and none they lack", async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-reference-'));
    const keyFile = join(work, 'replica-key');
    writeFileSync(keyFile, `${'k'.repeat(40)}\n`, { mode: 0o600 });
    const replica = await cluster.start('a', ['--replica-key-file', keyFile]);
    const env = { ...process.env, XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: 'AKIDREFERENCEALONE', EXEC_RX_SECRET_ACCESS_KEY: 'reference-alone-secret-do-not-print' };
    alone = startCli(['host', '--port', '0', '--metrics-port', '0', '--data-dir', join(work, 'alone')], env);
    await within(alone.waitFor('stdout', '--environment-id <environment-id>\n'), 20_000, 'the lone host listening');
    const aloneMetrics = /^Prometheus metrics: (\S+)$/m.exec(alone.stdout.map((chunk) => chunk.text).join(''))?.[1];
    if (aloneMetrics === undefined) throw new Error('the lone host printed no metrics url');
    const served = [...new Set([...(await declaredAt(replica.metricsUrl)), ...(await declaredAt(aloneMetrics))])].sort();
    expect(served.length).toBeGreaterThan(20);
    const named = new Set(pages().flatMap(({ text }) => prose(text).match(/\bexec_rx_[a-z0-9_]*[a-z0-9]\b/g) ?? []));
    // A histogram's series (`_bucket`, `_sum`, `_count`) name the histogram.
    const base = (name: string): string => (served.includes(name) ? name : name.replace(/_(bucket|sum|count)$/, ''));
    expect([...new Set([...named].map(base))].filter((name) => !served.includes(name)).sort()).toEqual([]);
    expect(served.filter((name) => !named.has(name))).toEqual([]);
  });
});

describe('the error-code reference', () => {
  const declared = [...readFileSync(join(ROOT, 'src', 'errors', 'codes.ts'), 'utf8').matchAll(/^\s+\| '([A-Z_]+)';?$/gm)].map((match) => match[1] ?? '').sort();

  it('leads a row of a code table with every code of src/errors/codes.ts, and with no other', () => {
    expect(declared.length).toBeGreaterThan(50);
    const leading = pages().flatMap(({ text }) => codeTables(prose(text))).flat();
    expect(declared.filter((code) => !leading.includes(code))).toEqual([]);
    expect([...new Set(leading)].filter((code) => !declared.includes(code)).sort()).toEqual([]);
  });
});

/**
 * The tables of `text` whose header's first cell says `code`, each as the codes its rows lead with (the
 * first cell's backticked words: `| \`A\`, \`B\` | ... |` leads with two).
 */
function codeTables(text: string): string[][] {
  const tables: string[][] = [];
  let rows: string[] = [];
  for (const line of [...text.split('\n'), '']) {
    if (line.startsWith('|')) {
      rows.push(line);
      continue;
    }
    const [header, , ...body] = rows;
    if (header !== undefined && /^\|\s*[^|]*\bcodes?\b/i.test(header)) {
      tables.push(body.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] ?? '')));
    }
    rows = [];
  }
  return tables;
}
