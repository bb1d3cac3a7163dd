/**
 * `npm run bench`: exec-rx against a raw `ws` baseline doing the same protocol work. Writes
 * bench/results/latest.json and bench/results/latest.md and prints the table.
 *
 *   node dist/bench/run.js [--quick] [--runs=N] [--only=throughput,frames,start-exit,rtt,memory,scale,host,soak,disklog,restart,logs,ui,paths,stdio,replicas,files,preview]
 *
 * Every suite but the soak, disklog, restart, logs, ui, paths, stdio and replicas runs by default; those run with `--only=soak` / `--only=disklog` / `--only=restart` / `--only=logs` / `--only=ui` (ui: the dashboard in Debian's chromium) / `--only=paths` / `--only=stdio` / `--only=replicas` (issue 33: redis-server and haproxy must be installed) / `--only=files` (issue 41: a 1 GiB file through the library and the host) / `--only=preview` (issue 42: a server in the environment through the preview and the library's fetch).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchContext } from './lib/context';
import { stopEverything } from './lib/executors';
import { machine, markdown } from './lib/report';
import type { Row } from './lib/report';
import { disklogSuite } from './suites/disklog';
import { filesSuite } from './suites/files';
import { framesSuite } from './suites/frames';
import { hostSuite } from './suites/host';
import { logsSuite } from './suites/logs';
import { memorySuite } from './suites/memory';
import { pathsSuite } from './suites/paths';
import { previewSuite } from './suites/preview';
import { rttSuite } from './suites/rtt';
import { scaleSuite } from './suites/scale';
import { replicasSuite } from './suites/replicas';
import { restartSuite } from './suites/restart';
import { soakSuite } from './suites/soak';
import { startExitSuite } from './suites/start-exit';
import { stdioSuite } from './suites/stdio';
import { throughputSuite } from './suites/throughput';
import { uiSuite } from './suites/ui';

const SUITES: ReadonlyArray<readonly [string, (context: BenchContext) => Promise<Row[]>]> = [
  ['throughput', throughputSuite],
  ['frames', framesSuite],
  ['start-exit', startExitSuite],
  ['rtt', rttSuite],
  ['memory', memorySuite],
  ['scale', scaleSuite],
  ['host', hostSuite],
  ['soak', soakSuite],
  ['disklog', disklogSuite],
  ['restart', restartSuite],
  ['logs', logsSuite],
  ['ui', uiSuite],
  ['paths', pathsSuite],
  ['stdio', stdioSuite],
  ['replicas', replicasSuite],
  ['files', filesSuite],
  ['preview', previewSuite],
];

/** Suites that run only when `--only` names them. */
const ON_REQUEST = new Set(['soak', 'disklog', 'restart', 'logs', 'ui', 'paths', 'stdio', 'replicas', 'files', 'preview']);

interface Args {
  readonly quick: boolean;
  readonly runs: number;
  readonly only: readonly string[] | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const quick = argv.includes('--quick');
  const runsArg = argv.find((a) => a.startsWith('--runs='));
  const onlyArg = argv.find((a) => a.startsWith('--only='));
  const runs = runsArg === undefined ? (quick ? 3 : 9) : Number(runsArg.slice('--runs='.length));
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`bad --runs: ${String(runsArg)}`);
  const only = onlyArg?.slice('--only='.length).split(',').filter((s) => s !== '');
  const unknown = only?.filter((name) => !SUITES.some(([suite]) => suite === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown suite(s): ${unknown.join(', ')}; known: ${SUITES.map(([s]) => s).join(', ')}`);
  return { quick, runs, only };
}

/** A real GC between turns: expose it at run time (`npm run bench` passes no node flags). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  return typeof gc === 'function' ? (gc as () => void) : () => undefined;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const gc = exposeGc();
  const started = performance.now();
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const context: BenchContext = {
    quick: args.quick,
    runs: args.runs,
    log,
    settle: async () => {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 20));
    },
  };
  const figures: Row[] = [];
  const failures: { suite: string; error: string }[] = [];
  const loads: { suite: string; before: number; after: number; seconds: number }[] = [];
  for (const [name, suite] of SUITES) {
    if (args.only === undefined ? ON_REQUEST.has(name) : !args.only.includes(name)) continue;
    const t0 = performance.now();
    const before = loadavg()[0] ?? Number.NaN;
    log(`== ${name} (load average ${before.toFixed(2)})`);
    try {
      figures.push(...(await suite(context)));
    } catch (error: unknown) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ suite: name, error: message });
      log(`!! ${name} failed: ${message}`);
    } finally {
      await stopEverything();
    }
    const took = (performance.now() - t0) / 1000;
    loads.push({ suite: name, before, after: loadavg()[0] ?? Number.NaN, seconds: took });
    log(`   ${name} took ${took.toFixed(1)} s`);
  }
  const seconds = (performance.now() - started) / 1000;
  const m = machine();
  const executor = 'codex exec-server 0.171.0';
  const table = markdown(figures, { machine: m, runs: args.runs, quick: args.quick, seconds, executor, loads });
  const failed = failures.map((f) => `\n**Suite ${f.suite} failed:** ${f.error.split('\n')[0] ?? ''}\n`).join('');
  const dir = join(__dirname, '..', '..', 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const result = { date: new Date().toISOString(), machine: m, executor, quick: args.quick, runs: args.runs, seconds, loads, figures, failures };
  // A partial run (`--only`) does not overwrite the whole table: it gets its own files.
  const name = args.only === undefined ? 'latest' : `latest-${args.only.join('+')}`;
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), table + failed);
  process.stdout.write(`\n${table}${failed}\nwritten: ${join(dir, `${name}.json`)}, ${join(dir, `${name}.md`)}\n`);
  if (failures.length > 0) process.exitCode = 1;
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: stopping executors\n`);
    void stopEverything().finally(() => process.exit(130));
  });
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => stopEverything());
